import { genServer, isNormalExit, noReply, type ExitReason } from '../../otp/index.ts';
import { acquireEnvironment, compactEnvironment, isEnvironmentOpen, type CompactionOptions, type LmdbEnvironmentOptions } from '../lmdb/lmdb-environment.ts';
import type { StorageSlot } from './storage-slot.ts';

/**
 * The LMDB environment holder: the first child of the root, so the environment is open
 * before the store starts and closed after everything else stopped. It holds the environment
 * for the runtime's whole life, like an ETS heir: restarts of the store (or of the holder
 * itself, after a kill) reuse the environment in the slot instead of closing and reopening
 * it. Only a graceful stop (the runtime stopping, or the root giving up) releases it:
 * flushed, one event turn yielded, closed.
 *
 * `{ type: 'compact', options }` compacts the environment in place (`compactEnvironment`) and replies
 * with the report, or fails with its error; the holder handles nothing else meanwhile. The
 * caller (online-compaction.ts) has stopped every other child that uses the environment first.
 * A compaction that could not reopen the environment empties the slot and crashes the holder,
 * so its restart opens the directory afresh.
 */
export type EnvironmentHolderCall = { readonly type: 'path' } | { readonly type: 'compact'; readonly options: CompactionOptions };

export function environmentHolder(slot: StorageSlot, path: string, options: LmdbEnvironmentOptions) {
  return genServer<{ path: string }, void, EnvironmentHolderCall>({
    init: () => {
      slot.lease ??= acquireEnvironment(path, options);
      return { path: slot.lease.path };
    },
    handleCall: async (request, from, state) => {
      if (request.type !== 'compact') return state.path;
      const lease = slot.lease;
      if (lease === undefined) throw new Error('the LMDB environment holder has no environment');
      try {
        from.reply(await compactEnvironment(lease, request.options));
      } catch (error) {
        from.fail(error);
        if (!isEnvironmentOpen(lease)) {
          slot.lease = undefined;
          await lease.release();
          throw error;
        }
      }
      return noReply;
    },
    // A crash keeps the environment for the next incarnation; only a stop releases it (the holder traps
    // exits, see supervisors/root.ts, so the supervisor's shutdown reaches this).
    terminate: async (reason: ExitReason) => {
      if (isNormalExit(reason)) await slot.releaseEnvironment();
    },
  });
}
