/**
 * The layered memory's children of the root, after the memory they use:
 *
 *   ├── search_pool   piscina workers for large keyword scans (permanent; shutdown lets
 *   │                 running scans finish, then stops the threads)
 *   ├── recall        the recall service over its store (LMDB: the runtime's environment and
 *   │                 memory; PostgreSQL: the runtime's database), which it opens at start
 *   │                 (permanent; shutdown refuses new calls, waits for running ones, closes
 *   │                 the store)
 *   └── embeddings_sup  (only with `embeddings`; one_for_one, 5 restarts in 10 s)
 *       └── embed_drain   drains the embedding jobs in the background (permanent; a crash
 *                         restarts it from the queue in the store; shutdown lets the request
 *                         in flight end unstored)
 *
 * They hold no state of their own (everything lives in the store), so a restart is cheap and
 * loses nothing. The drain shares the recall service's store (published by its process). They come after the memory under the root's rest_for_one, so a restarted LMDB
 * environment or store restarts them too, and the service never holds a closed environment.
 * The recall service starts after the pool and is stopped before it (reverse order), so no
 * scan is sent to a closed pool. The drain sits under its own supervisor so that its restarts
 * (an endpoint's storage failure) never reach the root's rest_for_one: the recall service and
 * the children after it keep running while the drain restarts.
 */
import type { ChildSpec } from '../src/otp/index.ts';
import { ServiceSlot, start, startSupervisor } from '../src/otp/index.ts';
import { embedDrainServer } from '../src/recall/jobs/embed-drain-server.ts';
import type { EmbeddingDrain } from '../src/recall/jobs/embed-drain.ts';
import { resolveEmbeddingsOptions } from '../src/recall/embeddings/embeddings-options.ts';
import type { Recall, RecallOptions } from '../src/recall/recall-api.ts';
import { recallServer } from '../src/recall/recall-server.ts';
import type { RecallStore } from '../src/recall/storage/recall-store.ts';
import type { SearchPool, SearchPoolOptions } from '../src/recall/storage/lmdb/pool/search-pool.ts';
import { searchPoolServer } from '../src/recall/storage/lmdb/pool/search-pool-server.ts';

export interface RecallChildrenOptions {
  runtime: string;
  /** Opens the service's store when its process starts (it may be a restart); `pool`: the search pool published now (LMDB). */
  openStore: (pool: SearchPool | undefined) => RecallStore;
  service: Omit<RecallOptions, 'store' | 'embeddingsDrain'>;
  /** A search pool for the store (LMDB), or `false`: every scan inline. */
  pool: SearchPoolOptions | false;
  recallSlot: ServiceSlot<Recall>;
}

export const recallName = (runtime: string) => `${runtime}_recall`;
export const searchPoolName = (runtime: string) => `${runtime}_search_pool`;
export const embedDrainName = (runtime: string) => `${runtime}_embed_drain`;

export function recallChildren(options: RecallChildrenOptions): ChildSpec[] {
  const poolSlot = options.pool === false ? undefined : new ServiceSlot<SearchPool>();
  const storeSlot = new ServiceSlot<RecallStore>();

  const searchPool = (slot: ServiceSlot<SearchPool>, pool: SearchPoolOptions): ChildSpec => ({
    id: 'search_pool',
    restart: 'permanent',
    shutdown: 30_000,
    // Traps exits so the supervisor's shutdown runs terminate (closes the worker threads).
    start: () => start(searchPoolServer(slot, pool), { name: searchPoolName(options.runtime), trapExit: true }),
  });

  const embeddings = options.service.embeddings === undefined ? undefined : resolveEmbeddingsOptions(options.service.embeddings);
  const drainSlot = embeddings === undefined ? undefined : new ServiceSlot<EmbeddingDrain>();
  const embeddingsSup = (slot: ServiceSlot<EmbeddingDrain>, resolved: NonNullable<typeof embeddings>): ChildSpec => ({
    id: 'embeddings_sup',
    type: 'supervisor',
    restart: 'permanent',
    shutdown: 'infinity',
    start: () =>
      startSupervisor(
        {
          strategy: 'one_for_one',
          intensity: 5,
          period: 10,
          children: [
            {
              id: 'embed_drain',
              restart: 'permanent',
              shutdown: 30_000,
              start: () =>
                start(
                  embedDrainServer(slot, () => {
                    const store = storeSlot.current();
                    if (store === undefined) throw new Error('the recall store is not open');
                    return { store, embeddings: resolved };
                  }),
                  { name: embedDrainName(options.runtime), trapExit: true },
                ),
            },
          ],
        },
        { name: `${options.runtime}_embeddings_sup` },
      ),
  });

  const recall: ChildSpec = {
    id: 'recall',
    restart: 'permanent',
    shutdown: 30_000,
    start: () =>
      start(
        recallServer(options.recallSlot, storeSlot, {
          openStore: () => options.openStore(poolSlot?.current()),
          service: () => ({ ...options.service, ...(drainSlot === undefined ? {} : { embeddingsDrain: () => drainSlot.current() }) }),
        }),
        // Traps exits so the supervisor's shutdown runs terminate (closes the service).
        { name: recallName(options.runtime), trapExit: true },
      ),
  };

  const drain = drainSlot === undefined || embeddings === undefined ? [] : [embeddingsSup(drainSlot, embeddings)];
  return options.pool === false || poolSlot === undefined ? [recall, ...drain] : [searchPool(poolSlot, options.pool), recall, ...drain];
}
