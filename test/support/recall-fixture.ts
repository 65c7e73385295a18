import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LlmService } from '../../src/llm/llm-service.ts';
import { acquireEnvironment } from '../../src/memory/lmdb/lmdb-environment.ts';
import { createLmdbStore } from '../../src/memory/lmdb/lmdb-store.ts';
import { createPostgresStore } from '../../src/memory/postgres/index.ts';
import { createPostgresRecallStore } from '../../src/postgres.ts';
import { it } from 'vitest';
import { dropSchema } from './postgres-server.ts';
import { createLmdbRecallStore, createRecall, type Recall, type RecallOptions, type RecallStore, type SearchPool } from '../../src/recall/index.ts';

/** A manual wall clock: starts at `start` (an ISO instant) and moves only when told. */
export interface ManualClock {
  now(): number;
  set(iso: string): void;
  advance(ms: number): void;
}

export function manualClock(start = '2026-04-08T10:00:00+08:00'): ManualClock {
  let t = Date.parse(start);
  return {
    now: () => t,
    set: (iso) => {
      t = Date.parse(iso);
    },
    advance: (ms) => {
      t += ms;
    },
  };
}

export const ZONE = 'Asia/Shanghai';

export interface RecallFixture {
  dir: string;
  recall: Recall;
  clock: ManualClock;
  memory: ReturnType<typeof createLmdbStore>;
  env: ReturnType<typeof acquireEnvironment>;
  store: RecallStore;
  /** Closes recall, store and environment, and deletes the directory. */
  close(): Promise<void>;
}

/**
 * A real recall service on a real LMDB environment in a temp directory: the session store and
 * the recall databases share the environment, as inside the runtime. The environment skips
 * fsync (`noSync`): these suites test behaviour, not durability (the memory layer's suites
 * kill processes for that), and a turn's four flushes would dominate their run time.
 */
export interface RecallFixtureOptions extends Partial<Omit<RecallOptions, 'store'>> {
  llm?: LlmService;
  dir?: string;
  /** The LMDB store's search pool and its thresholds. */
  pool?: SearchPool;
  poolThreshold?: number;
  rankPoolThreshold?: number;
  /** False: session rows are read through the MessageLog, not straight from LMDB. Default true. */
  directReads?: boolean;
}

/** True in vitest's `recall-postgres` project: `openRecall` gives the PostgreSQL adapter. */
export const onPostgres = process.env['MNEMO_RECALL_ENGINE'] === 'postgres';

/**
 * A test of the LMDB adapter itself (its databases, its transactions, its pool) inside a suite
 * that otherwise tests behaviour through the port: skipped in the `recall-postgres` project.
 */
export const itLmdb = it.skipIf(onPostgres);

/** Schemas kept by `openRecall({ dir })` on PostgreSQL (for a reopen), dropped after the file (recall-on-postgres.ts). */
export const keptSchemas = new Set<string>();

export function openRecall(options: RecallFixtureOptions = {}): RecallFixture {
  // MNEMO_RECALL_ENGINE=postgres (with MNEMO_PG_URL): the same suites on the PostgreSQL adapter.
  if (onPostgres) return openPostgresRecall(options);
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'mnemo-recall-'));
  const clock = (options.clock as ManualClock | undefined) ?? manualClock();
  const env = acquireEnvironment(dir, { noSync: true });
  const memory = createLmdbStore({ path: dir, clock });
  const { pool, poolThreshold, rankPoolThreshold, directReads, dir: _dir, ...service } = options;
  const store = createLmdbRecallStore({
    env,
    transcripts: memory,
    clock,
    ...(pool === undefined ? {} : { pool }),
    ...(poolThreshold === undefined ? {} : { poolThreshold }),
    ...(rankPoolThreshold === undefined ? {} : { rankPoolThreshold }),
    ...(directReads === undefined ? {} : { directReads }),
    ...(options.embeddings === undefined ? {} : { embeddings: true }),
    ...(options.language === undefined ? {} : { language: options.language }),
  });
  const recall = createRecall({ timeZone: ZONE, ...service, clock, store });
  let closed = false;
  return {
    dir,
    recall,
    clock,
    memory,
    env,
    store,
    async close() {
      if (closed) return;
      closed = true;
      await recall.close();
      await store.close();
      await memory.close();
      await new Promise((r) => setTimeout(r, 0));
      await env.release();
      if (!options.dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * `openRecall` on the PostgreSQL adapter: the recall suites' behaviour checks on the other
 * engine. Without `dir`, a fresh schema dropped by `close`; with `dir` (a suite that closes and
 * opens its store again, as a restart), the schema named after the directory, kept by `close`
 * (as LMDB's directory is) and dropped after the file. `env` is not there; tests that need it
 * are LMDB's own (`itLmdb`).
 */
function openPostgresRecall(options: RecallFixtureOptions): RecallFixture {
  const url = process.env['MNEMO_PG_URL'];
  if (url === undefined || url === '') throw new Error('MNEMO_RECALL_ENGINE=postgres needs MNEMO_PG_URL');
  const kept = options.dir !== undefined;
  const schema = kept
    ? `recall_dir_${createHash('sha256').update(options.dir!).digest('hex').slice(0, 16)}`
    : `recall_fx_${process.pid}_${Math.random().toString(16).slice(2, 10)}`;
  if (kept) keptSchemas.add(schema);
  const clock = (options.clock as ManualClock | undefined) ?? manualClock();
  const memory = createPostgresStore({ connectionString: url, schema, clock });
  const { pool: _pool, poolThreshold: _p, rankPoolThreshold: _r, directReads: _d, dir: _dir, ...service } = options;
  const store = createPostgresRecallStore({
    transcripts: memory,
    ...(options.embeddings === undefined ? {} : { embeddings: true }),
    ...(options.language === undefined ? {} : { language: options.language }),
  });
  const recall = createRecall({ timeZone: ZONE, ...service, clock, store });
  // No LMDB here: the directory is only a name (of the schema, when given).
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'mnemo-recall-pg-'));
  let closed = false;
  return {
    dir,
    recall,
    clock,
    memory: memory as unknown as RecallFixture['memory'],
    env: undefined as unknown as RecallFixture['env'],
    store,
    async close() {
      if (closed) return;
      closed = true;
      await recall.close();
      await store.close();
      await memory.close();
      if (kept) return;
      await dropSchema(url, schema);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
