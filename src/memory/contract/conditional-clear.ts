import { InvalidInputError } from '../../errors.ts';
import type { MessageLog } from './message-log.ts';

/**
 * A compare-and-clear beside a MessageLog's `clear`: clear the conversation only if its last id
 * is still `lastId`, decided in the conversation's single writer after every write queued before
 * it, so no write can land between the check and the clear. Resolves with whether it cleared.
 * The retention sweep's clear (retention-sweep.ts): a write that lands after the sweep read a
 * conversation keeps it. `runtime.memory` and the standalone stores (LMDB, in memory) have it;
 * PostgreSQL's store has not: there the sweep clears in a transaction that locks the
 * conversation's counter row (src/retention/postgres-retention.ts).
 */
export interface ConditionalClear {
  /**
   * Clears the conversation if its last id is still `lastId` (0: empty); resolves with whether it
   * cleared.
   *
   * @throws `InvalidInputError` `invalid_option` for a `lastId` that is not a non-negative integer.
   */
  clearIfLastId(conversationId: string, lastId: number): Promise<boolean>;
}

export function hasConditionalClear(log: MessageLog): log is MessageLog & ConditionalClear {
  return typeof (log as Partial<ConditionalClear>).clearIfLastId === 'function';
}

/** `lastId` as given, if it is an id (0 for an empty conversation); else `InvalidInputError`. */
export function validateLastId(lastId: unknown): number {
  if (typeof lastId === 'number' && Number.isSafeInteger(lastId) && lastId >= 0) return lastId;
  throw new InvalidInputError('invalid_option', `lastId must be a non-negative integer, got ${String(lastId)}`, { option: 'lastId' });
}
