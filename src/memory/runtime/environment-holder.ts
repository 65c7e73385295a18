import { genServer, isNormalExit, type ExitReason } from '../../otp/index.ts';
import { acquireEnvironment, type LmdbEnvironmentOptions } from '../lmdb/lmdb-environment.ts';
import type { StorageSlot } from './storage-slot.ts';

/**
 * The LMDB environment holder: the first child of the root, so the environment is open
 * before the store starts and closed after everything else stopped. It holds the environment
 * for the runtime's whole life, like an ETS heir: restarts of the store (or of the holder
 * itself, after a kill) reuse the environment in the slot instead of closing and reopening
 * it. Only a graceful stop (the runtime stopping, or the root giving up) releases it:
 * flushed, one event turn yielded, closed.
 */
export function environmentHolder(slot: StorageSlot, path: string, options: LmdbEnvironmentOptions) {
  return genServer<{ path: string }>({
    init: () => {
      slot.lease ??= acquireEnvironment(path, options);
      return { path: slot.lease.path };
    },
    handleCall: (_request, _from, state) => state.path,
    // A crash keeps the environment for the next incarnation; only a stop releases it (the holder traps
    // exits, see supervisors/root.ts, so the supervisor's shutdown reaches this).
    terminate: async (reason: ExitReason) => {
      if (isNormalExit(reason)) await slot.releaseEnvironment();
    },
  });
}
