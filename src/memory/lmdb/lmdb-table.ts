import type { Database, RootDatabase } from 'lmdb';
import type { EnvironmentLease } from './lmdb-environment.ts';
import { commitFailure } from './lmdb-environment.ts';
import type { Message, Meta, StoredMessage } from '../../message.ts';
import type { MessageTable, WriteOutcome } from '../contract/message-table.ts';
import { StorageError } from '../contract/memory-errors.ts';
import { ForkError, segmentsOf, stitchedRange, stitchedTail, type ForkLink, type OwnRows } from '../contract/fork.ts';
import { IDEMPOTENCY_WINDOW_MS, type KeyRecord } from '../contract/idempotency.ts';
import { createKeyIndex, KEY_ROW, KEY_ROW_END, type KeyIndex } from './key-index.ts';
import type { Put, Submitted } from './write-ahead.ts';
import { estimate, type DiskRoom } from './disk-room.ts';

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
 * A batch goes through the environment's write-ahead journal (write-ahead.ts) when it has one:
 * `write` resolves after the journal's one flush, and the rows reach LMDB with the next batch of
 * the environment (~50 ms later, one commit for every append meanwhile). Until LMDB has flushed
 * them they are *pending rows*, kept per environment (every table of it sees them), and every
 * read here merges them, as does the id check: one process per data directory, so nothing else
 * writes the environment. Writes that touch rows otherwise (`clear`, `fork`; erasure and
 * retention elsewhere) first settle the journal. Otherwise (no journal: `noSync` or no room
 * for it; a shared commit, `sharedCommit`; a batch the journal does not take now: see
 * write-ahead.ts's `submit`) the batch is puts issued in one synchronous loop, so lmdb-js's
 * event-turn batching puts them in one transaction (together with other conversations' writes
 * of the same turn: group commit), and `write` resolves after the commit and the flush.
 *
 * Idempotency keys (idempotency.ts) live in the rows themselves: the first row of a keyed batch
 * carries `key: [key, count]`, in the same put as its message, and key-index.ts keeps the keys
 * in memory, rebuilt from the rows when a conversation is met. The writer (write-queue.ts) looks
 * each key up before the write is issued, so a keyed batch is put under the same one condition
 * as any other: its first id is free, which stops a second writer on the environment that
 * numbered from the same last id. (Not a key row beside the messages: that costs a put per
 * keyed batch and a sweep.)
 *
 * Forks (fork.ts): `forks` holds `['of', fork]` → `{source, at}` and `['by', source, fork]` →
 * `at`. A read looks the link up (one get) and, for a fork, reads each segment as a range
 * scan, all synchronously, so in one read snapshot. `fork` and `clear` run as write
 * transactions (checks and writes atomic, against other writers of the environment too).
 */
export const MESSAGES_DB = 'messages';
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

interface Row {
  ts: string;
  meta: Meta;
  message: Message;
  /** On the first row of a keyed batch: its idempotency key and the batch's size (key-index.ts). */
  key?: [string, number];
}

export interface LmdbTable extends MessageTable {
  readonly db: Database<Row, [string, number]>;
  /** Stop accepting work (the environment itself is closed by its lease). */
  close(): void;
}

/** `forks` also holds `['layout', 'keys in rows']` → when an environment that already had rows
 * was first opened with idempotency keys in the rows (epoch ms). */
const KEYS_IN_ROWS = ['layout', 'keys in rows'];

/** Until when a key row of the earlier layout may be live (key-index.ts). */
function legacyKeysUntil(db: Database<Row, [string, number]>, forksDb: Database<ForkLink | number, Array<string>>): number {
  const since = forksDb.get(KEYS_IN_ROWS);
  if (typeof since === 'number') return since + IDEMPOTENCY_WINDOW_MS;
  for (const _ of db.getKeys({ limit: 1 })) {
    // Rows, and no record of when: perhaps written by an earlier version. Recorded with the
    // first writes (lost, the next open decides again). A new environment records nothing (no
    // page spent on it); at its next open it is taken for one of these, which costs a range
    // read more per index read, for one window.
    const now = Date.now();
    forksDb.put(KEYS_IN_ROWS, now).catch(() => undefined);
    return now + IDEMPOTENCY_WINDOW_MS;
  }
  return -Infinity;
}

/** lmdb-js's put option for MDB_NOOVERWRITE: the put's promise resolves false, and nothing is
 * written, when the key is already there. (lmdb-js takes options in place of the version, as its
 * README says; its types list only the version.) */
const NO_OVERWRITE = { noOverwrite: true } as const;
type PutNoOverwrite = (key: [string, number], row: Row, options: typeof NO_OVERWRITE) => Promise<boolean>;

/** A pending row: its JSON as it will be stored (a read parses it: callers get their own copy). */
interface PendingRow {
  json: string;
  system: boolean;
}

/** Each environment's pending rows (see above), by conversation and id. */
const pendingRows = new WeakMap<RootDatabase, Map<string, Map<number, PendingRow>>>();

const byId = (a: StoredMessage, b: StoredMessage) => a.message_id - b.message_id;

/**
 * About the JSON length of a batch's rows, for `DiskRoom.take`, without writing the JSON (this
 * runs per append): each field's string length, other values stringified (rarely large).
 */
function charsOf(records: readonly StoredMessage[]): number {
  let n = 0;
  for (const r of records) n += 48 + r.ts.length + shallowChars(r.message) + shallowChars(r.meta);
  return n;
}

function shallowChars(o: object): number {
  let n = 2;
  for (const key in o) {
    const v = (o as Record<string, unknown>)[key];
    n += key.length + 4 + (typeof v === 'string' ? v.length + 2 : (JSON.stringify(v)?.length ?? 4));
  }
  return n;
}

/**
 * A batch through the journal (write-ahead.ts's `Submitted`): its writer is told once it is in
 * the journal; once LMDB has it, its rows leave the pending rows. One object per append, its
 * methods shared (no closures per append).
 */
class JournalWrite implements Submitted {
  private readonly pendingOf: Map<string, Map<number, PendingRow>>;
  private readonly c: string;
  private readonly records: StoredMessage[];
  private readonly rows: readonly PendingRow[];
  private readonly keys: KeyIndex;
  private readonly path: string;
  private readonly room: DiskRoom;
  private readonly bytes: number;
  private readonly to: WriteOutcome;

  constructor(
    pendingOf: Map<string, Map<number, PendingRow>>,
    c: string,
    records: StoredMessage[],
    rows: readonly PendingRow[],
    keys: KeyIndex,
    path: string,
    room: DiskRoom,
    bytes: number,
    to: WriteOutcome,
  ) {
    this.pendingOf = pendingOf;
    this.room = room;
    this.bytes = bytes;
    this.c = c;
    this.records = records;
    this.rows = rows;
    this.keys = keys;
    this.path = path;
    this.to = to;
  }

  durable(error?: unknown): void {
    if (error === undefined) this.to.resolve(this.records);
    else {
      this.keys.forget(this.c);
      reportFailure(error, this.path, this.to);
    }
  }

  applied(): void {
    this.room.release(this.bytes);
    const mine = this.pendingOf.get(this.c);
    if (mine === undefined) return;
    // Unless a later write of the same id (after a clear) replaced it.
    for (let i = 0; i < this.records.length; i++) if (mine.get(this.records[i]!.message_id) === this.rows[i]) mine.delete(this.records[i]!.message_id);
    if (mine.size === 0) this.pendingOf.delete(this.c);
  }
}

/** A failed commit, typed (`commitFailure`), to the writer. */
function reportFailure(error: unknown, path: string, to: WriteOutcome): void {
  commitFailure(error, path).then(
    (typed) => to.reject(typed),
    (other: unknown) => to.reject(other),
  );
}

/** A failure found before anything was issued, told a microtask later, as every outcome is
 * (the writer announces a batch after issuing it: write-queue.ts). */
function refuse(to: WriteOutcome, error: unknown): void {
  queueMicrotask(() => to.reject(error));
}

export function createLmdbTable(lease: EnvironmentLease): LmdbTable {
  const ahead = lease.ahead;
  let pending = pendingRows.get(lease.root);
  if (pending === undefined) pendingRows.set(lease.root, (pending = new Map()));
  const pendingOf = pending;
  const db = lease.root.openDB<Row, [string, number]>(MESSAGES_DB, { encoding: 'json' });
  // The same database, its rows as stored (the key index reads them without parsing most).
  const rawDb = lease.root.openDB<Buffer, Array<string | number>>(MESSAGES_DB, { encoding: 'binary' });
  const putNoOverwrite = db.put.bind(db) as unknown as PutNoOverwrite;
  const forksDb = lease.root.openDB<ForkLink | number, Array<string>>(FORKS_DB, { encoding: 'json' });
  const systemDb = lease.root.openDB<1, [string, number]>(SYSTEM_MESSAGES_DB, { encoding: 'json' });
  let closed = false;

  const ownLastId = (c: string): number => {
    let last = 0;
    for (const key of db.getKeys({ start: [c, Infinity], end: [c], reverse: true, limit: 1 })) last = key[1];
    const rows = pendingOf.get(c);
    if (rows !== undefined) for (const id of rows.keys()) if (id > last) last = id;
    return last;
  };
  /** `c`'s pending rows with ids from `from` to `to` (any order). */
  const pendingIn = (c: string, from: number, to: number, systemOnly = false): StoredMessage[] => {
    const rows = pendingOf.get(c);
    const out: StoredMessage[] = [];
    if (rows === undefined) return out;
    for (const [id, row] of rows) if (id >= from && id <= to && (!systemOnly || row.system)) out.push(toStored([c, id], JSON.parse(row.json) as Row));
    return out;
  };
  /** Rows read from LMDB (`limit` of them at most, in order) and pending ones, merged: the first `limit` in order. */
  const merged = (read: StoredMessage[], extra: StoredMessage[], limit: number, reverse: boolean): StoredMessage[] => {
    if (extra.length === 0) return read;
    const all = new Map<number, StoredMessage>();
    for (const r of read) all.set(r.message_id, r);
    for (const r of extra) all.set(r.message_id, r);
    const out = [...all.values()].sort(byId);
    if (reverse) out.reverse();
    return out.length > limit ? out.slice(0, limit) : out;
  };
  const keyIndex = createKeyIndex(
    {
      raw: rawDb,
      rowAt: (c, id) => {
        const row = pendingOf.get(c)?.get(id);
        return row === undefined ? rawDb.get([c, id]) : Buffer.from(row.json);
      },
      lastIdOf: ownLastId,
    },
    legacyKeysUntil(db, forksDb),
  );
  const linkOf = (c: string) => forksDb.get(['of', c]) as ForkLink | undefined;
  const lastIdSync = (c: string): number => Math.max(ownLastId(c), linkOf(c)?.at ?? 0);
  const own: OwnRows = (c, from, to, limit, reverse) => {
    const out: StoredMessage[] = [];
    const bounds = reverse ? { start: [c, to], end: [c, from - 0.5], reverse: true } : { start: [c, from], end: [c, to + 0.5] };
    for (const { key, value } of db.getRange({ ...bounds, limit } as never) as Iterable<{ key: [string, number]; value: Row }>) out.push(toStored(key, value));
    return pendingOf.has(c) ? merged(out, pendingIn(c, from, to), limit, reverse) : out;
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
      const own: StoredMessage[] = [];
      for (const key of systemDb.getKeys({ start: [s.conversationId, s.from], end: [s.conversationId, s.to + 0.5] })) {
        const row = db.get(key);
        if (row !== undefined) own.push(toStored(key, row));
      }
      out.push(...merged(own, pendingIn(s.conversationId, s.from, s.to, true), Infinity, false));
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
  /** A batch's rows: the first row of a keyed batch carries its key. */
  const rowsOf = (records: readonly StoredMessage[], keys: readonly KeyRecord[] | undefined): Row[] => {
    let k = 0;
    return records.map((r) => {
      const keyed = keys?.[k];
      if (keyed === undefined || keyed.firstId !== r.message_id) return { ts: r.ts, meta: r.meta, message: r.message };
      k++;
      return { ts: r.ts, meta: r.meta, message: r.message, key: [keyed.key, keyed.count] };
    });
  };
  /** A batch's puts, issued in one synchronous loop (so in one commit). */
  const putRecords = (c: string, records: readonly StoredMessage[], keys: readonly KeyRecord[] | undefined) => {
    const rows = rowsOf(records, keys);
    for (let i = 0; i < records.length; i++) {
      const id = records[i]!.message_id;
      db.put([c, id], rows[i]!);
      if (rows[i]!.message.role === 'system') systemDb.put([c, id], 1);
    }
  };
  /**
   * The writes waiting for the flush of the commit settling now, as pairs (`to`, its records):
   * one `then` on lmdb-js's `flushed` per commit, not per write (its `flushed.then` makes a
   * `Promise.all` per call, ~0.6 KB), and no promise per write. Commits settle their writes
   * in one burst of microtasks, a commit per burst, and the list ends with the burst (a
   * microtask queued behind the writes' callbacks), so no later commit's write joins it; a
   * write issued during the burst starts a new batch, whose flush is later, never earlier.
   */
  let flushWaiters: Array<WriteOutcome | StoredMessage[]> | undefined;
  const endShare = () => {
    flushWaiters = undefined;
  };
  const awaitFlush = (to: WriteOutcome, records: StoredMessage[]): void => {
    if (flushWaiters === undefined) {
      const waiters: Array<WriteOutcome | StoredMessage[]> = (flushWaiters = []);
      db.flushed.then(
        () => {
          for (let i = 0; i < waiters.length; i += 2) {
            ahead?.directSettled();
            (waiters[i] as WriteOutcome).resolve(waiters[i + 1] as StoredMessage[]);
          }
        },
        (error: unknown) => {
          for (let i = 0; i < waiters.length; i += 2) {
            ahead?.directSettled();
            reportFailure(error, lease.path, waiters[i] as WriteOutcome);
          }
        },
      );
      queueMicrotask(endShare);
    }
    flushWaiters.push(to, records);
  };
  /** A batch committed straight to LMDB; `to` is told after the commit and its flush. */
  const directWrite = (c: string, records: StoredMessage[], keys: readonly KeyRecord[] | undefined, bytes: number, to: WriteOutcome): void => {
    const first = records[0]!;
    // The caller numbers from the last id it read; a record already at that id means a
    // second writer (another store or process on this environment) numbered from the same
    // last id. The puts are conditional on that id being free, checked inside the commit.
    // (Callbacks here are anonymous: this runs per append, and a named closure costs a
    // defineProperty per call under tsx's keepNames.)
    // Keys need no condition of their own: the writer looked each up just before (keyOf).
    // A batch of one row (every steady `add` of one message) is one put with LMDB's own
    // no-overwrite flag, the same condition on the same key: lmdb-js's `ifNoExists` runs a
    // conditional block around its puts, ~3 µs of CPU per append (docs/performance-history.md,
    // 2026-12-08). A system message also puts its index row, so it keeps the block.
    let committed: Promise<boolean>;
    try {
      committed =
        records.length === 1 && first.message.role !== 'system'
          ? putNoOverwrite([c, first.message_id], rowsOf(records, keys)[0]!, NO_OVERWRITE)
          : db.ifNoExists([c, first.message_id], () => putRecords(c, records, keys));
    } catch (error) {
      lease.room.release(bytes);
      throw error;
    }
    lease.guardFailedCommits(); // after the turn's first write (see lmdb-environment.ts)
    ahead?.directStarted();
    committed.then(
      (written) => {
        lease.room.release(bytes);
        if (written) {
          keyIndex.committed(c, records, keys);
          return awaitFlush(to, records);
        }
        ahead?.directSettled();
        to.reject(conflict(c, records));
      },
      (error: unknown) => {
        lease.room.release(bytes);
        ahead?.directSettled();
        reportFailure(error, lease.path, to);
      },
    );
  };
  const conflict = (c: string, records: readonly StoredMessage[]) =>
    new StorageError('write_conflict', `conversation ${c} already has id ${records[0]!.message_id}: another writer numbered from the same last id`);
  const closedError = () => new StorageError('store_closed', 'the LMDB store is closed');
  const ensureOpen = () => {
    if (closed) throw closedError();
  };
  const failedCommit = async (error: unknown): Promise<never> => {
    throw await commitFailure(error, lease.path);
  };

  const lastIdNow = (c: string): number => {
    ensureOpen();
    return lastIdSync(c);
  };
  return {
    kind: 'lmdb',
    db,
    lastIdNow,
    lastId: async (c) => lastIdNow(c),
    messages: async (c) => {
      ensureOpen();
      const out: Message[] = [];
      if (linkOf(c) !== undefined || pendingOf.has(c)) {
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
      if (pendingOf.has(c)) return own(c, 1, Number.MAX_SAFE_INTEGER, n, true).reverse();
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
      const all = keyIndex.all(c);
      const found = new Map<string, KeyRecord>();
      for (const key of wanted) {
        const record = all.get(key);
        if (record !== undefined) found.set(key, record);
      }
      return found;
    },
    keyOf: (c, key, lastId, now) => {
      ensureOpen();
      return keyIndex.lookUp(c, key, lastId, now);
    },
    fork: async (newId, source, at) => {
      if (closed) throw closedError();
      await ahead?.settle().catch(failedCommit);
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
    write: (c, records, to, keys, sharedCommit) => {
      if (closed) return refuse(to, closedError());
      const first = records[0];
      if (first === undefined) return queueMicrotask(() => to.resolve(records));
      // A pending row at the first id is a second writer too (the commit's condition cannot see it).
      if (pendingOf.get(c)?.has(first.message_id)) return refuse(to, conflict(c, records));
      /** The room this write took (disk-room.ts): released once it is in LMDB, or failed. */
      let bytes: number;
      if (ahead !== undefined && sharedCommit !== true && ahead.open) {
        // The same condition as the commit's, checked now: nothing else writes the environment.
        if (db.doesExist([c, first.message_id])) return refuse(to, conflict(c, records));
        const rows = rowsOf(records, keys);
        const pending: PendingRow[] = [];
        const puts: Put[] = [];
        let chars = 0;
        for (let i = 0; i < records.length; i++) {
          const row: PendingRow = { json: JSON.stringify(rows[i]), system: rows[i]!.message.role === 'system' };
          chars += row.json.length;
          pending.push(row);
          const key = [c, records[i]!.message_id];
          puts.push([MESSAGES_DB, key, row.json]);
          if (row.system) puts.push([SYSTEM_MESSAGES_DB, key, '1']);
        }
        bytes = estimate(chars);
        try {
          lease.room.take(bytes);
        } catch (error) {
          return refuse(to, error);
        }
        const write = new JournalWrite(pendingOf, c, records, pending, keyIndex, lease.path, lease.room, bytes, to);
        let journaled: boolean;
        try {
          journaled = ahead.submit(puts, write);
        } catch (error) {
          lease.room.release(bytes);
          throw error;
        }
        if (journaled) {
          let mine = pendingOf.get(c);
          if (mine === undefined) pendingOf.set(c, (mine = new Map()));
          for (let i = 0; i < records.length; i++) mine.set(records[i]!.message_id, pending[i]!);
          keyIndex.committed(c, records, keys);
          return;
        }
        // Not journaled (too large for the journal, or LMDB is refusing batches): committed
        // directly, with the room taken. Pending rows of c have lower ids, and reads merge
        // them: no order to keep.
      } else {
        bytes = estimate(charsOf(records));
        try {
          lease.room.take(bytes);
        } catch (error) {
          return refuse(to, error);
        }
      }
      directWrite(c, records, keys, bytes, to);
    },
    clear: async (c) => {
      ensureOpen();
      // Rows acknowledged before the clear go to LMDB first (so the clear removes them); if
      // LMDB refuses them (a full disk), c's are withheld and voided by the clear itself.
      const settled = ahead === undefined || (await ahead.settle().then(() => true, () => false));
      const clearing = (mark: () => void) => {
        lease.guardFailedCommits();
        return db.transaction(() => {
          mark();
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
          // Key rows of the earlier layout (key-index.ts).
          for (const key of rawDb.getKeys({ start: [c, KEY_ROW], end: [c, KEY_ROW_END] })) rawDb.remove(key);
        });
      };
      await (settled ? clearing(() => undefined) : ahead!.discard((puts) => (puts[0]![1] as [string, number])[0] === c && puts[0]![0] === MESSAGES_DB, clearing))
        .then(() => {
          keyIndex.forget(c);
          return db.flushed;
        })
        .catch(failedCommit);
    },
    close: () => {
      closed = true;
    },
  };
}
