/**
 * The opaque `cursor` / `next_cursor` strings of the paged routes: base64url of a small JSON
 * array whose first element names the list (`m`: a session's messages, `t`: the tool-call
 * timeline), so a cursor of one list is refused by another. A client must pass them back as
 * given; anything else is 400 `invalid_cursor`. (The conversation list's cursors are recall's own.)
 */
import { HttpError } from './server-errors.ts';

export type CursorKind = 'm' | 't';

export function encodeCursor(kind: CursorKind, position: readonly (string | number)[]): string {
  return Buffer.from(JSON.stringify([kind, ...position])).toString('base64url');
}

/** The position a cursor of `kind` holds, checked against `shape` (each element's type). */
export function decodeCursor<const S extends readonly ('string' | 'number')[]>(
  kind: CursorKind,
  cursor: string,
  shape: S,
): { [K in keyof S]: S[K] extends 'string' ? string : number } {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    value = undefined;
  }
  const ok =
    Array.isArray(value) &&
    value.length === shape.length + 1 &&
    value[0] === kind &&
    shape.every((type, i) => (type === 'string' ? typeof value[i + 1] === 'string' : Number.isSafeInteger(value[i + 1])));
  if (!ok) throw new HttpError(400, 'cursor is not one this list gave out: pass next_cursor back as it came', 'invalid_cursor');
  return (value as unknown[]).slice(1) as { [K in keyof S]: S[K] extends 'string' ? string : number };
}
