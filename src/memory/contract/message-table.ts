import type { Message, StoredMessage } from '../../message.ts';
import type { KeyRecord } from './idempotency.ts';

/**
 * The engine under a store: where records live, nothing more. A table neither validates nor
 * numbers; its one writer per conversation (a `SerialLog` lane outside a runtime, the
 * conversation actor inside one) hands it records whose ids continue that conversation's
 * numbering, one batch at a time.
 *
 * - `write` stores the whole batch in one atomic, durable step (LMDB: one transaction, then
 *   flushed) and tells `to.resolve` the records as stored, or stores nothing and tells
 *   `to.reject` a `StorageError`, never before `write` has returned (its writer announces the
 *   batch in between); a failure before anything was issued may also be thrown.
 *   A callback, not a promise: it is every append's path, and each promise layer there cost
 *   CPU and garbage per append (docs/performance-history.md, 2026-12-08).
 * - Reads see every write that has resolved (read-your-writes).
 * - `range`/`tail`/`systemMessages`/`lastId` cost what they return, not the conversation's length.
 */
/** Where a table's `write` reports, exactly once. */
export interface WriteOutcome {
  resolve(records: StoredMessage[]): void;
  reject(error: unknown): void;
}

export interface MessageTable {
  readonly kind: 'memory' | 'lmdb' | 'custom';
  lastId(conversationId: string): Promise<number>;
  /** The same, synchronously, where the table reads synchronously: a conversation actor
   * hydrates with it in its start, so its first write is issued in the turn of the call that
   * made it. Optional. */
  lastIdNow?(conversationId: string): number;
  messages(conversationId: string): Promise<Message[]>;
  /** Ids in `[from, to]`, ascending, at most `limit`. */
  range(conversationId: string, from: number, to: number, limit: number): Promise<StoredMessage[]>;
  /** The last `n`, ascending. */
  tail(conversationId: string, n: number): Promise<StoredMessage[]>;
  /** The system messages, ascending, from an index written with the messages (see `MessageLog`).
   * A fork's are its source's up to the fork point (stitched, like `range`), then its own. */
  systemMessages(conversationId: string): Promise<StoredMessage[]>;
  /** Takes ownership of `records` (the writer keeps no reference) and may hand them to `to`.
   * `keys` (idempotency keys of batches inside `records`) are stored in the same atomic step.
   * The writer looked each of them up just before (`keyOf` or `findKeys`: absent or expired),
   * so a table checks none of them. A `custom` table is given at most one key, covering all of
   * `records`, and dedupes by it itself. `sharedCommit`: the caller issues other writes to the
   * same environment in this event turn that must commit with this batch (`onNumbered`), so a
   * table with a write-ahead journal (LMDB) commits it directly instead. */
  write(conversationId: string, records: StoredMessage[], to: WriteOutcome, keys?: readonly KeyRecord[], sharedCommit?: boolean): void;
  /** The stored keys among `keys` (expired ones too: the writer judges the window). A
   * `custom` table returns none: the log below it keeps its own keys. */
  findKeys(conversationId: string, keys: readonly string[]): Promise<Map<string, KeyRecord>>;
  /** The same for one key, synchronously, where the table reads synchronously (the hot path
   * of a keyed append: no promise, no map). Optional. `lastId` and `now` are the writer's: its
   * last id of the conversation and its clock. A table that keeps keys in memory (LMDB:
   * key-index.ts) learns from them whether what it holds is current and how far back to read. */
  keyOf?(conversationId: string, key: string, lastId: number, now: number): KeyRecord | undefined;
  /** Clears the conversation; forks that reference it get their prefix materialized first. */
  clear(conversationId: string): Promise<void>;
  /** Makes the empty `newId` a fork of `source` at `at`, atomically checked against the
   * source's last id (`ForkError`). Resolves with `newId`'s last id (`at`). */
  fork(newId: string, source: string, at: number): Promise<number>;
}
