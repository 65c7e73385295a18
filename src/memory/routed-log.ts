import type { MessageLog, NewEntry, RangeQuery } from './chat-memory.ts';
import type { ConversationRouter } from './conversation-router.ts';
import type { Message, StoredMessage } from './message.ts';
import type { StorageSlot } from './storage-slot.ts';
import {
  validateConversationId,
  validateEntries,
  validateMessages,
  validateRangeQuery,
  validateTailCount,
} from './validate-input.ts';

/**
 * `runtime.memory`: the runtime's store as a `MessageLog`. Arguments are validated here, at
 * the boundary. Writes (`add`, `append`, `clear`) go through the conversation's actor, via the
 * router; they resolve once committed and flushed. Reads go straight to the store's table
 * (waiting only while the store itself restarts), and see every write that has resolved.
 */
export function createRoutedLog(router: ConversationRouter, slot: StorageSlot): MessageLog {
  const table = () => slot.current() ?? slot.whenTable();

  return {
    async get(conversationId: string): Promise<Message[]> {
      const c = validateConversationId(conversationId);
      return (await table()).messages(c);
    },
    async add(conversationId: string, messages: readonly Message[]): Promise<void> {
      const c = validateConversationId(conversationId);
      const entries = validateMessages(messages);
      if (entries.length === 0) return;
      await router.append(c, entries);
    },
    async append(conversationId: string, newEntries: readonly NewEntry[]): Promise<StoredMessage[]> {
      const c = validateConversationId(conversationId);
      const entries = validateEntries(newEntries);
      if (entries.length === 0) return [];
      return router.append(c, entries);
    },
    async clear(conversationId: string): Promise<void> {
      const c = validateConversationId(conversationId);
      return router.clear(c);
    },
    async range(conversationId: string, query?: RangeQuery): Promise<StoredMessage[]> {
      const c = validateConversationId(conversationId);
      const q = validateRangeQuery(query);
      return (await table()).range(c, q.from, q.to, q.limit);
    },
    async tail(conversationId: string, n: number): Promise<StoredMessage[]> {
      const c = validateConversationId(conversationId);
      const count = validateTailCount(n);
      return (await table()).tail(c, count);
    },
    async systemMessages(conversationId: string): Promise<StoredMessage[]> {
      const c = validateConversationId(conversationId);
      return (await table()).systemMessages(c);
    },
    async lastId(conversationId: string): Promise<number> {
      const c = validateConversationId(conversationId);
      return (await table()).lastId(c);
    },
  };
}
