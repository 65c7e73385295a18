import { Pool, type PoolClient, type PoolConfig } from 'pg';
import { InvalidInputError } from '../../errors.ts';
import type { Message, Meta, StoredMessage } from '../../message.ts';
import type { ClosableLog } from '../standalone-log.ts';
import type { ConversationSelection, ErasableLog } from '../contract/erasable-log.ts';
import { validateConversationId, validateEntries } from '../contract/validate-input.ts';
import type { NewEntry } from '../contract/message-log.ts';
import { StorageError } from '../contract/memory-errors.ts';
import { validatedLog } from '../contract/validated-log.ts';
import { isoWithOffset, systemWallClock, type WallClock } from '../../wall-clock.ts';
import { DEFAULT_SCHEMA, postgresStatements, type Statement } from './postgres-schema.ts';
import { createWritePath, type AppendItem } from './postgres-write-path.ts';
import { recordsDropped } from '../runtime/write-queue.ts';
import { toStorageError, type PostgresOperation } from './postgres-errors.ts';
import { ForkError } from '../contract/fork.ts';
import { IDEMPOTENCY_WINDOW_MS, KEY_SWEEP_EVERY_MS, KEY_SWEEP_LIMIT } from '../contract/idempotency.ts';

/**
 * A `MessageLog` in PostgreSQL that any number of Node processes can share.
 *
 * - Ids: the database assigns them (see postgres-schema.ts): an append is one statement that
 *   bumps the conversation's counter row and inserts the batch, so appenders in every process
 *   get 1, 2, 3, ... with no gap and no duplicate, and `clear` restarts the numbering at 1.
 *   Between processes, appends to one conversation are ordered by commit.
 * - Within this process each conversation's writes run one at a time in the order they were
 *   issued, and the appends of every conversation that are ready together go out as one
 *   statement (group commit across conversations, see postgres-write-path.ts).
 * - Durability: `add`/`append`/`clear` resolve once PostgreSQL acknowledged the commit, i.e.
 *   the WAL is flushed when `synchronous_commit` is on (the server's default).
 * - Read-your-writes: after a write resolves, every read of the same server (the primary, not
 *   a streaming replica), from any process, sees it.
 * - Messages round-trip exactly (`json` columns keep the text as written); `ts` is stamped from
 *   `clock` in the writer's process.
 * - Validation is the other backends' (`InvalidInputError`, nothing sent to the database).
 *   Database failures are typed: `storage_unavailable` while the server is unreachable (the
 *   store recovers by itself when it is back), `storage_full`, `storage_failed`; see
 *   storage-unavailable-error.ts. `close()` refuses new work (`store_closed`), lets what is
 *   running finish, then ends the pool if the store created it.
 * - Tables are created on first use, idempotently, even by many processes at once (`migrate`).
 */
export interface PostgresStore extends ClosableLog, ErasableLog {
  /** The PostgreSQL schema holding the store's tables. */
  readonly schema: string;
  /** Creates the schema and tables if missing. Optional: the first operation does it too. */
  migrate(): Promise<void>;
  /**
   * One round trip (`SELECT 1`, once the tables exist): resolves while the database answers,
   * else `StorageError` `storage_unavailable`. What `runtime.health()` (`/readyz`) asks.
   */
  probe(): Promise<void>;
}

/** What `createPostgresStore` takes: a connection (string or pool), the schema and the clock. */
export type PostgresStoreOptions = PostgresConnectionOption & {
  /** Schema for the tables (created if missing). Default `'mnemo'`. One schema, one store. */
  schema?: string;
  /** Where `ts` comes from. Default: the system clock. */
  clock?: WallClock;
};

/**
 * How the store reaches PostgreSQL: a connection string (it owns its pool) or your own `pg.Pool`.
 */
export type PostgresConnectionOption =
  | {
      /**
       * `postgres://user:password@host:port/database`. The store creates its own pool
       * (`max` 10 connections, 10 s connect timeout, TCP keep-alive) and ends it on `close()`.
       */
      connectionString: string;
      /** Not with `connectionString`. */
      pool?: never;
    }
  | {
      /** Your own `pg.Pool`, for full control of its options. `close()` leaves it open. */
      pool: Pool;
      /** Not with `pool`. */
      connectionString?: never;
    };

