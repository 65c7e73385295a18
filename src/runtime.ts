/**
 * startRuntime: Mnemo's application. It starts the supervision tree of supervisors/root.ts
 * and hands back its handle.
 *
 * - `memory`: the default store as a `MessageLog`. Writes go through one actor per
 *   conversation (serialized, numbered 1, 2, 3, ..., group-committed) and resolve once on the
 *   disk (LMDB: in the write-ahead journal, or committed and flushed); reads go straight to
 *   storage and see every resolved write.
 * - `storage`: what the store is built on. With LMDB, layers that keep their own data (the
 *   layered recall memory) open named databases in the same environment with
 *   `storage.openDB(name, options)`, so their writes share commits with the messages.
 * - `compact()`: a compacted copy (LMDB's page copy, or with `{ copy: 'rebuild' }` a rebuild
 *   that keeps no byte of anything erased) swapped in for the data file while writers and
 *   readers wait (online-compaction.ts).
 * - `inspect()` / `events`: the live tree and its start/exit/restart/escalate/fatal events.
 * - `liveConversations` / `health()`: for operators' metrics and readiness probes.
 * - `stop()`: stops the tree right to left (conversation actors commit what they hold; the
 *   environment holder flushes, yields a turn and closes LMDB). Writes after `stop()` began
 *   reject with `store_closed`.
 * - If restarts exceed the root's intensity, the tree stops itself the same way and
 *   `events` reports `fatal`; `exited` resolves with the root's exit reason.
 */
import type { Database, DatabaseOptions, RootDatabase } from 'lmdb';
import { InvalidInputError } from './errors.ts';
import type { MessageLog } from './memory/contract/message-log.ts';
import { conversationHooks } from './memory/runtime/conversation-actor.ts';
import { ConversationRouter } from './memory/runtime/conversation-router.ts';
import { bindDefaultMemory } from './memory/runtime/default-memory.ts';
import { acquireEnvironment } from './memory/lmdb/lmdb-environment.ts';
import type { CopyMethod } from './memory/lmdb/compacting-copy.ts';
import { MESSAGES_DB } from './memory/lmdb/lmdb-table.ts';
import { createRoutedLog } from './memory/runtime/runtime-memory.ts';
import type { ClosableLog } from './memory/standalone-log.ts';
import { StorageError } from './memory/contract/memory-errors.ts';
import { StorageSlot } from './memory/runtime/storage-slot.ts';
import { onlineCompactions, type OnlineCompactionReport } from './memory/runtime/online-compaction.ts';
import type { StorageKind } from './memory/runtime/store-actor.ts';
import {
  call,
  ServiceSlot,
  startApplication,
  type EventStream,
  type ExitReason,
  type TreeEvent,
  type TreeNode,
} from './otp/index.ts';
import { conversationSupName } from '../supervisors/conversation-sup.ts';
import { ENVIRONMENT_ID, environmentHolderName, rootName, rootSpec } from '../supervisors/root.ts';
import { recallChildren } from '../supervisors/recall.ts';
import { retentionChildren, retentionSweeperName } from '../supervisors/retention-sup.ts';
import { conversationTtls } from './memory/lmdb/conversation-ttl.ts';
import { lmdbRetentionStorage } from './retention/lmdb-retention.ts';
import { createRetentionSweep, type SweepCursor, type SweepReport, type TtlOverrides } from './retention/retention-sweep.ts';
import { localRounds, queuedRounds } from './retention/sweep-rounds.ts';
import { resolveRuntimeOptions, type RuntimeOptions, type RuntimeRecallOptions } from './runtime-options.ts';
import type { Recall, RecallOptions } from './recall/recall-api.ts';

export type { RuntimeOptions, RuntimeRecallOptions } from './runtime-options.ts';
export type { RuntimeParts, RuntimeStorage } from './runtime-parts.ts';
import type { RuntimeParts, RuntimeStorage } from './runtime-parts.ts';
import { createLmdbRecallStore } from './recall/storage/lmdb/lmdb-recall-store.ts';
import type { RecallStore } from './recall/storage/recall-store.ts';
import { resolveEmbeddingsOptions } from './recall/embeddings/embeddings-options.ts';
import { supervisedRecall, type SupervisedRecall } from './recall/supervised-recall.ts';
import { RecallUnavailableError } from './recall/recall-errors.ts';

