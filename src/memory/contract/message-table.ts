import type { Message, StoredMessage } from '../../message.ts';

/**
 * The engine under a store: where records live, nothing more. A table neither validates nor
 * numbers; its one writer per conversation (a `SerialLog` lane outside a runtime, the
 * conversation actor inside one) hands it records whose ids continue that conversation's
 * numbering, one batch at a time.
 *
 * - `write` stores the whole batch in one atomic, durable step (LMDB: one transaction, then
 *   flushed) or stores nothing and rejects with a `StorageError`; it resolves to the records as
 *   stored.
 * - Reads see every write that has resolved (read-your-writes).
 * - `range`/`tail`/`systemMessages`/`lastId` cost what they return, not the conversation's length.
 */
export interface MessageTable {
  readonly kind: 'memory' | 'lmdb' | 'custom';
  lastId(conversationId: string): Promise<number>;
  messages(conversationId: string): Promise<Message[]>;
  /** Ids in `[from, to]`, ascending, at most `limit`. */
  range(conversationId: string, from: number, to: number, limit: number): Promise<StoredMessage[]>;
  /** The last `n`, ascending. */
  tail(conversationId: string, n: number): Promise<StoredMessage[]>;
  /** The system messages, ascending, from an index written with the messages (see `MessageLog`). */
  systemMessages(conversationId: string): Promise<StoredMessage[]>;
  /** Takes ownership of `records` (the writer keeps no reference) and may return them. */
  write(conversationId: string, records: StoredMessage[]): Promise<StoredMessage[]>;
  clear(conversationId: string): Promise<void>;
}