const ignore = () => {};

/**
 * A PostgreSQL store (see `PostgresStore`). Connects lazily: the first operation creates the tables
 * if missing.
 *
 * @throws `InvalidInputError` `invalid_option` without a `connectionString` or `pool`, or for a
 * `schema` that is not an SQL identifier.
 *
 * @example
 * ```ts
 * import { createPostgresStore } from 'mnemo/postgres';
 *
 * const store = createPostgresStore({ connectionString: 'postgres://postgres@127.0.0.1:5432/mnemo' });
 * await store.add('alice', [{ role: 'user', content: 'hello' }]);
 * console.log(await store.lastId('alice'));
 * await store.close();
 * ```
 */
export function createPostgresStore(options: PostgresStoreOptions): PostgresStore {
  const sql = postgresStatements(options.schema ?? DEFAULT_SCHEMA);
  const clock = options.clock ?? systemWallClock;
  const ownsPool = options.pool === undefined;
  if (ownsPool && (typeof options.connectionString !== 'string' || options.connectionString === '')) {
    throw new InvalidInputError('invalid_option', 'createPostgresStore needs a connectionString or a pool', { option: 'connectionString' });
  }
  const pool =
    options.pool ??
    new Pool({ connectionString: options.connectionString, max: 10, connectionTimeoutMillis: 10_000, keepAlive: true });
  // An idle pooled connection that the server closes (restart, idle timeout) is reported on the
  // pool; the pool has already dropped it, and without a listener Node would crash the process.
  pool.on('error', ignore);

  const running = new Set<Promise<unknown>>();
  let migrated: Promise<void> | undefined;
  let closing: Promise<void> | undefined;

  const ensureOpen = () => {
    if (closing !== undefined) throw new StorageError('store_closed', 'the store is closed');
  };

  const track = <T>(work: Promise<T>): Promise<T> => {
    running.add(work);
    const forget = () => running.delete(work);
    work.then(forget, forget);
    return work;
  };

  /** Runs `body` on one pooled connection; `sent()` marks the point after which a write may have committed. */
  async function withClient<T>(
    operation: PostgresOperation,
    conversationId: string | undefined,
    body: (client: PoolClient, sent: () => void) => Promise<T>,
  ): Promise<T> {
    let client: PoolClient;
    try {
      client = await pool.connect();
    } catch (error) {
      throw toStorageError(error, { operation, conversationId, sent: false });
    }
    // A connection dying between two statements is reported as an event, not to a query.
    client.on('error', ignore);
    let sent = false;
    try {
      const result = await body(client, () => (sent = true));
      client.off('error', ignore);
      client.release();
      return result;
    } catch (error) {
      client.off('error', ignore);
      client.release(true);
      throw toStorageError(error, { operation, conversationId, sent });
    }
  }

  const run = (client: PoolClient, statement: Statement, values: unknown[]) =>
    client.query({ name: statement.name, text: statement.text, values });

  function migrate(): Promise<void> {
    migrated ??= withClient('migrate', undefined, async (client) => {
      const exists = await run(client, sql.tablesExist, [[...sql.tables]]);
      if (exists.rows[0]?.ok === true) return;
      await client.query('BEGIN');
      try {
        // Concurrent CREATE ... IF NOT EXISTS can still collide in the catalogs: take turns.
        await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [sql.migrationLock]);
        await client.query(sql.ddl);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(ignore);
        throw error;
      }
    }).catch((error: unknown) => {
      migrated = undefined; // try again on the next call
      throw error;
    });
    return migrated;
  }

  /**
   * One batch, one transaction, whatever its conversations and keys. Without keys: the append
   * statement alone. With keys: BEGIN, the keys claimed (claimKeys), the claimed and unkeyed
   * entries appended with the claimed keys' first ids (appendKeyed), the taken keys' rows read,
   * COMMIT; then a taken key is answered with the records it stored, and nothing new is stored
   * for it. (Duplicate keys of one conversation never reach here: the write path collapses them.)
   */
  /** When the last sweep of expired keys was started (store clock). */
  let lastSweep = 0;

  async function appendBatch(items: readonly AppendItem[]): Promise<StoredMessage[][]> {
    await migrate();
    const now = clock.now();
    const ts = isoWithOffset(now);
    const where = items.length === 1 ? items[0]!.conversationId : `${items.length} conversations`;
    const keyed = items.filter((i) => i.key !== undefined);
    if (keyed.length === 0) {
      const result = await withClient('append', where, (client, sent) => {
        sent();
        return run(client, sql.append, entryArrays(items, false, ts));
      });
      return numberedRecords(items, basesOf(result.rows), ts);
    }
    const outcome = await withClient('append', where, async (client, sent) => {
      await client.query('BEGIN');
      try {
        const claimed = await claimAndAppend(client, items, now, ts);
        sent();
        await client.query('COMMIT');
        return claimed;
      } catch (error) {
        await client.query('ROLLBACK').catch(ignore);
        throw error;
      }
    });
    sweepKeysNow(now);
    return recordsOf(items, outcome, ts, (c, values) => read<RecordRow>(c, sql.range, values));
  }

  /** After a keyed batch (the store's, or one of the internals' callers), now and then: expired keys go. */
  function sweepKeysNow(now: number): void {
    if (now - lastSweep < KEY_SWEEP_EVERY_MS) return;
    lastSweep = now;
    // Its own statement, after the batch: expired rows of other conversations are not locked
    // inside a batch's transaction. A failed sweep is retried by a later batch.
    track(withClient('append', undefined, (client) => run(client, sql.sweepKeys, [now - IDEMPOTENCY_WINDOW_MS, KEY_SWEEP_LIMIT])).catch(() => (lastSweep = 0)));
  }

  /**
   * Inside the caller's transaction on `client`: the batch's keys claimed (claimKeys), the
   * claimed and unkeyed entries appended (append / appendKeyed), the taken keys' rows located.
   */
  async function claimAndAppend(client: PoolClient, items: readonly AppendItem[], now: number, ts: string): Promise<Claimed> {
    const keyed = items.filter((i) => i.key !== undefined);
    if (keyed.length === 0) {
      return { writing: items, bases: basesOf((await run(client, sql.append, entryArrays(items, false, ts))).rows), stored: new Map() };
    }
    const claim = await run(client, sql.claimKeys, [keyed.map((i) => i.conversationId), keyed.map((i) => i.key), keyed.map((i) => i.entries.length), now, now - IDEMPOTENCY_WINDOW_MS]);
    const won = new Set<string>(claim.rows.map((row: { conversation_id: string; key: string }) => pairOf(row.conversation_id, row.key)));
    const writing = items.filter((i) => i.key === undefined || won.has(pairOf(i.conversationId, i.key)));
    const taken = keyed.filter((i) => !won.has(pairOf(i.conversationId, i.key!)));
    const bases = writing.length === 0 ? new Map<string, number>() : basesOf((await run(client, sql.appendKeyed, entryArrays(writing, true, ts))).rows);
    const stored = new Map<string, { firstId: number; count: number }>();
    if (taken.length > 0) {
      const rows = await run(client, sql.storedKeys, [taken.map((i) => i.conversationId), taken.map((i) => i.key)]);
      for (const row of rows.rows as Array<{ conversation_id: string; key: string; first_id: string | number; count: number }>) {
        stored.set(pairOf(row.conversation_id, row.key), { firstId: Number(row.first_id), count: Number(row.count) });
      }
    }
    return { writing, bases, stored };
  }

  /** Per item, its records: numbered by this batch, or (a taken key) read back as stored under it. */
  async function recordsOf(
    items: readonly AppendItem[],
    outcome: Claimed,
    ts: string,
    range: (conversationId: string, values: unknown[]) => Promise<RecordRow[]>,
  ): Promise<StoredMessage[][]> {
    const fresh = numberedRecords(outcome.writing, outcome.bases, ts);
    const byItem = new Map<AppendItem, StoredMessage[]>(outcome.writing.map((item, i) => [item, fresh[i]!]));
    const out: StoredMessage[][] = [];
    // One at a time: `range` may run on the caller's one client.
    for (const item of items) {
      const mine = byItem.get(item);
      if (mine !== undefined) {
        out.push(mine);
        continue;
      }
      const found = outcome.stored.get(pairOf(item.conversationId, item.key!))!;
      const rows = await range(item.conversationId, [item.conversationId, found.firstId, found.firstId + found.count - 1, found.count]);
      out.push(rows.map(toRecord));
    }
    return out;
  }

  /** The append statements' per-entry arrays (and, keyed, each entry's key if it opens a keyed item). */
  function entryArrays(items: readonly AppendItem[], keyed: boolean, ts: string): unknown[] {
    const conversations: string[] = [];
    const messages: string[] = [];
    const metas: string[] = [];
    const systems: boolean[] = [];
    const keys: Array<string | null> = [];
    for (const { conversationId, entries, key } of items) {
      entries.forEach((e, i) => {
        conversations.push(conversationId);
        messages.push(JSON.stringify(e.message));
        metas.push(JSON.stringify(e.meta));
        systems.push(e.message.role === 'system');
        keys.push(i === 0 && key !== undefined ? key : null);
      });
    }
    return keyed ? [conversations, messages, metas, ts, systems, keys] : [conversations, messages, metas, ts, systems];
  }

  async function clearNow(c: string): Promise<void> {
    await migrate();
    await withClient('clear', c, async (client, sent) => {
      await client.query('BEGIN');
      try {
        await clearOn(client, c);
        sent();
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(ignore);
        throw error;
      }
    });
  }

  /** Inside the caller's transaction: conversation `c` is cleared (its forks keep their prefix). */
  async function clearOn(client: PoolClient, c: string): Promise<void> {
    // The counter first: its row lock waits for in-flight appends to this conversation, and
    // the second statement's fresh snapshot then sees (and deletes) what they committed.
    await run(client, sql.clearCounter, [c]);
    // Forks reading from c get their prefix as their own rows first (fork.ts).
    await run(client, sql.materializeForks, [c]);
    await run(client, sql.dropForksOf, [c]);
    await run(client, sql.dropFork, [c]);
    await run(client, sql.clearMessages, [c]);
    await run(client, sql.clearKeys, [c]);
  }

  /** Inside the caller's transaction: the selected conversations are locked, then erased; how many existed. */
  async function eraseOn(client: PoolClient, ids: readonly string[], prefixes: readonly string[]): Promise<number> {
    const locked = await run(client, sql.eraseLock, [ids, prefixes]);
    await run(client, sql.eraseRows, [ids, prefixes]);
    return locked.rowCount ?? 0;
  }

  /** Inside the caller's transaction: the fork's link and counter; the refusal, if refused (nothing written). */
  async function forkOn(client: PoolClient, newId: string, source: string, at: number): Promise<ForkError | undefined> {
    // FOR SHARE: a clear of the source (which deletes this row first) waits, or went first.
    const last = await run(client, sql.sourceLastId, [source]);
    const sourceLast = last.rows[0] === undefined ? 0 : Number((last.rows[0] as { last_id: string | number }).last_id);
    if (at > sourceLast) {
      return new ForkError('fork_point_missing', `conversation ${source} has no message ${at} (its last id is ${sourceLast})`, { source, at, lastId: sourceLast });
    }
    const claimed = await run(client, sql.claimForkCounter, [newId, at]);
    if (claimed.rowCount === 0) return new ForkError('fork_target_exists', `conversation ${newId} already has messages`, { conversationId: newId });
    await run(client, sql.insertFork, [newId, source, at]);
    return undefined;
  }

  /**
   * `eraseConversations`: in ONE transaction, the selected conversations' counter rows are
   * locked (in id order), then their messages, system-message keys and counters deleted. A
   * concurrent append to one of them commits before (and is erased) or after (and starts at 1).
   */
  async function eraseNow(selection: ConversationSelection): Promise<number> {
    const ids = [...selection.ids];
    const prefixes = [...selection.prefixes];
    await migrate();
    return withClient('clear', `${ids.length} conversations and ${prefixes.length} prefixes`, async (client, sent) => {
      await client.query('BEGIN');
      try {
        const n = await eraseOn(client, ids, prefixes);
        sent();
        await client.query('COMMIT');
        return n;
      } catch (error) {
        await client.query('ROLLBACK').catch(ignore);
        throw error;
      }
    });
  }

  async function forkNow(newId: string, source: string, at: number): Promise<void> {
    await migrate();
    const refused = await withClient('append', newId, async (client, sent) => {
      await client.query('BEGIN');
      try {
        const refusal = await forkOn(client, newId, source, at);
        if (refusal !== undefined) {
          await client.query('ROLLBACK');
          return refusal;
        }
        sent();
        await client.query('COMMIT');
        return undefined;
      } catch (error) {
        await client.query('ROLLBACK').catch(ignore);
        throw error;
      }
    });
    if (refused !== undefined) throw refused;
  }

  const writes = createWritePath({ append: appendBatch, clear: clearNow, fork: forkNow }, track);

  async function read<R>(c: string, statement: Statement, values: unknown[]): Promise<R[]> {
    await migrate();
    const result = await withClient('read', c, (client) => run(client, statement, values));
    return result.rows as R[];
  }

  const toRecord = (row: RecordRow): StoredMessage => ({
    message_id: Number(row.message_id),
    ts: row.ts,
    meta: JSON.parse(row.meta) as Meta,
    message: JSON.parse(row.message) as Message,
  });

  const store: PostgresStore = {
    schema: sql.schema,
    migrate: () => {
      ensureOpen();
      return track(migrate());
    },
    probe: () => {
      ensureOpen();
      return track(migrate().then(() => withClient('read', undefined, async (client) => void (await client.query('SELECT 1')))));
    },
    ...validatedLog({
      checkOpen: ensureOpen,
      get: async (c) => {
        const rows = await track(read<{ message: string }>(c, sql.messages, [c]));
        return rows.map((row) => JSON.parse(row.message) as Message);
      },
      append: (c, entries, options) => writes.submit<StoredMessage[]>(c, (done) => ({ kind: 'append', entries, key: options.idempotencyKey, done })),
      add: (c, entries, options) =>
        writes.submit<void>(c, (done) => ({ kind: 'append', entries, key: options.idempotencyKey, done: recordsDropped(() => done.resolve(), (error) => done.reject(error)) })),
      clear: async (c) => {
        await writes.submit<boolean>(c, (done) => ({ kind: 'clear', done }));
      },
      fork: (source, at, newId) => writes.submit<void>(newId, (done) => ({ kind: 'fork', source, at, done })),
      range: async (c, q) => (await track(read<RecordRow>(c, sql.range, [c, q.from, q.to, q.limit]))).map(toRecord),
      tail: async (c, n) => (n === 0 ? [] : (await track(read<RecordRow>(c, sql.tail, [c, n]))).map(toRecord)),
      systemMessages: async (c) => (await track(read<RecordRow>(c, sql.systemMessages, [c]))).map(toRecord),
      lastId: async (c) => {
        const rows = await track(read<{ last_id: string | number }>(c, sql.lastId, [c]));
        return rows[0] === undefined ? 0 : Number(rows[0].last_id);
      },
    }),
    async eraseConversations(selection: ConversationSelection): Promise<number> {
      const ids = (selection?.ids ?? []).map((c) => validateConversationId(c));
      const prefixes = selection?.prefixes ?? [];
      for (const p of prefixes) {
        if (typeof p !== 'string' || p === '') throw new InvalidInputError('invalid_option', 'an erasure prefix must be a non-empty string', { option: 'prefixes' });
      }
      ensureOpen();
      if (ids.length === 0 && prefixes.length === 0) return 0;
      return track(eraseNow({ ids, prefixes }));
    },
    close(): Promise<void> {
      closing ??= (async () => {
        while (running.size > 0) await Promise.allSettled([...running]);
        if (ownsPool) await pool.end();
        pool.off('error', ignore);
      })();
      return closing;
    },
  };
  INTERNALS.set(store, {
    pool,
    schema: sql.schema,
    migrate,
    track,
    checkOpen: ensureOpen,
    newPool: (max) =>
      ownsPool
        ? new Pool({ connectionString: options.connectionString, max, connectionTimeoutMillis: 10_000, keepAlive: true })
        : new Pool({ ...(pool as Pool & { options: PoolConfig }).options, max }),
    async append(client, items) {
      const now = clock.now();
      const ts = isoWithOffset(now);
      const checked = items.map((i) => ({ conversationId: validateConversationId(i.conversationId), entries: validateEntries(i.entries), key: i.key }));
      const outcome = await claimAndAppend(client, checked, now, ts);
      if (checked.some((i) => i.key !== undefined)) sweepKeysNow(now);
      const range = async (_c: string, values: unknown[]) => (await run(client, sql.range, values)).rows as RecordRow[];
      return recordsOf(checked, outcome, ts, range);
    },
    clear: clearOn,
    erase: eraseOn,
    fork: forkOn,
    async lastId(client, c, lock = false) {
      const rows = (await run(client, lock ? sql.lockedLastId : sql.lastId, [c])).rows as Array<{ last_id: string | number }>;
      return rows[0] === undefined ? 0 : Number(rows[0].last_id);
    },
    async tail(client, c, n) {
      return ((await run(client, sql.tail, [c, n])).rows as RecordRow[]).map(toRecord);
    },
    async range(client, c, from, to, limit) {
      return ((await run(client, sql.range, [c, from, to, limit])).rows as RecordRow[]).map(toRecord);
    },
  });
  return store;
}

