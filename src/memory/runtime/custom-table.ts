import type { MessageLog } from '../contract/message-log.ts';
import type { StoredMessage } from '../../message.ts';
import type { KeyRecord } from '../contract/idempotency.ts';
import type { MessageTable } from '../contract/message-table.ts';
import { StorageError } from '../contract/memory-errors.ts';
import { ForkError } from '../contract/fork.ts';

/**
 * A user's own `MessageLog` (e.g. PostgreSQL) as the table under a runtime. The runtime's
 * conversation actor still serializes each conversation's writes within this process, but
 * the log numbers them: it may be shared by other processes (PostgreSQL assigns ids in the
 * append's transaction), so the ids it returns are the truth and the actor adopts them.
 *
 * A failure of the log is reported as `storage_failed` (with the original as `cause`); the
 * actor then re-reads the last id, so a batch that was stored after all is not numbered twice.
 */
export function createCustomTable(log: MessageLog): MessageTable {
  const append = async (c: string, records: StoredMessage[], keys: readonly KeyRecord[] | undefined): Promise<StoredMessage[]> => {
    let stored;
    const key = keys?.[0]?.key;
    try {
      const entries = records.map((r) => ({ message: r.message, meta: r.meta }));
      // One key covers the whole batch here (write-queue.ts writes keyed ops one by one); the log keeps it.
      stored = await (key === undefined ? log.append(c, entries) : log.append(c, entries, { idempotencyKey: key }));
    } catch (error) {
      throw error instanceof StorageError ? error : new StorageError('storage_failed', `custom store failed to append to ${c}`, {}, { cause: error });
    }
    return stored;
  };
  return {
    kind: 'custom',
    lastId: (c) => log.lastId(c),
    messages: (c) => log.get(c),
    range: (c, from, to, limit) => log.range(c, { from, to, limit }),
    tail: (c, n) => log.tail(c, n),
    systemMessages: (c) => log.systemMessages(c),
    write: (c, records, to, keys) => {
      append(c, records, keys).then(
        (stored) => to.resolve(stored),
        (error: unknown) => to.reject(error),
      );
    },
    findKeys: async () => new Map(),
    fork: async (newId, source, at) => {
      try {
        await log.fork(source, at, newId);
      } catch (error) {
        throw error instanceof StorageError || error instanceof ForkError ? error : new StorageError('storage_failed', `custom store failed to fork ${newId}`, {}, { cause: error });
      }
      return at;
    },
    clear: async (c) => {
      try {
        await log.clear(c);
      } catch (error) {
        throw error instanceof StorageError ? error : new StorageError('storage_failed', `custom store failed to clear ${c}`, {}, { cause: error });
      }
    },
  };
}
