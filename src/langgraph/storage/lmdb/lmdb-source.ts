import type { Database, DatabaseOptions, Key, RootDatabase } from 'lmdb';
import { InvalidInputError } from '../../../errors.ts';
import { acquireEnvironment, durableTransaction, roomFor, type LmdbEnvironmentOptions } from '../../../memory/lmdb/lmdb-environment.ts';
import { estimate } from '../../../memory/lmdb/disk-room.ts';
import { StorageError } from '../../../memory/contract/memory-errors.ts';
import type { Runtime } from '../../../runtime.ts';

/**
 * The LMDB sources of the LangGraph saver and store (langgraph-source.ts has the PostgreSQL
 * ones), an LMDB environment shared with the rest of Mnemo:
 * - `{ runtime }`: the runtime's environment (its `storage.openDB`), so checkpoints, messages
 *   and recall data share commits; the saver's thread writers join the runtime's tree;
 * - `{ path }`: standalone, the environment of that directory (shared with every other Mnemo
 *   user of the same directory in this process, released on `close()`);
 * - `{ root }`: an environment you opened yourself with lmdb-js (you close it).
 */
export type LmdbSource =
  | {
      /** A running runtime with LMDB storage. */
      readonly runtime: Runtime;
    }
  | {
      /** A data directory. */
      readonly path: string;
      /** The environment's options when this is the first user of the directory in the process. */
      readonly lmdb?: LmdbEnvironmentOptions;
    }
  | {
      /** An open lmdb-js root database. */
      readonly root: RootDatabase;
    };

export interface OpenedSource {
  readonly root: RootDatabase;
  /** Data directory, for error reports. */
  readonly path: string;
  /** The runtime's name when the source is a runtime (its tree adopts the saver's writers). */
  readonly runtimeName: string | undefined;
  openDB<V, K extends Key>(name: string, options?: DatabaseOptions): Database<V, K>;
  /** Throws `store_closed` once the environment was released (or the runtime stopped). */
  checkOpen(): void;
  /**
   * Runs `work` (synchronous) in a write transaction and resolves once it is committed and
   * flushed: what resolves survives a crash. First takes room for about `bytes` of values
   * (disk-room.ts; 0 for a removal): refused with `storage_full`, nothing issued, when the
   * disk has too little. Failures become StorageErrors.
   */
  transact<T>(bytes: number, work: () => T): Promise<T>;
  release(): Promise<void>;
}

export function openSource(source: LmdbSource): OpenedSource {
  if (typeof source !== 'object' || source === null) {
    throw new InvalidInputError('invalid_option', 'pass { runtime }, { path } or { root }');
  }
  if ('runtime' in source) {
    const storage = source.runtime.storage;
    if (storage.kind !== 'lmdb') {
      throw new InvalidInputError('invalid_option', `the runtime's storage is '${storage.kind}': this source needs its LMDB storage`);
    }
    // `storage.root` throws `store_closed` once the runtime stopped; after `runtime.compact()`
    // it is another environment, and this one's handles are closed (a write through them
    // would throw inside lmdb-js, uncaught).
    const root = storage.root;
    return opened(root, storage.path, source.runtime.name, (name, options) => storage.openDB(name, options ?? {}), async () => {}, () => {
      if (storage.root !== root) {
        throw new StorageError('store_closed', "the runtime's LMDB environment was reopened by runtime.compact(): create the LangGraph saver or store again");
      }
    });
  }
  if ('path' in source) {
    if (typeof source.path !== 'string' || source.path === '') throw new InvalidInputError('invalid_option', 'path must be a directory name');
    const lease = acquireEnvironment(source.path, source.lmdb ?? {});
    let released = false;
    return opened(
      lease.root,
      lease.path,
      undefined,
      (name, options) => lease.root.openDB(name, options ?? {}),
      () => {
        released = true;
        return lease.release();
      },
      () => {
        if (released) throw new StorageError('store_closed', 'the LangGraph saver or store is closed');
      },
    );
  }
  if ('root' in source) {
    const root = source.root;
    return opened(root, String((root as { path?: unknown }).path ?? ''), undefined, (name, options) => root.openDB(name, options ?? {}), async () => {}, () => {});
  }
  throw new InvalidInputError('invalid_option', 'pass { runtime }, { path } or { root }');
}

function opened(
  root: RootDatabase,
  path: string,
  runtimeName: string | undefined,
  openDB: (name: string, options?: DatabaseOptions) => Database<unknown, Key>,
  release: () => Promise<void>,
  checkOpen: () => void,
): OpenedSource {
  let guardQueued = false;
  // lmdb 3.5.6 leaves the batch's own commit promise unhandled when a commit fails (see
  // lmdb-environment.ts); handle it after lmdb created it, at the end of this turn.
  const guard = () => {
    if (guardQueued) return;
    guardQueued = true;
    setImmediate(() => {
      guardQueued = false;
      // A thenable, not a promise: see lmdb-environment.ts.
      root.committed.then(() => undefined, () => undefined);
    });
  };
  return {
    root,
    path,
    runtimeName,
    checkOpen,
    openDB: <V, K extends Key>(name: string, options?: DatabaseOptions) => openDB(name, options) as unknown as Database<V, K>,
    transact: async <T>(bytes: number, work: () => T) => {
      checkOpen();
      return durableTransaction({ root, path, room: roomFor(path, root), guard }, bytes > 0 ? estimate(bytes) : 0, work);
    },
    release,
  };
}
