import { availableParallelism } from 'node:os';
import { pathToFileURL } from 'node:url';
import type { Piscina } from 'piscina';
import { SearchPoolClosedError } from '../../../recall-errors.ts';
import { fromSources, packageFile, requireHere } from '../../../../module-location.ts';
import type { StoredMessage } from '../../../../message.ts';
import type { DailyRecord } from '../../../records/records.ts';
import type { RankedDoc } from '../../recall-store.ts';
import type { SearchJob } from './search-job.ts';
import type { RankJob, RowTerms } from './rank-jobs.ts';
import type { VectorJob } from './vector-job.ts';

/**
 * The pool that runs large keyword scans, large ranked queries and index rebuilds' tokenizing off the event loop (piscina worker threads running
 * `search-worker.ts`). Its owner (the runtime, as a supervised child) closes it; `close` lets
 * running scans finish, then stops the threads. A job sent after `close` is refused with
 * `SearchPoolClosedError` (`pool_closed`). Close the pool before the LMDB environment.
 *
 * Options: `maxThreads` (default: half the cores, at least 1: scans are CPU work and the main
 * thread needs a core), `idleTimeout` ms before an idle thread exits (default 30 000, so a burst
 * of searches does not pay a thread start each).
 */
export interface SearchPoolOptions {
  /** Threads at most. Default half the cores, at least 1. */
  maxThreads?: number;
  /** Ms before an idle thread exits. Default 30 000. */
  idleTimeout?: number;
}

/**
 * Worker threads for the LMDB recall store's large scans, made by {@link createSearchPool}: pass
 * it as `createLmdbRecallStore({ pool })` (the runtime makes and supervises its own, see
 * `RuntimeRecallOptions.pool`). Its owner closes it, before the LMDB environment.
 */
export interface SearchPool {
  /** @internal A large keyword scan of a user's daily rows (the store's, not an application's). */
  run(job: Extract<SearchJob, { kind: 'daily' }>): Promise<DailyRecord[]>;
  /** @internal A large keyword scan of one session. */
  run(job: Extract<SearchJob, { kind: 'session' }>): Promise<StoredMessage[]>;
  /** @internal A large ranked query (search/bm25-query.ts). */
  run(job: Extract<RankJob, { kind: 'rank' }>): Promise<RankedDoc[]>;
  /** @internal The tokenizing half of an index rebuild (search/rebuild.ts). */
  run(job: Extract<RankJob, { kind: 'terms' }>): Promise<RowTerms[]>;
  /** @internal A large brute-force vector scan (embeddings/vector-job.ts): `[doc, cosine]`, best first. */
  run(job: VectorJob): Promise<[number, number][]>;
  /** Scans running or queued now. */
  readonly pending: number;
  /** Scans finished so far (successfully or not). */
  readonly completed: number;
  /** True once `close` was called: every later job is refused with `SearchPoolClosedError`. */
  readonly closed: boolean;
  /** Lets running and queued scans finish, then stops the threads. Idempotent. */
  close(): Promise<void>;
}

/** A search pool (see `SearchPoolOptions`). No thread starts before the first large scan. */
export function createSearchPool(options: SearchPoolOptions = {}): SearchPool {
  const maxThreads = options.maxThreads ?? Math.max(1, Math.floor(availableParallelism() / 2));
  // Loaded and built on the first scan: a runtime that never searches a large session (most
  // restarts, every CLI call that only reads) pays neither piscina's modules nor its setup.
  let piscina: Promise<Piscina> | undefined;
  const threads = () =>
    (piscina ??= import('piscina').then(
      ({ Piscina }) =>
        new Piscina({
          filename: packageFile('recall/storage/lmdb/pool/search-worker').href,
          minThreads: 0,
          maxThreads,
          idleTimeout: options.idleTimeout ?? 30_000,
          execArgv: workerExecArgv(),
        }),
    ));
  let closed = false;
  let closing: Promise<void> | undefined;
  let completed = 0;
  const inFlight = new Set<Promise<unknown>>();
  const pool = {
    run(job: SearchJob | RankJob | VectorJob): Promise<DailyRecord[] | StoredMessage[] | RankedDoc[] | RowTerms[] | [number, number][]> {
      if (closed) return Promise.reject(new SearchPoolClosedError());
      const result = threads().then((p) => p.run(job)) as Promise<DailyRecord[] | StoredMessage[] | RankedDoc[] | RowTerms[] | [number, number][]>;
      const settled = result.then(
        () => undefined,
        () => undefined,
      );
      inFlight.add(settled);
      void settled.then(() => {
        inFlight.delete(settled);
        completed++;
      });
      return result;
    },
    get pending() {
      return inFlight.size;
    },
    get completed() {
      return completed;
    },
    get closed() {
      return closed;
    },
    close() {
      closed = true;
      // piscina's own close can cut off a job still waiting for its thread to start.
      closing ??= Promise.all(inFlight).then(async () => (await piscina)?.close());
      return closing;
    },
  };
  return pool as SearchPool;
}

/**
 * From dist the worker is JavaScript and needs nothing. From the sources it is TypeScript:
 * under `tsx` the threads inherit its loader from `execArgv`; under another runner (vitest) the
 * loader is added, so the worker loads the same way everywhere (tsx is a devDependency).
 */
function workerExecArgv(): string[] {
  const argv = process.execArgv;
  if (!fromSources || argv.some((a) => a.includes('tsx'))) return argv;
  const loader = pathToFileURL(requireHere.resolve('tsx')).href;
  return [...argv, '--import', loader];
}