export interface Runtime extends RuntimeParts {
  /**
   * The Agent Memory Demo's layered memory (sessions, daily view, long-term memory, dialogue
   * log, search and windows, the chat turn), on LMDB or on PostgreSQL (`{ postgres }`, or a
   * `{ store }` made by `createPostgresStore`: in the same database). Calls wait while its
   * process restarts; with other storage (or `recall: false`) they reject with
   * `recall_unavailable`.
   */
  readonly recall: SupervisedRecall;
  /** Per-conversation TTLs and the sweep (LMDB storage; see `RuntimeRetention`). */
  readonly retention: RuntimeRetention;
  /** A snapshot of the live supervision tree. */
  inspect(): TreeNode;
  /** The tree's start, exit, restart, start_error, escalate and fatal events (`TreeEvent`). */
  readonly events: EventStream<TreeEvent>;
  /** Conversation actors alive now (read from the router: costs nothing). */
  readonly liveConversations: number;
  /**
   * Whether the runtime can take writes: the tree is running, the store is open and, with
   * LMDB, a one-key probe write to its `mnemo_health` database commits; with PostgreSQL (a
   * store with a `probe()`), the database answers a `SELECT 1` within 2 s. (Other storage counts
   * as writable while its store actor holds it: a probe would have to write a message.)
   */
  health(): Promise<RuntimeHealth>;
  /**
   * LMDB storage: replaces `data.mdb` with a compacted copy while the runtime runs. By default
   * LMDB's compacting copy (`copy: 'pages'`): free pages, and the bytes of erased values in
   * them, are left behind, but an erased key can stay as a branch page's separator. With
   * `copy: 'rebuild'` a new environment written entry by entry: no byte of anything erased,
   * keys included (what `recall.eraseUser(u, { compact: true })` runs); slower, by the number
   * of entries (README: Retention and erasure). The children of the tree stop
   * (gracefully), the copy is written and swapped in, they start again; meanwhile writes and
   * reads through `memory` and `recall` wait, then succeed (none is refused). Kill-safe at any
   * point: the directory opens with the old file or the new one, every acknowledged write in it.
   * Handles of `storage.root`/`storage.openDB` opened before are closed. Resolves with the sizes
   * and the pause; rejects with `invalid_option` for other storage, `storage_full` when the
   * disk has no room for the copy, `environment_shared` when something else in the process holds
   * the environment, `store_closed` once stopping. Call it from outside the tree: a child
   * of the tree awaiting it would wait for its own stop.
   */
  compact(options?: { copy?: CopyMethod }): Promise<OnlineCompactionReport>;
  /** Resolves with the root's exit reason once the tree is gone (stopped, or fatal). */
  readonly exited: Promise<ExitReason>;
  /**
   * Stops the tree right to left: conversation actors commit what they hold, the environment is
   * flushed and closed (and a store the runtime made from `{ postgres }` closed). Idempotent;
   * writes after it began reject with `store_closed`.
   */
  stop(): Promise<void>;
}

/** What `runtime.health()` reports (for readiness probes). */
export interface RuntimeHealth {
  /** Whether the supervision tree runs. */
  tree: 'running' | 'stopped';
  /** Whether the store is open (closed while stopped or compacting). */
  storage: 'open' | 'closed';
  /** Whether a write would be taken now (LMDB: a probe write committed). */
  writable: boolean;
  /** Why it is not writable (the probe's error code or message). */
  error?: string;
}

/** The LMDB database the readiness probe writes one key to. */
export const HEALTH_DB = 'mnemo_health';

/**
 * Per-conversation TTLs and the retention sweep (`runtime.retention`). The sweep runs on LMDB
 * and PostgreSQL (there as one job of recall's queue, so one runtime of many runs each round);
 * per-conversation TTLs too (in LMDB's environment, or PostgreSQL's schema): `setTtl`/`getTtl`
 * reject with `invalid_option` on other storage.
 */
