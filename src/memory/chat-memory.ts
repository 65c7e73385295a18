import type { Message, Meta, StoredMessage } from './message.ts';

/**
 * beamai's ChatMemory store behaviour. Storage format is private to each backend.
 *
 * - `get` returns the conversation's messages in chronological order; `[]` when unknown.
 * - `add` appends; an empty list is harmless. It resolves only once the write is durable
 *   (for a persistent backend) and visible to every later `get` in the process.
 *   A bad message rejects the whole batch with an `InvalidInputError`; nothing is stored.
 * - `clear` forgets that conversation only; its numbering restarts at 1.
 */
export interface ChatMemory {
  get(conversationId: string): Promise<Message[]>;
  add(conversationId: string, messages: readonly Message[]): Promise<void>;
  clear(conversationId: string): Promise<void>;
}

/** One message to append, with optional metadata stored beside it. */
export interface NewEntry {
  message: Message;
  meta?: Meta;
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
  append(conversationId: string, entries: readonly NewEntry[]): Promise<StoredMessage[]>;
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
