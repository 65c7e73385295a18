import type { Database } from 'lmdb';
import type { EnvironmentLease } from './lmdb-environment.ts';
import { commitFailure } from './lmdb-environment.ts';
import type { Message, Meta, StoredMessage } from '../../message.ts';
import type { MessageTable } from '../contract/message-table.ts';
import { StorageError } from '../contract/memory-errors.ts';
import { ForkError, segmentsOf, stitchedRange, stitchedTail, type ForkLink, type OwnRows } from '../contract/fork.ts';
import { IDEMPOTENCY_WINDOW_MS, KeyTaken, type KeyRecord } from '../contract/idempotency.ts';

/**
 * A `MessageTable` in LMDB. Layout: one named database, `messages`, keyed by the ordered array
 * `[conversationId, messageId]` with JSON values `{ts, meta, message}`. A conversation's
 * records are adjacent and in id order, so `tail`, `range` and `lastId` are range scans that
 * stop after what they return, whatever the conversation's length; `lastId` is the last key
 * (a reverse scan of one row), so there is no counter to keep in step.
 *
 * A second database, `system-messages`, holds the keys of the system messages alone, put in the
 * same transaction (and under the same conditions) as the messages, so `systemMessages` reads
 * those keys and their rows without scanning the history; other messages cost one role check.
 * A fork's system messages are read segment by segment (its source's up to the fork point,
 * then its own), like `range`.
 *
 * JSON, not lmdb-js's default msgpack: msgpackr renames an own `__proto__` key, and a store
 * must return exactly what it was given.
 *
 * A batch is written as puts issued in one synchronous loop, so lmdb-js's event-turn batching
 * puts them in one transaction (together with other conversations' writes of the same turn:
 * group commit); `write` resolves after the commit and the flush.
 *
 * Idempotency keys (idempotency.ts) live in `messages` too, beside their conversation:
 * `[conversationId, '\u0001' + key]` → `{firstId, count, at}` as 20 bytes (float64, uint32,
 * float64: a fifth of the JSON, and no JSON to write or parse on the hot path). A string sorts after every number
 * in an ordered array key, so key rows sit just after the conversation's newest messages (the
 * same pages a keyed append dirties anyway: a separate database cost ~15% more per durable
 * commit; measured again with binary key rows: 0.63x of plain vs 0.75x) and no id range, tail
 * or last-id scan ever meets them. The key row is put in the same conditional commit as the
 * batch's messages. The writer looks its keys up first (`keyOf`, synchronous) and marks them
 * `checked`: put without a condition of their own; a key not marked is a condition too ("no
 * row for this key", nested `ifNoExists`). Expired keys are swept per conversation: every
 * `SWEEP_EVERY`th keyed batch of the table examines the `SWEEP_EVERY * 2` key rows that follow
 * its own key in that conversation, cyclically, and removes the expired ones: two rows examined
 * per keyed batch, amortized, which keeps a conversation under keyed writes at about two
 * windows of keys. (A conversation that gets no more keyed writes keeps its last key rows, a
 * small fraction of its messages, until it is cleared.)
 *
 * Forks (fork.ts): `forks` holds `['of', fork]` → `{source, at}` and `['by', source, fork]` →
 * `at`. A read looks the link up (one get) and, for a fork, reads each segment as a range
 * scan, all synchronously, so in one read snapshot. `fork` and `clear` run as write
 * transactions (checks and writes atomic, against other writers of the environment too).
 */
export const MESSAGES_DB = 'messages';
/** The prefix of a key row's second key component (no key contains NUL, so none sorts below). */
const KEY_ROW = '\u0001';
const KEY_ROW_END = '\u0002';
/** One keyed batch in this many sweeps. */
const SWEEP_EVERY = 16;
export const FORKS_DB = 'forks';
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

