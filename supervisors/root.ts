/**
 * mnemo_root: the root of a runtime's tree.
 *
 *   root (rest_for_one, 3 restarts in 5 s)
 *   ├── lmdb_environment   holds the LMDB environment (LMDB storage only)
 *   ├── default_memory     the store singleton, registered as `<runtime>_default_memory`
 *   ├── conversations      conversation_sup (dynamic, transient conversation actors)
 *   └── ...extra children  (search pool, HTTP server: added by the layers that need them)
 *
 * rest_for_one, because each child depends on the ones started before it: the store builds
 * its table over the environment; conversation actors hold the store's table and the last id
 * they read from it. If the store restarts (an in-memory store comes back empty) the actors'
 * last ids may be stale, so they must restart after it; if the environment holder restarts,
 * everything after it does. A crash of the conversation supervisor leaves the store alone.
 * Extra children come last, so they restart when the memory they use does.
 *
 * `runtime.compact()` (src/memory/runtime/online-compaction.ts) stops the children after the
 * environment holder the same way, right to left, has the holder swap in the compacted data
 * file, and starts them again left to right, without a restart (no intensity spent).
 *
 * Intensity exceeded: the root stops its children right to left (the environment holder last,
 * which flushes and closes LMDB) and the application reports `fatal`.
 */
import type { ChildSpec, SupervisorSpec } from '../src/otp/index.ts';
import { start } from '../src/otp/index.ts';
import { environmentHolder } from '../src/memory/runtime/environment-holder.ts';
import type { LmdbEnvironmentOptions } from '../src/memory/lmdb/lmdb-environment.ts';
import { storeActor, type StorageKind } from '../src/memory/runtime/store-actor.ts';
import type { StorageSlot } from '../src/memory/runtime/storage-slot.ts';
import type { FaultInjector } from '../src/memory/runtime/fault-injector.ts';
import { conversationSupChild, type ConversationSupOptions } from './conversation-sup.ts';

export interface RootOptions {
  /** The runtime's name, the prefix of every registered name in the tree. */
  runtime: string;
  slot: StorageSlot;
  storage: StorageKind;
  /** For LMDB storage: the data directory and environment options. */
  lmdb: { path: string; options: LmdbEnvironmentOptions };
  faults: FaultInjector | undefined;
  conversations: Omit<ConversationSupOptions, 'runtime'>;
}

export const defaultMemoryName = (runtime: string) => `${runtime}_default_memory`;
export const environmentHolderName = (runtime: string) => `${runtime}_lmdb_environment`;
/** The environment holder's child id (runtime.compact() stops the children after it). */
export const ENVIRONMENT_ID = 'lmdb_environment';
export const rootName = (runtime: string) => `${runtime}_root`;

export function rootSpec(options: RootOptions, extraChildren: readonly ChildSpec[] = []): SupervisorSpec {
  const { runtime, slot, storage } = options;
  const environment: ChildSpec = {
    id: ENVIRONMENT_ID,
    restart: 'permanent',
    shutdown: 5000,
    start: () => start(environmentHolder(slot, options.lmdb.path, options.lmdb.options), { name: environmentHolderName(runtime), trapExit: true }),
  };
  const store: ChildSpec = {
    id: 'default_memory',
    restart: 'permanent',
    shutdown: 5000,
    start: () => start(storeActor(slot, storage, options.faults), { name: defaultMemoryName(runtime) }),
  };
  return {
    strategy: 'rest_for_one',
    intensity: 3,
    period: 5,
    children: [
      ...(storage.kind === 'lmdb' ? [environment] : []),
      store,
      conversationSupChild({ runtime, ...options.conversations }),
      ...extraChildren,
    ],
  };
}
