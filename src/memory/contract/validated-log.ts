import type { Message, StoredMessage } from '../../message.ts';
import { InvalidInputError } from '../../errors.ts';
import { validateAppendOptions } from './idempotency.ts';
import type { AppendOptions, MessageLog, NewEntry, RangeQuery } from './message-log.ts';
import {
  validateConversationId,
  validateEntries,
  validateMessages,
  validateRangeQuery,
  validateTailCount,
  type CheckedEntry,
  type CheckedRange,
} from './validate-input.ts';

/**
 * The public face every backend shares: each `MessageLog` method checks its arguments
 * (`InvalidInputError`, nothing touched), then asks the backend whether it still takes work
 * (`checkOpen`, e.g. `store_closed`), then delegates with checked values. A backend writes only
 * what `CheckedLog` receives, so no unchecked message can reach storage. An empty batch is
 * answered here and reaches no backend.
 */
export interface CheckedLog {
  /** Throws when the log takes no more work (e.g. `store_closed`). */
  checkOpen(): void;
  get(conversationId: string): Promise<Message[]>;
  /** A non-empty batch, resolved once durable; exactly once per `options.idempotencyKey` when
   * one is given; `options` checked (`{}` when none). */
  append(conversationId: string, entries: CheckedEntry[], options: AppendOptions): Promise<StoredMessage[]>;
  /** `append` whose promise resolves with nothing (`add`'s): made so, not a `.then` layer on
   * `append` (a promise per append on the hot path). */
  add(conversationId: string, entries: CheckedEntry[], options: AppendOptions): Promise<void>;
  /** Checked ids, distinct; `at` a positive integer. */
  fork(sourceId: string, at: number, newId: string): Promise<void>;
  clear(conversationId: string): Promise<void>;
  range(conversationId: string, query: CheckedRange): Promise<StoredMessage[]>;
  tail(conversationId: string, n: number): Promise<StoredMessage[]>;
  systemMessages(conversationId: string): Promise<StoredMessage[]>;
  lastId(conversationId: string): Promise<number>;
}

export function validatedLog(backend: CheckedLog): MessageLog {
  return {
    async get(conversationId: string): Promise<Message[]> {
      const c = validateConversationId(conversationId);
      backend.checkOpen();
      return backend.get(c);
    },
    // The write methods are not `async`: on the hot path that saves a promise and a frame per
    // call (bench/append-cpu.ts); a throw still reaches the caller as a rejection.
    add(conversationId: string, messages: readonly Message[], options?: AppendOptions): Promise<void> {
      try {
        const c = validateConversationId(conversationId);
        const entries = validateMessages(messages);
        const checked = validateAppendOptions(options);
        backend.checkOpen();
        return entries.length > 0 ? backend.add(c, entries, checked) : Promise.resolve();
      } catch (error) {
        return Promise.reject(error);
      }
    },
    append(conversationId: string, newEntries: readonly NewEntry[], options?: AppendOptions): Promise<StoredMessage[]> {
      try {
        const c = validateConversationId(conversationId);
        const entries = validateEntries(newEntries);
        const checked = validateAppendOptions(options);
        backend.checkOpen();
        return entries.length === 0 ? Promise.resolve([]) : backend.append(c, entries, checked);
      } catch (error) {
        return Promise.reject(error);
      }
    },
    async fork(sourceId: string, atMessageId: number, newId: string): Promise<void> {
      const source = validateConversationId(sourceId);
      const target = validateConversationId(newId);
      if (typeof atMessageId !== 'number' || !Number.isSafeInteger(atMessageId) || atMessageId < 1) {
        throw new InvalidInputError('invalid_option', 'atMessageId must be a positive integer', { option: 'atMessageId' });
      }
      if (source === target) throw new InvalidInputError('invalid_option', 'a conversation cannot be forked into itself', { option: 'newId' });
      backend.checkOpen();
      return backend.fork(source, atMessageId, target);
    },
    async clear(conversationId: string): Promise<void> {
      const c = validateConversationId(conversationId);
      backend.checkOpen();
      return backend.clear(c);
    },
    async range(conversationId: string, query?: RangeQuery): Promise<StoredMessage[]> {
      const c = validateConversationId(conversationId);
      const q = validateRangeQuery(query);
      backend.checkOpen();
      return backend.range(c, q);
    },
    async tail(conversationId: string, n: number): Promise<StoredMessage[]> {
      const c = validateConversationId(conversationId);
      const count = validateTailCount(n);
      backend.checkOpen();
      return backend.tail(c, count);
    },
    async systemMessages(conversationId: string): Promise<StoredMessage[]> {
      const c = validateConversationId(conversationId);
      backend.checkOpen();
      return backend.systemMessages(c);
    },
    async lastId(conversationId: string): Promise<number> {
      const c = validateConversationId(conversationId);
      backend.checkOpen();
      return backend.lastId(c);
    },
  };
}
