import type { Message, StoredMessage } from '../../message.ts';
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
  /** A non-empty batch, resolved once durable. */
  append(conversationId: string, entries: CheckedEntry[], options?: AppendOptions): Promise<StoredMessage[]>;
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
    async add(conversationId: string, messages: readonly Message[]): Promise<void> {
      const c = validateConversationId(conversationId);
      const entries = validateMessages(messages);
      backend.checkOpen();
      if (entries.length > 0) await backend.append(c, entries);
    },
    async append(conversationId: string, newEntries: readonly NewEntry[], options?: AppendOptions): Promise<StoredMessage[]> {
      const c = validateConversationId(conversationId);
      const entries = validateEntries(newEntries);
      backend.checkOpen();
      return entries.length === 0 ? [] : backend.append(c, entries, options);
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
