import type { Message, Meta, StoredMessage } from '../../message.ts';
import type { ChatMemory } from './chat-memory.ts';
import type { TraceContext } from '../../telemetry/tracing.ts';

/*
 * `MessageLog`: ChatMemory with ids, the face the layers above the store use (recall anchors,
 * windows, tail reads). Every backend implements it through `validatedLog`.
 */

/** One message to append, with optional metadata stored beside it. */
export interface NewEntry {
  /** The message to store. */
  message: Message;
  /** Metadata stored beside it (a JSON object), read back on its `StoredMessage`. */
  meta?: Meta;
}

/** Options of `MessageLog.append` and `add` (the one declaration; idempotency.ts re-exports it). */
export interface AppendOptions {
  /**
   * Stores the batch exactly once per conversation and key: 1-200 characters, no NUL,
   * well-formed Unicode (see idempotency.ts). Default: none (every append stores).
   */
  idempotencyKey?: string;
  /**
   * Called once with the batch's records as numbered, synchronously in the event turn in which
   * the store issues their write (after issuing it), before that write commits. An LMDB store
   * commits every write issued in one event turn in one transaction (lmdb-js's event-turn
   * batching), so LMDB writes issued here to the same environment commit, and are flushed,
   * together with the records: one commit, and all or nothing. Other stores call it the same
   * way, but what it writes commits on its own. A throw from it is ignored (the append goes
   * on); it is not called for a batch whose write could not be issued, nor for a keyed batch
   * answered from its stored key (a retry: nothing new is stored, the hook's writes were made
   * with the first attempt).
   */
  onNumbered?(records: readonly StoredMessage[]): void;
  /** The OpenTelemetry context the append's span is a child of (a chat turn's). Default: the active one. */
  traceContext?: TraceContext | undefined;
}

/** Which ids to read: `from`/`to` inclusive, then at most `limit` rows. */
export interface RangeQuery {
  /** The first id. Default 1. */
  from?: number;
  /** The last id. Default: the conversation's last. */
  to?: number;
  /** At most this many records (the first ones). Default: all. */
  limit?: number;
}

/**
 * The id-aware face of a store, for the layers above ChatMemory (recall anchors, windows,
 * tail reads). Costs: `tail`, `range` and `systemMessages` are range scans whose cost does not
 * grow with the conversation's length.
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
  /**
   * The conversation's system messages, ascending, read from an index kept apart from the
   * history (written in the same transaction as the messages), so the cost is what it
   * returns, not the conversation's length. A conversation without one costs nothing extra.
   */
  systemMessages(conversationId: string): Promise<StoredMessage[]>;
  /** The highest id in use, 0 for an empty or unknown conversation. */
  lastId(conversationId: string): Promise<number>;
}
