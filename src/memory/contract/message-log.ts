import type { Message, Meta, StoredMessage } from '../../message.ts';
import type { ChatMemory } from './chat-memory.ts';

/*
 * `MessageLog`: ChatMemory with ids, the face the layers above the store use (recall anchors,
 * windows, tail reads). Every backend implements it through `validatedLog`.
 */

/** One message to append, with optional metadata stored beside it. */
export interface NewEntry {
  message: Message;
  meta?: Meta;
}

/** Options of `MessageLog.append`. */
export interface AppendOptions {
  /**
   * Called once with the batch's records as numbered, synchronously in the event turn in which
   * the store issues their write (after issuing it), before that write commits. An LMDB store
   * commits every write issued in one event turn in one transaction (lmdb-js's event-turn
   * batching), so LMDB writes issued here to the same environment commit, and are flushed,
   * together with the records: one commit, and all or nothing. Other stores call it the same
   * way, but what it writes commits on its own. A throw from it is ignored (the append goes
   * on); it is not called for a batch whose write could not be issued.
   */
  onNumbered?(records: readonly StoredMessage[]): void;
}

/** Which ids to read: `from`/`to` inclusive, then at most `limit` rows. */
export interface RangeQuery {
  from?: number;
  to?: number;
  limit?: number;
}

/**
 * The id-aware face of a store, for the layers above ChatMemory (recall anchors, windows,
 * tail reads). Costs: `tail`, `range` and `systemMessages` are range scans whose cost does not
 * grow with the conversation's length.
 */
export interface MessageLog extends ChatMemory {
  /** Appends and returns the stored records with their assigned ids. */
  append(conversationId: string, entries: readonly NewEntry[], options?: AppendOptions): Promise<StoredMessage[]>;
  /** Records with ids in `[from, to]`, ascending. */
  range(conversationId: string, query?: RangeQuery): Promise<StoredMessage[]>;
  /** The last `n` records, ascending. */
  tail(conversationId: string, n: number): Promise<StoredMessage[]>;
  /**
   * The conversation's system messages, ascending, read from an index kept apart from the
   * history (written in the same transaction as the messages), so the cost is what it
   * returns, not the conversation's length. A conversation without one costs nothing extra.
   */
  systemMessages(conversationId: string): Promise<StoredMessage[]>;
  /** The highest id in use, 0 for an empty or unknown conversation. */
  lastId(conversationId: string): Promise<number>;
}
