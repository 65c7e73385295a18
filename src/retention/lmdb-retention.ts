import type { Database, Key, RootDatabase } from 'lmdb';
import type { ConditionalClear } from '../memory/contract/conditional-clear.ts';
import type { MessageLog } from '../memory/contract/message-log.ts';
import { MESSAGES_DB } from '../memory/lmdb/lmdb-table.ts';
import { summaryConversationId } from '../provider/summary-record.ts';
import { DB_NAMES, HIGH } from '../recall/storage/lmdb/recall-dbs.ts';
import type { RetentionStorage } from './retention-sweep.ts';

/**
 * The retention sweep's storage (retention-sweep.ts) on LMDB: conversations by a seek in the
 * `messages` db (keys `[conversationId, messageId]`), sessions by the sessions index
 * `[user, session]`, and the conditional clear through the runtime's memory (the conversation's
 * actor decides it after every write queued before it). The environment is read per call: a
 * compaction may have reopened it since.
 */
export function lmdbRetentionStorage(root: () => RootDatabase, memory: MessageLog & ConditionalClear): RetentionStorage {
  return {
    async conversationAfter(after) {
      const messages = root().openDB<unknown, Key>(MESSAGES_DB, {});
      for (const key of messages.getKeys(after === undefined ? { limit: 1 } : { start: [after, HIGH], limit: 1 })) {
        if (Array.isArray(key) && typeof key[0] === 'string') return key[0];
      }
      return undefined;
    },
    async last(c) {
      const [record] = await memory.tail(c, 1);
      return record === undefined ? undefined : { id: record.message_id, ts: record.ts };
    },
    async clearIfLastId(c, lastId) {
      if (!(await memory.clearIfLastId(c, lastId))) return false;
      await memory.clear(summaryConversationId(c));
      return true;
    },
    async sessionsAfter(after, limit) {
      const sessions = root().openDB<unknown, [string, string]>(DB_NAMES.sessions, { encoding: 'json' });
      return [...sessions.getKeys(after === undefined ? { limit } : { start: [after[0], after[1], HIGH], limit })];
    },
  };
}
