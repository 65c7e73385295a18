/**
 * The layered memory's children of the root, after the memory they use:
 *
 *   ├── search_pool   piscina workers for large keyword scans (permanent; shutdown lets
 *   │                 running scans finish, then stops the threads)
 *   └── recall        the recall service over the runtime's memory and LMDB environment
 *                     (permanent; shutdown refuses new calls and waits for running ones)
 *
 * Both hold no state of their own (everything lives in LMDB), so a restart is cheap and loses
 * nothing. They come after the memory under the root's rest_for_one, so a restarted LMDB
 * environment or store restarts them too, and the service never holds a closed environment.
 * The recall service starts after the pool and is stopped before it (reverse order), so no
 * scan is sent to a closed pool.
 */
import type { ChildSpec, Pid } from '../src/otp/index.ts';
import { genServer, ServiceSlot, start } from '../src/otp/index.ts';
import { createRecall, createSearchPool, type Recall, type RecallOptions, type SearchPool, type SearchPoolOptions } from '../src/recall/index.ts';
import type { MessageLog } from '../src/memory/contract/message-log.ts';
import type { RootDatabase } from 'lmdb';

export interface RecallChildrenOptions {
  runtime: string;
  memory: MessageLog;
  /** The runtime's LMDB environment, read when the service starts (it may have restarted). */
  environment: () => { root: RootDatabase; path: string };
  service: Pick<RecallOptions, 'llm' | 'clock' | 'timeZone' | 'poolThreshold' | 'maxToolIterations' | 'summary'>;
  /** `false`: no pool, every scan runs inline (yielding to the event loop). */
  pool: SearchPoolOptions | false;
  recallSlot: ServiceSlot<Recall>;
}

export const recallName = (runtime: string) => `${runtime}_recall`;
export const searchPoolName = (runtime: string) => `${runtime}_search_pool`;

export function recallChildren(options: RecallChildrenOptions): ChildSpec[] {
  const poolSlot = new ServiceSlot<SearchPool>();
  const poolOptions = options.pool;

  const searchPool: ChildSpec = {
    id: 'search_pool',
    restart: 'permanent',
    shutdown: 30_000,
    start: () =>
      start(
        genServer<{ pool: SearchPool; pid: Pid }>({
          init: (_input, self) => {
            const pool = createSearchPool(poolOptions === false ? {} : poolOptions);
            poolSlot.publish(pool, self.pid);
            return { pool, pid: self.pid };
          },
          terminate: async (_reason, { pool, pid }) => {
            poolSlot.retract(pid);
            await pool.close();
          },
        }),
        // Traps exits so the supervisor's shutdown runs terminate (closes the worker threads).
        { name: searchPoolName(options.runtime), trapExit: true },
      ),
  };

  const recall: ChildSpec = {
    id: 'recall',
    restart: 'permanent',
    shutdown: 30_000,
    start: () =>
      start(
        genServer<{ service: Recall; pid: Pid }>({
          init: (_input, self) => {
            const pool = poolSlot.current();
            const service = createRecall({
              ...options.service,
              memory: options.memory,
              env: options.environment(),
              memoryInEnv: true,
              ...(pool === undefined ? {} : { pool }),
            });
            options.recallSlot.publish(service, self.pid);
            return { service, pid: self.pid };
          },
          terminate: async (_reason, { service, pid }) => {
            options.recallSlot.retract(pid);
            await service.close();
          },
        }),
        // Traps exits so the supervisor's shutdown runs terminate (closes the service).
        { name: recallName(options.runtime), trapExit: true },
      ),
  };

  return poolOptions === false ? [recall] : [searchPool, recall];
}