export interface RuntimeRetention {
  /**
   * The conversation's own idle TTL: `ms` (a positive integer), `null` (never expires), or
   * `undefined` (back to `retention.idleTtlMs`). For a recall session, its conversation id is
   * `sessionConversationId(user, session)`. Stored in LMDB; erased with the conversation.
   */
  setTtl(conversationId: string, ms: number | null | undefined): Promise<void>;
  /** The conversation's own TTL; `undefined` when it has none. */
  getTtl(conversationId: string): Promise<number | null | undefined>;
  /** Runs one tick of the sweep now (through the sweeper process); rejects when retention is off. */
  sweep(): Promise<SweepReport>;
}


/**
 * Starts Mnemo: the supervision tree with the default store (`memory`), the layered memory
 * (`recall`, on LMDB or PostgreSQL) and the retention sweeper (when asked), and binds `defaultMemory()` to its
 * store. Resolves once the tree runs. One process per LMDB data directory.
 *
 * @throws `InvalidInputError` `invalid_option` for a bad `idleMs`, `maxLiveConversations` or
 * `storage`, or `retention` without LMDB or PostgreSQL storage (on PostgreSQL, without recall).
 * @throws `StorageError` `data_dir_locked` when another live process holds `dataDir`
 * (`details.pid`); `storage_full` when the disk has no room to open it.
 *
 * @example
 * ```ts
 * import { startRuntime } from 'mnemo';
 *
 * const runtime = await startRuntime({ dataDir: './data' });
 * await runtime.memory.add('alice', [{ role: 'user', content: 'hello' }]);
 * console.log(await runtime.memory.get('alice')); // survives a restart: it is on disk
 * const { reply } = await runtime.recall.chat({ userId: 'alice', sessionId: 's1', message: 'Hi, I am Alice.' });
 * console.log(reply); // offline without an `llm`: the Demo's fallback reply
 * await runtime.stop();
 * ```
 */