/**
 * @internal What the PostgreSQL adapters of other layers (the layered memory's
 * `createPostgresRecallStore`) use to write transcript rows inside THEIR transaction, through
 * the same statements as the store's own writes (so the numbering, keys and forks are this
 * file's, not copied): each function runs on the caller's client, inside its open transaction.
 */
export interface PostgresStoreInternals {
  readonly pool: Pool;
  readonly schema: string;
  /** The store's tables exist (run once). */
  migrate(): Promise<void>;
  /** Work `close()` waits for. */
  track<T>(work: Promise<T>): Promise<T>;
  /** Throws `store_closed` once the store is closing. */
  checkOpen(): void;
  /** A new pool on the same server and options, with `max` connections (the caller ends it). */
  newPool(max: number): Pool;
  /** Validates and appends each item (keys claimed as `append` does); per item its records. */
  append(client: PoolClient, items: ReadonlyArray<{ conversationId: string; entries: readonly NewEntry[]; key?: string | undefined }>): Promise<StoredMessage[][]>;
  clear(client: PoolClient, conversationId: string): Promise<void>;
  erase(client: PoolClient, ids: readonly string[], prefixes: readonly string[]): Promise<number>;
  fork(client: PoolClient, newId: string, source: string, at: number): Promise<ForkError | undefined>;
  /** `lock`: the counter row stays locked until the caller's commit (appends to it wait). */
  lastId(client: PoolClient, conversationId: string, lock?: boolean): Promise<number>;
  tail(client: PoolClient, conversationId: string, n: number): Promise<StoredMessage[]>;
  range(client: PoolClient, conversationId: string, from: number, to: number, limit: number): Promise<StoredMessage[]>;
}

