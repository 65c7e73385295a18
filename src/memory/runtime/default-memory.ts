import type { MessageLog } from '../contract/message-log.ts';
import { createLmdbStore, type LmdbStore } from '../lmdb/lmdb-store.ts';

/**
 * `defaultMemory()`, beamai's `ensure_default_store`: the store a caller gets without naming one:
 * - while a runtime is running, its supervised store (`runtime.memory`; with several
 *   runtimes, the one started last);
 * - otherwise an unsupervised LMDB store under `./data`, opened on first use, with a one-time
 *   process warning (`MNEMO_ORPHAN_MEMORY`). It is never closed; it shares the environment
 *   with a runtime later started on `./data`, but writes to one conversation should then go
 *   through one of the two only.
 */
const bound: MessageLog[] = [];
let orphan: LmdbStore | undefined;

export const ORPHAN_DATA_DIR = './data';

/**
 * The store a caller gets without naming one: the running runtime's `memory` (the last started),
 * else an unsupervised LMDB store under `./data` (see above).
 */
export function defaultMemory(): MessageLog {
  const supervised = bound[bound.length - 1];
  if (supervised !== undefined) return supervised;
  if (orphan === undefined) {
    process.emitWarning(
      `no Mnemo runtime is running; defaultMemory() falls back to an unsupervised LMDB store under ${ORPHAN_DATA_DIR}`,
      { code: 'MNEMO_ORPHAN_MEMORY' },
    );
    orphan = createLmdbStore({ path: ORPHAN_DATA_DIR });
  }
  return orphan;
}

/** A runtime makes its memory the default while it runs; call the returned function at stop. */
export function bindDefaultMemory(memory: MessageLog): () => void {
  bound.push(memory);
  return () => {
    const at = bound.lastIndexOf(memory);
    if (at >= 0) bound.splice(at, 1);
  };
}
