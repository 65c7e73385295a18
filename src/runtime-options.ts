/**
 * The options of `startRuntime`, and their resolver: every option is checked, defaulted and
 * turned into what the runtime builds from, before anything is started or connected, so a bad
 * option throws `InvalidInputError` (`invalid_option`, with `details.option`) and leaves
 * nothing open (as `resolveEmbeddingsOptions` does for recall's embeddings).
 */
import { InvalidInputError } from './errors.ts';
import type { MessageLog } from './memory/contract/message-log.ts';
import type { FaultInjector } from './memory/runtime/fault-injector.ts';
import type { LmdbEnvironmentOptions } from './memory/lmdb/lmdb-environment.ts';
import type { WriteObserver } from './memory/runtime/write-queue.ts';
import { systemWallClock, type WallClock } from './wall-clock.ts';
import type { ChildSpec, Clock } from './otp/index.ts';
import { resolveRetentionOptions, type RetentionOptions } from './retention/retention-sweep.ts';
import type { RecallOptions } from './recall/recall-api.ts';
import type { SearchPoolOptions } from './recall/storage/lmdb/pool/search-pool.ts';
import type { RuntimeParts } from './runtime-parts.ts';

/** What `startRuntime` takes; every field is optional. */
export interface RuntimeOptions {
  /**
   * Prefix of every registered name in the tree (`<name>_default_memory`, ...). Default
   * `'mnemo'`. Two runtimes in one process need different names.
   */
  name?: string;
  /** LMDB data directory. Default `'./data'`. Ignored unless `storage` is `'lmdb'`. */
  dataDir?: string;
  /**
   * - `'lmdb'` (default): durable, in `dataDir`;
   * - `'memory'`: in process memory, owned by the store actor (lost when it restarts, like
   *   beamai's ETS store);
   * - `{ store }`: your own `MessageLog`, still behind the per-conversation actors;
   * - `{ postgres: url }`: the PostgreSQL store (`createPostgresStore`), shared by every
   *   process pointed at the same database; the runtime closes its pool on `stop()`.
   */
  storage?:
    | 'lmdb'
    | 'memory'
    | {
        /** Your own store. */
        store: MessageLog;
      }
    | {
        /** A PostgreSQL connection string, `postgres://user:password@host:port/database`. */
        postgres: string;
        /** The schema of Mnemo's tables (created if missing). Default `'mnemo'`. One schema, one store. */
        schema?: string;
      };
  /** LMDB environment options (see `LmdbEnvironmentOptions`: each with its default and cost). */
  lmdb?: LmdbEnvironmentOptions;
  /**
   * How long a conversation actor stays without writes before it passivates (checked by a
   * sweep every `idleMs / 2`, so it happens within 1.5 × idleMs). Default 60 000 ms. Shorter
   * frees memory sooner; a passivated conversation costs one last-id read (a one-row reverse
   * scan) when it is used again.
   */
  idleMs?: number;
  /**
   * Most conversation actors alive at once. Default 10 000. Beyond it, the least recently
   * written idle actors passivate before `idleMs` (a live conversation holds ~2-3 KB), so memory
   * stays bounded however many conversations are touched at once; a passivated conversation
   * costs one last-id read when it is used again.
   */
  maxLiveConversations?: number;
  /** Time for restart intensity (monotonic ms). Default `performance.now()`. */
  clock?: Clock;
  /** Time stamped on records (`ts`). Default `Date.now()`. */
  wallClock?: WallClock;
  /** Deliberate failures, for tests (`createFaultInjector` from `mnemo/testing`). */
  faults?: FaultInjector;
  /**
   * The layered memory (`runtime.recall`), supervised under the root after the memory: a
   * piscina search pool and the recall service. LMDB or PostgreSQL storage (the same
   * database as the messages; a `{ store }` of your own has none). Default `{}`: on, offline
   * (no `llm`: the Agent Memory Demo's fallback replies and titles), system clock and time
   * zone, a pool of half the cores. `pool: false` runs every scan inline; `false` leaves the
   * layered memory out.
   */
  recall?: RuntimeRecallOptions | false;
  /** Told of every committed append batch (metrics). Default none: then it costs nothing. */
  observer?: WriteObserver;
  /**
   * Retention of idle conversations (retention-sweep.ts): a supervised sweeper clears each
   * conversation (and deletes each recall session) with no append for `idleTtlMs`, or for its
   * own TTL (`runtime.retention.setTtl`). LMDB or PostgreSQL storage (with recall: the
   * sweep is a job of its queue, run by one process of many at a time). Default: off, nothing expires.
   */
  retention?: RetentionOptions | false;
  /** More children for the root, after the memory and recall (HTTP server, ...). */
  children?: (runtime: RuntimeParts) => readonly ChildSpec[];
}