const INTERNALS = new WeakMap<object, PostgresStoreInternals>();

/** @internal The internals of a store made by `createPostgresStore`; `undefined` for any other log. */
export function postgresStoreInternals(log: unknown): PostgresStoreInternals | undefined {
  return typeof log === 'object' && log !== null ? INTERNALS.get(log) : undefined;
}

/** The transaction's claims (claimAndAppend): the items written, their id bases, the taken keys' rows. */
interface Claimed {
  writing: readonly AppendItem[];
  bases: Map<string, number>;
  stored: Map<string, { firstId: number; count: number }>;
}

/** A `(conversation, key)` pair as one map key (neither contains NUL). */
const pairOf = (conversationId: string, key: string): string => `${conversationId}\u0000${key}`;

/** The append statement's rows: each conversation's id base (its first new id - 1). */
function basesOf(rows: ReadonlyArray<{ conversation_id: string; base: string | number }>): Map<string, number> {
  return new Map(rows.map((row) => [row.conversation_id, Number(row.base)]));
}

/** The records of `items` as the append statement numbered them: in order within each conversation. */
function numberedRecords(items: readonly AppendItem[], bases: ReadonlyMap<string, number>, ts: string): StoredMessage[][] {
  const next = new Map<string, number>();
  return items.map(({ conversationId, entries }) => {
    const base = next.get(conversationId) ?? bases.get(conversationId)!;
    next.set(conversationId, base + entries.length);
    return entries.map((e, i) => ({ message_id: base + i + 1, ts, meta: e.meta, message: e.message }));
  });
}

/** A message row as selected: ids may come back as strings (bigint) or numbers (custom parsers). */
interface RecordRow {
  message_id: string | number;
  ts: string;
  meta: string;
  message: string;
}
