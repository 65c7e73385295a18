import { randomUUID } from 'node:crypto';
import { InvalidInputError } from '../errors.ts';

/**
 * User and session ids name storage keys and composite conversation ids
 * (`session/{userId}/{sessionId}`), so they are restricted to `[A-Za-z0-9_-]{1,64}`: no `/`,
 * no `..`, no NUL, nothing that could make two different pairs collide or escape a folder on
 * export. A bad id is refused with `InvalidInputError('invalid_id')` before anything is read
 * or written. Surrounding whitespace is not trimmed: `' a'` is refused, not silently renamed.
 */
const ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

export type IdKind = 'user_id' | 'session_id';

export function assertId(kind: IdKind, value: unknown): string {
  if (typeof value === 'string' && ID_PATTERN.test(value)) return value;
  const shown = typeof value === 'string' ? JSON.stringify(value.slice(0, 80)) : typeof value;
  throw new InvalidInputError('invalid_id', `${kind} must match [A-Za-z0-9_-]{1,64}, got ${shown}`, {
    field: kind,
  });
}

export const assertUserId = (value: unknown): string => assertId('user_id', value);
export const assertSessionId = (value: unknown): string => assertId('session_id', value);

/** A fresh session id as the demo makes them: 12 lowercase hex digits. */
export function newSessionId(): string {
  return randomUUID().replace(/-/g, '').slice(0, 12);
}

/** The MessageLog conversation that holds one session's transcript. */
export function sessionConversationId(userId: string, sessionId: string): string {
  return `session/${userId}/${sessionId}`;
}