/**
 * The layered memory's options in a runtime (`RuntimeOptions.recall`): `createRecall`'s, without
 * the store (the runtime opens it in its LMDB environment), plus the search pool.
 */
export interface RuntimeRecallOptions extends Omit<RecallOptions, 'store' | 'embeddingsDrain'> {
  /** A search pool of worker threads for large scans (LMDB); `false`: every scan inline. Default: half the cores. */
  pool?: SearchPoolOptions | false;
  /** Rows in scope above which a keyword scan goes to the pool. Default 20 000. */
  poolThreshold?: number;
}


export const DEFAULT_DATA_DIR = './data';
export const DEFAULT_IDLE_MS = 60_000;
export const DEFAULT_MAX_LIVE_CONVERSATIONS = 10_000;

/** The storage `resolveRuntimeOptions` found asked for. */
export type StorageChoice =
  | { kind: 'lmdb' }
  | { kind: 'memory' }
  | { kind: 'custom'; store: MessageLog }
  | { kind: 'postgres'; url: string; schema?: string };

/** `RuntimeOptions`, checked and defaulted. */
export interface ResolvedRuntimeOptions {
  name: string;
  dataDir: string;
  storage: StorageChoice;
  idleMs: number;
  maxLive: number;
  wallClock: WallClock;
  recall: RuntimeRecallOptions | false;
  /** The retention sweep's settings; `undefined`: off. */
  retention: (Required<Omit<RetentionOptions, 'clock'>> & { clock?: WallClock }) | undefined;
}

/** Checks and defaults `RuntimeOptions` (see the file's contract). */
export function resolveRuntimeOptions(options: RuntimeOptions): ResolvedRuntimeOptions {
  const name = options.name ?? 'mnemo';
  if (typeof name !== 'string' || name === '') throw invalid('name', 'name must be a non-empty string');
  const idleMs = options.idleMs ?? DEFAULT_IDLE_MS;
  if (typeof idleMs !== 'number' || !Number.isFinite(idleMs) || idleMs < 0) throw invalid('idleMs', 'idleMs must be a non-negative number of ms');
  const maxLive = options.maxLiveConversations ?? DEFAULT_MAX_LIVE_CONVERSATIONS;
  if (!Number.isSafeInteger(maxLive) || maxLive < 1) throw invalid('maxLiveConversations', 'maxLiveConversations must be a positive integer');
  const storage = storageChoice(options.storage ?? 'lmdb');
  const retentionOption = options.retention ?? false;
  const retention = retentionOption === false ? undefined : { ...resolveRetentionOptions(retentionOption), ...(retentionOption.clock === undefined ? {} : { clock: retentionOption.clock }) };
  // A custom store is checked by startRuntime (a PostgreSQL one is told by its internals).
  if (retention !== undefined && storage.kind === 'memory') throw invalid('retention', 'retention needs LMDB or PostgreSQL storage');
  if (retention !== undefined && storage.kind !== 'lmdb' && options.recall === false) {
    throw invalid('retention', "retention on PostgreSQL needs recall: its sweep is a job of recall's job queue");
  }
  return {
    name,
    dataDir: options.dataDir ?? DEFAULT_DATA_DIR,
    storage,
    idleMs,
    maxLive,
    wallClock: options.wallClock ?? systemWallClock,
    recall: options.recall ?? {},
    retention,
  };
}

function storageChoice(storage: NonNullable<RuntimeOptions['storage']>): StorageChoice {
  if (storage === 'lmdb' || storage === 'memory') return { kind: storage };
  if (typeof storage === 'object' && storage !== null) {
    if ('store' in storage && typeof storage.store === 'object' && storage.store !== null) return { kind: 'custom', store: storage.store };
    if ('postgres' in storage && typeof storage.postgres === 'string' && storage.postgres !== '') {
      return { kind: 'postgres', url: storage.postgres, ...(storage.schema === undefined ? {} : { schema: storage.schema }) };
    }
  }
  throw invalid('storage', "storage must be 'lmdb', 'memory', { store: MessageLog } or { postgres: url }");
}

function invalid(option: string, message: string): InvalidInputError {
  return new InvalidInputError('invalid_option', message, { option });
}
