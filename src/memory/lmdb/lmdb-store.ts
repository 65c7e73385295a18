import { acquireEnvironment, type LmdbEnvironmentOptions } from './lmdb-environment.ts';
import { createLmdbTable } from './lmdb-table.ts';
import { createSerialLog, type ClosableLog } from '../standalone-log.ts';
import type { WallClock } from '../../wall-clock.ts';
import type { ConditionalClear } from '../contract/conditional-clear.ts';

export interface LmdbStoreOptions extends LmdbEnvironmentOptions {
  /** Directory of the LMDB environment (created if missing). Required. */
  path: string;
  /** Where `ts` comes from. Default: the system clock. */
  clock?: WallClock;
}

export interface LmdbStore extends ClosableLog, ConditionalClear {
  /** The resolved data directory. */
  readonly path: string;
}

/**
 * A standalone durable store in LMDB (see lmdb-table.ts for the layout): `add`/`append`
 * resolve once the batch is committed and flushed, so what resolved survives a process kill.
 * Opens the environment synchronously, shared with every other user of the same directory in
 * this process. `close()` lets pending writes finish, then releases the environment (closed
 * when its last user releases it).
 *
 * Use it outside a runtime; inside one, `runtime.memory` is the same store with its writes
 * routed through per-conversation actors.
 *
 * @throws `StorageError` `data_dir_locked` when another live process holds the directory;
 * `InvalidInputError` `invalid_option` for a bad option.
 *
 * @example
 * ```ts
 * import { createLmdbStore } from 'mnemo';
 *
 * const store = createLmdbStore({ path: './data' });
 * const [record] = await store.append('alice', [{ message: { role: 'user', content: 'hello' }, meta: { via: 'cli' } }]);
 * console.log(record?.message_id, await store.tail('alice', 10)); // 1, on disk once it resolved
 * await store.close();
 * ```
 */
export function createLmdbStore(options: LmdbStoreOptions): LmdbStore {
  const { path, clock, ...envOptions } = options;
  const lease = acquireEnvironment(path, envOptions);
  const table = createLmdbTable(lease);
  const log = createSerialLog(table, {
    ...(clock ? { clock } : {}),
    onClose: async () => {
      table.close();
      await lease.release();
    },
  });
  return Object.assign(log, { path: lease.path });
}