/** A key row's value: firstId (float64: ids reach 2^53), count (uint32), at (float64), little-endian. */
function encodeKeyRow(k: KeyRecord): Buffer {
  const b = Buffer.allocUnsafe(20);
  b.writeDoubleLE(k.firstId, 0);
  b.writeUInt32LE(k.count, 8);
  b.writeDoubleLE(k.at, 12);
  return b;
}
function decodeKeyRow(key: string, b: Buffer): KeyRecord {
  return { key, firstId: b.readDoubleLE(0), count: b.readUInt32LE(8), at: b.readDoubleLE(12) };
}
const keyRowAt = (b: Buffer): number => b.readDoubleLE(12);

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
  // The same database, typed for its key rows (binary values: see `encodeKeyRow`).
  const keysDb = lease.root.openDB<Buffer, [string, string]>(MESSAGES_DB, { encoding: 'binary' });
  const forksDb = lease.root.openDB<ForkLink | number, Array<string>>(FORKS_DB, { encoding: 'json' });
  const systemDb = lease.root.openDB<1, [string, number]>(SYSTEM_MESSAGES_DB, { encoding: 'json' });
  let closed = false;
  let keyedSinceSweep = 0;

  const ownLastId = (c: string): number => {
    for (const key of db.getKeys({ start: [c, Infinity], end: [c], reverse: true, limit: 1 })) return key[1];
    return 0;
  };
  const linkOf = (c: string) => forksDb.get(['of', c]) as ForkLink | undefined;
  const lastIdSync = (c: string): number => Math.max(ownLastId(c), linkOf(c)?.at ?? 0);
  const own: OwnRows = (c, from, to, limit, reverse) => {
    const out: StoredMessage[] = [];
    const bounds = reverse ? { start: [c, to], end: [c, from - 0.5], reverse: true } : { start: [c, from], end: [c, to + 0.5] };
    for (const { key, value } of db.getRange({ ...bounds, limit } as never) as Iterable<{ key: [string, number]; value: Row }>) out.push(toStored(key, value));
    return out;
  };
  const rangeSync = (c: string, from: number, to: number, limit: number): StoredMessage[] => {
    if (limit === 0 || to < from) return [];
    const link = linkOf(c);
    if (link === undefined) return own(c, Math.max(from, 1), to, limit, false);
    return stitchedRange(segmentsOf(c, linkOf), from, to, limit, own);
  };
  /** The system messages `c` sees, ascending: each segment's own index entries, oldest segment first. */
  const systemMessagesSync = (c: string): StoredMessage[] => {
    const out: StoredMessage[] = [];
    const segments = linkOf(c) === undefined ? [{ conversationId: c, from: 1, to: Number.MAX_SAFE_INTEGER }] : segmentsOf(c, linkOf);
    for (let i = segments.length - 1; i >= 0; i--) {
      const s = segments[i]!;
      for (const key of systemDb.getKeys({ start: [s.conversationId, s.from], end: [s.conversationId, s.to + 0.5] })) {
        const row = db.get(key);
        if (row !== undefined) out.push(toStored(key, row));
      }
    }
    return out;
  };
  const forksOfSync = (source: string): Array<{ fork: string; at: number }> => {
    const out: Array<{ fork: string; at: number }> = [];
    for (const { key, value } of forksDb.getRange({ start: ['by', source], end: ['by', source, '\uffff\uffff'] })) out.push({ fork: key[2]!, at: value as number });
    return out;
  };
  const toStored = (key: [string, number], row: Row): StoredMessage => ({
    message_id: key[1],
    ts: row.ts,
    meta: row.meta,
    message: row.message,
  });
  /** Examines the key rows of `c` after `key`, cyclically, and removes the expired ones (in the next commit). */
  const sweepAround = (c: string, key: string, now: number) => {
    const cutoff = now - IDEMPOTENCY_WINDOW_MS;
    const own = KEY_ROW + key;
    let left = SWEEP_EVERY * 2;
    const examine = (start: string, end: string) => {
      for (const { key: k, value } of keysDb.getRange({ start: [c, start], end: [c, end], limit: left + 1 })) {
        if (k[1] === own) continue;
        if (keyRowAt(value) <= cutoff) keysDb.remove(k);
        if (--left === 0) return;
      }
    };
    examine(own, KEY_ROW_END);
    if (left > 0) examine(KEY_ROW, own);
  };
  /** A batch's puts, issued in one synchronous loop (so in one commit). */
  const putRecords = (c: string, records: readonly StoredMessage[]) => {
    for (const r of records) {
      db.put([c, r.message_id], { ts: r.ts, meta: r.meta, message: r.message });
      if (r.message.role === 'system') systemDb.put([c, r.message_id], 1);
    }
  };
  /**
   * The flush of the commit whose writes are settling now, shared by them: lmdb-js's
   * `flushed.then` makes a `Promise.all` per call (~0.6 KB per append). Commits settle their
   * writes in one burst of microtasks, a commit per burst, and the share ends with the burst
   * (a microtask queued behind the writes' callbacks), so no later commit's write gets it; a
   * write issued during the burst starts a new batch, whose flush is later, never earlier.
   */
  let sharedFlush: PromiseLike<unknown> | undefined;
  const endShare = () => {
    sharedFlush = undefined;
  };
  /** After a conditional batch committed: `records` once flushed, or the conflict it met. */
  const flushedAs = (written: boolean, c: string, first: StoredMessage, records: StoredMessage[]): PromiseLike<StoredMessage[]> => {
    if (!written) throw new StorageError('write_conflict', `conversation ${c} already has id ${first.message_id}: another writer numbered from the same last id`);
    if (sharedFlush === undefined) {
      sharedFlush = db.flushed.then(() => undefined);
      queueMicrotask(endShare);
    }
    return sharedFlush.then(() => records, failedCommit);
  };
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
      if (linkOf(c) !== undefined) {
        for (const r of rangeSync(c, 1, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER)) out.push(r.message);
        return out;
      }
      for (const { value } of db.getRange({ start: [c, 1], end: [c, Infinity] })) out.push(value.message);
      return out;
    },
    range: async (c, from, to, limit) => {
      ensureOpen();
      return rangeSync(c, from, to, limit);
    },
    tail: async (c, n) => {
      ensureOpen();
      if (n === 0) return [];
      if (linkOf(c) !== undefined) return stitchedTail(segmentsOf(c, linkOf), n, own);
      const out: StoredMessage[] = [];
      for (const { key, value } of db.getRange({ start: [c, Infinity], end: [c], reverse: true, limit: n })) {
        out.push(toStored(key, value));
      }
      return out.reverse();
    },
    systemMessages: async (c) => {
      ensureOpen();
      return systemMessagesSync(c);
    },
    findKeys: async (c, wanted) => {
      ensureOpen();
      const found = new Map<string, KeyRecord>();
      for (const key of wanted) {
        const row = keysDb.get([c, KEY_ROW + key]);
        if (row !== undefined) found.set(key, decodeKeyRow(key, row));
      }
      return found;
    },
    keyOf: (c, key) => {
      ensureOpen();
      const row = keysDb.get([c, KEY_ROW + key]);
      return row === undefined ? undefined : decodeKeyRow(key, row);
    },
    fork: (newId, source, at) => {
      if (closed) return Promise.reject(closedError());
      lease.guardFailedCommits();
      // A write transaction: the checks see every commit before it, the clear of the source included.
      const made = db.transaction(() => {
        const sourceLast = lastIdSync(source);
        if (at > sourceLast) return new ForkError('fork_point_missing', `conversation ${source} has no message ${at} (its last id is ${sourceLast})`, { source, at, lastId: sourceLast });
        if (lastIdSync(newId) > 0) return new ForkError('fork_target_exists', `conversation ${newId} already has messages`, { conversationId: newId });
        forksDb.put(['of', newId], { source, at });
        forksDb.put(['by', source, newId], at);
        return undefined;
      });
      return made.then(
        (refused) => {
          if (refused !== undefined) throw refused;
          return db.flushed.then(() => at, failedCommit);
        },
        failedCommit,
      );
    },
    write: (c, records, keys) => {
      if (closed) return Promise.reject(closedError());
      const first = records[0];
      if (first === undefined) return Promise.resolve(records);
      // The caller numbers from the last id it read; a record already at that id means a
      // second writer (another store or process on this environment) numbered from the same
      // last id. The puts are conditional on that id being free, checked inside the commit.
      // (Callbacks here are anonymous: this runs per append, and a named closure costs a
      // defineProperty per call under tsx's keepNames.)
      if (keys === undefined) {
        const committed = db.ifNoExists([c, first.message_id], () => putRecords(c, records));
        lease.guardFailedCommits(); // after the turn's first write (see lmdb-environment.ts)
        return committed.then((written) => flushedAs(written, c, first, records), failedCommit);
      }
      // A key the writer did not look up is a condition too (nested: all must hold), checked in
      // the commit; a `checked` key (looked up just before: write-queue.ts) is simply put.
      let keyCheck: Promise<boolean> | undefined;
      let body = () => {
        putRecords(c, records);
        for (const k of keys) keysDb.put([c, KEY_ROW + k.key], encodeKeyRow(k));
      };
      for (const k of keys) {
        if (k.checked === true) continue;
        const inner = body;
        body = () => {
          const held = keysDb.ifNoExists([c, KEY_ROW + k.key], inner);
          const before = keyCheck;
          keyCheck = before === undefined ? held : Promise.all([before, held]).then(([x, y]) => x && y);
        };
      }
      const committed = db.ifNoExists([c, first.message_id], body);
      // The sweep rides in the same event turn, so in the same commit (8754794 had dropped it).
      if (keys.length > 0 && ++keyedSinceSweep >= SWEEP_EVERY) {
        keyedSinceSweep = 0;
        sweepAround(c, keys[0]!.key, keys[0]!.at);
      }
      lease.guardFailedCommits();
      return committed.then((written) => {
        if (!written || keyCheck === undefined) return flushedAs(written, c, first, records);
        return keyCheck.then((free) => {
          if (!free) throw new KeyTaken(c);
          return flushedAs(written, c, first, records);
        });
      }, failedCommit);
    },
    clear: async (c) => {
      ensureOpen();
      lease.guardFailedCommits();
      await db
        .transaction(() => {
          // Forks reading from c get their prefix as their own rows first (fork.ts).
          for (const { fork, at } of forksOfSync(c)) {
            for (const r of rangeSync(c, 1, at, at)) db.put([fork, r.message_id], { ts: r.ts, meta: r.meta, message: r.message });
            for (const r of systemMessagesSync(c)) if (r.message_id <= at) systemDb.put([fork, r.message_id], 1);
            forksDb.remove(['of', fork]);
            forksDb.remove(['by', c, fork]);
          }
          const link = linkOf(c);
          if (link !== undefined) {
            forksDb.remove(['of', c]);
            forksDb.remove(['by', link.source, c]);
          }
          for (const key of db.getKeys({ start: [c, 1], end: [c, Infinity] })) db.remove(key);
          for (const key of systemDb.getKeys({ start: [c, 1], end: [c, Infinity] })) systemDb.remove(key);
          for (const key of keysDb.getKeys({ start: [c, KEY_ROW], end: [c, KEY_ROW_END] })) keysDb.remove(key);
        })
        .then(() => db.flushed)
        .catch(failedCommit);
    },
    close: () => {
      closed = true;
    },
  };
}
