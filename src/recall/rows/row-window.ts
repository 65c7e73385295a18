import { parseMessageId } from './legacy-message-id.ts';

/**
 * The demo's window around an anchor (reference §3.4): `before`/`after` count ROWS, not ids;
 * negatives count as 0; the edges clip silently; an invalid or unknown anchor gives `[]`.
 * Anchors are parsed like the demo's ids, so `"3"` works as 3.
 */
export interface WindowSpec {
  anchor: number;
  before: number;
  after: number;
}

/** `null` when the anchor is not a valid id (the window is then empty). */
export function windowSpec(messageId: unknown, before: unknown, after: unknown): WindowSpec | null {
  const anchor = parseMessageId(messageId);
  if (anchor === null) return null;
  return { anchor, before: nonNegative(before), after: nonNegative(after) };
}

function nonNegative(value: unknown): number {
  const n = typeof value === 'number' ? value : typeof value === 'string' ? Number(value.trim()) : 0;
  return Number.isFinite(n) && n > 0 ? Math.trunc(n) : 0;
}

/** The window over rows already in memory, anchored at the FIRST row carrying the id. */
export function sliceWindow<T extends { message_id: number }>(rows: readonly T[], spec: WindowSpec): T[] {
  const i = rows.findIndex((r) => r.message_id === spec.anchor);
  if (i < 0) return [];
  return rows.slice(Math.max(0, i - spec.before), Math.min(rows.length, i + spec.after + 1));
}
