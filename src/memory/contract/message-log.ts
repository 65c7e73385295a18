import type { Message, Meta, StoredMessage } from '../../message.ts';
import type { ChatMemory } from './chat-memory.ts';
import type { AppendOptions } from './idempotency.ts';

export type { AppendOptions } from './idempotency.ts';

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
 * tail reads). Costs: `tail` and `range` are range scans whose cost does not grow with the
 * conversation's length.
 */
export interface MessageLog extends ChatMemory {
  /** `add`, exactly once per `idempotencyKey` (see idempotency.ts). */
  add(conversationId: string, messages: readonly Message[], options?: AppendOptions): Promise<void>;
  /** Appends and returns the stored records with their assigned ids. With an
   * `idempotencyKey` already stored for this conversation, returns the records it stored and
   * stores nothing (see idempotency.ts). */
  append(conversationId: string, entries: readonly NewEntry[], options?: AppendOptions): Promise<StoredMessage[]>;
  /** Makes `newId` (empty) a fork of `sourceId` at `atMessageId`: it sees the source's
   * records up to and including that id, then its own, numbered on from there. The prefix is
   * shared, not copied (see fork.ts; `ForkError` when `newId` is taken or the id is missing). */
  fork(sourceId: string, atMessageId: number, newId: string): Promise<void>;
  /** Records with ids in `[from, to]`, ascending. */
  range(conversationId: string, query?: RangeQuery): Promise<StoredMessage[]>;
  /** The last `n` records, ascending. */
  tail(conversationId: string, n: number): Promise<StoredMessage[]>;
  /** The highest id in use, 0 for an empty or unknown conversation. */
  lastId(conversationId: string): Promise<number>;
}