export async function startRuntime(options: RuntimeOptions = {}): Promise<Runtime> {
  const { name, idleMs, maxLive, dataDir, wallClock, recall: recallOptions, retention: retentionChecked, storage: choice } = resolveRuntimeOptions(options);
  /** A store the runtime made (from `{ postgres }`), so closes after the tree. */
  let ownedStore: ClosableLog | undefined;
  const kind: StorageKind =
    choice.kind === 'postgres'
      ? // Loaded only when asked for: it imports `pg`.
        { kind: 'custom', store: (ownedStore = (await import('./memory/postgres/index.ts')).createPostgresStore({ connectionString: choice.url, ...(choice.schema === undefined ? {} : { schema: choice.schema }) })) }
      : choice;

  const slot = new StorageSlot();
  const router = new ConversationRouter({ runtime: name, supervisorName: conversationSupName(name), idleMs, maxLive });
  const hooks = conversationHooks(options.faults);
  const memory = createRoutedLog(router, slot);
  const storage = describeStorage(kind, slot);
  const parts: RuntimeParts = { name, memory, storage };
  const recallSlot = new ServiceSlot<Recall>();
  let stopping: Promise<void> | undefined;
  /** Compactions asked for and not done (health says `compacting` meanwhile). */
  let compacting = 0;
  const compactions = onlineCompactions({
    root: rootName(name),
    holder: environmentHolderName(name),
    holderId: ENVIRONMENT_ID,
    router,
    ...(options.faults?.compactStep ? { step: (s) => options.faults?.compactStep?.(s) } : {}),
  });
  const compact = async (how: { copy?: CopyMethod } = {}): Promise<OnlineCompactionReport> => {
    if (kind.kind !== 'lmdb') throw new InvalidInputError('invalid_option', 'compaction needs LMDB storage', { option: 'storage' });
    if (stopping !== undefined) throw new StorageError('store_closed', `runtime ${name} is stopped`);
    if (how.copy !== undefined && how.copy !== 'pages' && how.copy !== 'rebuild') {
      throw new InvalidInputError('invalid_option', `compact: copy must be 'pages' or 'rebuild', got ${String(how.copy)}`, { option: 'copy' });
    }
    compacting++;
    try {
      return await compactions.run(how.copy ?? 'pages');
    } finally {
      compacting--;
    }
  };
  // An erasure's compaction must leave no byte of the user: a rebuild (docs/guides/retention-and-erasure.md).
  const recallHandle = supervisedRecall(
    recallSlot,
    () => compact({ copy: 'rebuild' }),
    () =>
      kind.kind === 'lmdb'
        ? undefined
        : new InvalidInputError(
            'invalid_option',
            'eraseUser { compact: true } needs LMDB storage (it rewrites the data directory); without it the erasure is still complete: on PostgreSQL one transaction, whose space VACUUM reclaims',
            { option: 'compact' },
          ),
  );
  // PostgreSQL storage (`{ postgres }`, or a `{ store }` made by createPostgresStore): the layered
  // memory in the same database, beside the transcripts (loaded only then: it imports `pg`).
  const postgresRecall =
    kind.kind === 'custom' && recallOptions !== false && looksLikePostgresStore(kind.store)
      ? await import('./recall/storage/postgres/index.ts')
      : undefined;
  const postgresTranscripts = postgresRecall !== undefined && kind.kind === 'custom' && postgresRecall.isPostgresStore(kind.store) ? kind.store : undefined;
  /** The PostgreSQL recall store now open (the retention sweep's job is on its queue). */
  let postgresRecallStore: RecallStore | undefined;
  const recall =
    recallOptions === false
      ? []
      : storage.kind === 'lmdb'
        ? recallChildren({
            runtime: name,
            openStore: (pool) =>
              createLmdbRecallStore({
                env: { root: storage.root, path: storage.path, ahead: slot.lease?.ahead, room: slot.lease?.room },
                transcripts: memory,
                pool,
                ...(recallOptions.poolThreshold === undefined ? {} : { poolThreshold: recallOptions.poolThreshold }),
                ...(recallOptions.embeddings === undefined ? {} : { embeddings: true, vectorPoolThreshold: resolveEmbeddingsOptions(recallOptions.embeddings).poolThreshold }),
                ...(recallOptions.clock === undefined ? {} : { clock: recallOptions.clock }),
                ...(recallOptions.language === undefined ? {} : { language: recallOptions.language }),
              }),
            service: withoutStoreOptions(recallOptions),
            pool: recallOptions.pool ?? {},
            recallSlot,
          })
        : postgresRecall !== undefined && postgresTranscripts !== undefined
          ? recallChildren({
              runtime: name,
              // The transcripts are the PostgreSQL store itself: a turn's rows commit in the
              // recall store's transaction, through the store's own statements.
              openStore: () =>
                (postgresRecallStore = postgresRecall.createPostgresRecallStore({
                  transcripts: postgresTranscripts,
                  ...(recallOptions.embeddings === undefined ? {} : { embeddings: true }),
                  ...(recallOptions.language === undefined ? {} : { language: recallOptions.language }),
                })),
              service: withoutStoreOptions(recallOptions),
              // No search pool: PostgreSQL does the heavy reads.
              pool: false,
              recallSlot,
            })
          : [];
  // Loaded only on PostgreSQL, as the recall adapter is.
  const postgresRetention = postgresTranscripts !== undefined ? await import('./retention/postgres-retention.ts') : undefined;
  const ttls: TtlOverrides =
    postgresRetention !== undefined && postgresTranscripts !== undefined
      ? postgresRetention.postgresTtls(postgresTranscripts)
      : conversationTtls(
          () => lmdbOnly(storage).root,
          () => lmdbOnly(storage).path,
        );
  if (retentionChecked !== undefined && storage.kind !== 'lmdb' && postgresTranscripts === undefined) {
    throw new InvalidInputError('invalid_option', 'retention needs LMDB or PostgreSQL storage', { option: 'retention' });
  }
  const retention =
    retentionChecked === undefined
      ? []
      : retentionChildren({
          runtime: name,
          sweepEveryMs: retentionChecked.sweepEveryMs,
          rounds: () => {
            const sweep = createRetentionSweep(
              {
                storage:
                  postgresRetention !== undefined && postgresTranscripts !== undefined
                    ? postgresRetention.postgresRetentionStorage(postgresTranscripts)
                    : lmdbRetentionStorage(() => lmdbOnly(storage).root, memory),
                ttls,
                deleteSession: recall.length === 0 ? undefined : (u, s, ifLastId) => recallHandle.deleteSession(u, s, { ifLastId }),
              },
              { idleTtlMs: retentionChecked.idleTtlMs, perTick: retentionChecked.perTick, clock: retentionChecked.clock ?? wallClock },
            );
            const round = (from: SweepCursor) => sweep.tick(from);
            return postgresTranscripts === undefined
              ? localRounds(round)
              : queuedRounds(() => postgresRecallStore!.jobs, round, { everyMs: retentionChecked.sweepEveryMs, leaseMs: SWEEP_LEASE_MS });
          },
        });
  if (recall.length === 0) {
    recallSlot.close(
      new RecallUnavailableError(recallOptions === false ? 'the runtime was started with recall: false' : 'the layered memory needs LMDB or PostgreSQL storage'),
    );
  }

  const spec = rootSpec(
    {
      runtime: name,
      slot,
      storage: kind,
      lmdb: { path: dataDir, options: options.lmdb ?? {} },
      faults: options.faults,
      conversations: {
        deps: () => {
          const table = slot.current();
          if (table === undefined) throw new StorageError('store_closed', 'the store is not running');
          return { table, clock: wallClock, router, hooks, observer: options.observer };
        },
        ...(options.clock ? { clock: options.clock } : {}),
        onStarted: () => router.supervisorStarted(),
      },
    },
    [...recall, ...retention, ...(options.children?.(parts) ?? [])],
  );

  const closed = new StorageError('store_closed', `runtime ${name} is stopped`);
  let unbind: () => void = () => {};
  const shutDown = async () => {
    recallSlot.close(closed);
    router.close(closed);
    slot.close(closed);
    unbind();
    await slot.releaseEnvironment();
    await ownedStore?.close();
  };

  let app;
  try {
    // Opened (and the directory locked) before the tree starts, so a `data_dir_locked` or
    // `storage_full` reaches the caller as it is; the holder adopts the lease.
    if (kind.kind === 'lmdb') slot.lease ??= acquireEnvironment(dataDir, options.lmdb ?? {});
    app = await startApplication(spec, { name: rootName(name), ...(options.clock ? { clock: options.clock } : {}) });
  } catch (error) {
    await shutDown();
    throw error;
  }
  unbind = bindDefaultMemory(memory);
  app.onFatal(() => void shutDown());

  let treeRunning = true;
  void app.exited.then(() => (treeRunning = false));
  let healthDb: { root: RootDatabase; db: Database<number, string> } | undefined;
  const health = async (): Promise<RuntimeHealth> => {
    const tree = treeRunning && stopping === undefined ? 'running' : 'stopped';
    const open = tree === 'running' && slot.current() !== undefined;
    if (!open) return { tree, storage: 'closed', writable: false, ...(tree === 'running' && compacting > 0 ? { error: 'compacting' } : {}) };
    if (kind.kind === 'custom') return probeStore(kind.store, tree);
    if (kind.kind !== 'lmdb') return { tree, storage: 'open', writable: true };
    try {
      const root = slot.lease?.root;
      if (root === undefined) return { tree, storage: 'closed', writable: false };
      // Per environment: a compaction closes the old one, and a write through its handle would throw.
      if (healthDb?.root !== root) healthDb = { root, db: root.openDB<number, string>(HEALTH_DB, { encoding: 'json' }) };
      const probe = healthDb.db;
      await probe.put('probe', Date.now());
      return { tree, storage: 'open', writable: true };
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      return { tree, storage: 'open', writable: false, error: typeof code === 'string' ? code : String((error as Error).message ?? error) };
    }
  };
  /** Per-conversation TTLs live in LMDB's environment or PostgreSQL's schema. */
  const ttlStorage = () => {
    if (postgresTranscripts === undefined) lmdbOnly(storage);
  };
  return {
    ...parts,
    recall: recallHandle,
    retention: {
      setTtl: async (c, ms) => {
        ttlStorage();
        return ttls.set(c, ms);
      },
      getTtl: async (c) => {
        ttlStorage();
        return ttls.get(c);
      },
      sweep: async () => {
        if (retention.length === 0) throw new InvalidInputError('invalid_option', 'the runtime was started without retention', { option: 'retention' });
        return call<SweepReport>(retentionSweeperName(name), { type: 'sweep' }, { timeoutMs: Infinity });
      },
    },
    inspect: () => app.inspect(),
    events: app.events,
    get liveConversations() {
      return router.liveActors;
    },
    health,
    compact,
    exited: app.exited,
    stop: () =>
      (stopping ??= (async () => {
        router.close(closed);
        // A compaction running finishes first (its children start again, then stop with the
        // rest); writes it held are refused with the rest (store_closed).
        await compactions.idle();
        try {
          await app.stop();
        } finally {
          await shutDown();
        }
      })()),
  };
}

