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
