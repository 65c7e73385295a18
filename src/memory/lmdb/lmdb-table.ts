import type { Database } from 'lmdb';
import type { EnvironmentLease } from './lmdb-environment.ts';
import { commitFailure } from './lmdb-environment.ts';
import type { Message, Meta, StoredMessage } from '../../message.ts';
import type { MessageTable } from '../contract/message-table.ts';
import { StorageError } from '../contract/memory-errors.ts';

/**
 * A `MessageTable` in LMDB. Layout: one named database, `messages`, keyed by the ordered array
 * `[conversationId, messageId]` with JSON values `{ts, meta, message}`. A conversation's
 * records are adjacent and in id order, so `tail`, `range` and `lastId` are range scans that
 * stop after what they return, whatever the conversation's length; `lastId` is the last key
 * (a reverse scan of one row), so there is no counter to keep in step.
 *
 * A second database, `system-messages`, holds the keys of the system messages alone, put in the
 * same transaction (and under the same condition) as the messages, so `systemMessages` reads
 * those keys and their rows without scanning the history; other messages cost one role check.
 *
 * JSON, not lmdb-js's default msgpack: msgpackr renames an own `__proto__` key, and a store
 * must return exactly what it was given.
 *
 * A batch is written as puts issued in one synchronous loop, so lmdb-js's event-turn batching
 * puts them in one transaction (together with other conversations' writes of the same turn:
 * group commit); `write` resolves after the commit and the flush.
 */
export const MESSAGES_DB = 'messages';
/** The index of system messages: keys `[conversationId, messageId]`, value 1 (see `systemMessages`). */
export const SYSTEM_MESSAGES_DB = 'system-messages';
/** Per-conversation retention overrides (retention.ts): key `[conversationId]`, value the TTL in ms. */
export const CONVERSATION_TTL_DB = 'conversation-ttl';
/**
 * Every database of the environment keyed by `[conversationId, ...]`: erasing a conversation
 * in one transaction (a user's erasure) removes its key range from each of them. A database
 * added here is erased with the rest; one keyed by conversation id that is not here is not.
 */
export const CONVERSATION_DBS = [MESSAGES_DB, SYSTEM_MESSAGES_DB, CONVERSATION_TTL_DB] as const;

interface Row {
  ts: string;
  meta: Meta;
  message: Message;
}

export interface LmdbTable extends MessageTable {
  readonly db: Database<Row, [string, number]>;
  /** Stop accepting work (the environment itself is closed by its lease). */
  close(): void;
}

export function createLmdbTable(lease: EnvironmentLease): LmdbTable {
  const db = lease.root.openDB<Row, [string, number]>(MESSAGES_DB, { encoding: 'json' });
  const systemDb = lease.root.openDB<1, [string, number]>(SYSTEM_MESSAGES_DB, { encoding: 'json' });
  let closed = false;

  const lastIdSync = (c: string): number => {
    for (const key of db.getKeys({ start: [c, Infinity], end: [c], reverse: true, limit: 1 })) return key[1];
    return 0;
  };
  const toStored = (key: [string, number], row: Row): StoredMessage => ({
    message_id: key[1],
    ts: row.ts,
    meta: row.meta,
    message: row.message,
  });
  const closedError = () => new StorageError('store_closed', 'the LMDB store is closed');
  const ensureOpen = () => {
    if (closed) throw closedError();
  };
  const failedCommit = async (error: unknown): Promise<never> => {
    throw await commitFailure(error, lease.path);
  };

  return {
    kind: 'lmdb',
    db,
    lastId: async (c) => {
      ensureOpen();
      return lastIdSync(c);
    },
    messages: async (c) => {
      ensureOpen();
      const out: Message[] = [];
      for (const { value } of db.getRange({ start: [c, 1], end: [c, Infinity] })) out.push(value.message);
      return out;
    },
    range: async (c, from, to, limit) => {
      ensureOpen();
      if (limit === 0 || to < from) return [];
      const out: StoredMessage[] = [];
      for (const { key, value } of db.getRange({ start: [c, Math.max(from, 1)], end: [c, to + 1], limit })) {
        out.push(toStored(key, value));
      }
      return out;
    },
    tail: async (c, n) => {
      ensureOpen();
      if (n === 0) return [];
      const out: StoredMessage[] = [];
      for (const { key, value } of db.getRange({ start: [c, Infinity], end: [c], reverse: true, limit: n })) {
        out.push(toStored(key, value));
      }
      return out.reverse();
    },
    systemMessages: async (c) => {
      ensureOpen();
      const out: StoredMessage[] = [];
      for (const key of systemDb.getKeys({ start: [c, 1], end: [c, Infinity] })) {
        const row = db.get(key);
        if (row !== undefined) out.push(toStored(key, row));
      }
      return out;
    },
    write: (c, records) => {
      if (closed) return Promise.reject(closedError());
      const first = records[0];
      if (first === undefined) return Promise.resolve(records);
      // The caller numbers from the last id it read; a record already at that id means a
      // second writer (another store or process on this environment) numbered from the same
      // last id. The puts are conditional on that id being free, checked inside the commit.
      const committed = db.ifNoExists([c, first.message_id], () => {
        for (const r of records) {
          db.put([c, r.message_id], { ts: r.ts, meta: r.meta, message: r.message });
          if (r.message.role === 'system') systemDb.put([c, r.message_id], 1);
        }
      });
      lease.guardFailedCommits();
      return committed.then(
        (written) => {
          if (!written) throw new StorageError('write_conflict', `conversation ${c} already has id ${first.message_id}: another writer numbered from the same last id`);
          return db.flushed.then(() => records, failedCommit);
        },
        failedCommit,
      );
    },
    clear: async (c) => {
      ensureOpen();
      const removes: Promise<boolean>[] = [];
      for (const key of db.getKeys({ start: [c, 1], end: [c, Infinity] })) removes.push(db.remove(key));
      for (const key of systemDb.getKeys({ start: [c, 1], end: [c, Infinity] })) removes.push(systemDb.remove(key));
      if (removes.length === 0) return;
      lease.guardFailedCommits();
      await Promise.all(removes).then(() => db.flushed).catch(failedCommit);
    },
    close: () => {
      closed = true;
    },
  };
}