/** The service's own options, without those of the store (the pool and its threshold). */
function withoutStoreOptions(options: RuntimeRecallOptions): Omit<RecallOptions, 'store' | 'embeddingsDrain'> {
  const { pool: _pool, poolThreshold: _threshold, ...service } = options;
  return service;
}

function lmdbOnly(storage: RuntimeStorage): Extract<RuntimeStorage, { kind: 'lmdb' }> {
  if (storage.kind !== 'lmdb') throw new InvalidInputError('invalid_option', 'per-conversation TTLs need LMDB storage, or PostgreSQL with recall', { option: 'storage' });
  return storage;
}

/** A store made by createPostgresStore, told without loading `pg` (the module checks for sure). */
function looksLikePostgresStore(store: MessageLog): boolean {
  const s = store as Partial<{ schema: unknown; migrate: unknown; eraseConversations: unknown }>;
  return typeof s.schema === 'string' && typeof s.migrate === 'function' && typeof s.eraseConversations === 'function';
}

/** A sweep round's lease on a shared database: a process killed mid-round holds the sweep this long. */
const SWEEP_LEASE_MS = 5 * 60_000;

/** How long a store's `probe()` may take before the runtime counts as not writable. */
const PROBE_TIMEOUT_MS = 2_000;

/**
 * A custom store's health: writable while its `probe()` (a PostgreSQL store's `SELECT 1`)
 * answers within PROBE_TIMEOUT_MS; a store without one counts as writable while held.
 */
async function probeStore(store: MessageLog, tree: RuntimeHealth['tree']): Promise<RuntimeHealth> {
  const probe = (store as Partial<{ probe: () => Promise<void> }>).probe;
  if (typeof probe !== 'function') return { tree, storage: 'open', writable: true };
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      probe.call(store),
      new Promise((_, reject) => (timer = setTimeout(() => reject(new StorageError('storage_unavailable', 'the storage did not answer the probe in time')), PROBE_TIMEOUT_MS))),
    ]);
    return { tree, storage: 'open', writable: true };
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return { tree, storage: 'open', writable: false, error: typeof code === 'string' ? code : 'storage_failed' };
  } finally {
    clearTimeout(timer);
  }
}


function describeStorage(kind: StorageKind, slot: StorageSlot): RuntimeStorage {
  if (kind.kind === 'memory') return { kind: 'memory' };
  if (kind.kind === 'custom') return { kind: 'custom', store: kind.store };
  const lease = () => {
    const held = slot.lease;
    if (held === undefined) throw new StorageError('store_closed', 'the LMDB environment is closed');
    return held;
  };
  return {
    kind: 'lmdb',
    get path() {
      return lease().path;
    },
    get root() {
      return lease().root;
    },
    openDB<V, K extends import('lmdb').Key>(dbName: string, dbOptions: DatabaseOptions = {}): Database<V, K> {
      if (dbName === MESSAGES_DB) throw new InvalidInputError('invalid_option', `'${MESSAGES_DB}' is the message store's database`);
      return lease().root.openDB<V, K>(dbName, dbOptions);
    },
  };
}
