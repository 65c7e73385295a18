import { call, exit, restartChild, SupervisorError, terminateChild, whereis, whichChildren } from '../../otp/index.ts';
import type { CompactionReport, CompactionStep } from '../lmdb/lmdb-environment.ts';
import type { CopyMethod } from '../lmdb/compacting-copy.ts';
import type { EnvironmentHolderCall } from './environment-holder.ts';
import type { ConversationRouter } from './conversation-router.ts';

/**
 * `runtime.compact()`: the LMDB environment compacted while the runtime runs.
 *
 * What a compaction must not meet is a writer or a reader of the environment it closes, so the
 * children of the root that use it, those after `lmdb_environment` (the store, the
 * conversations, recall and its pool, the sweeper, LangGraph's writers, your `children`), stop
 * first, as the root's rest_for_one would stop them if the holder restarted: right to left,
 * each gracefully (a conversation actor commits what its lane holds, recall waits for its
 * running calls). Meanwhile:
 * - writes wait: the router holds every append, clear and fork in its buffers (none goes to an
 *   actor that is stopping, none is refused); they are delivered once the conversations run
 *   again, numbered as usual;
 * - reads wait: `runtime.memory`'s reads wait for the store's table, `runtime.recall`'s calls
 *   for the recall process (both slots are empty while their owners are down).
 * Then the holder compacts (environment-holder.ts → `compactEnvironment`, by LMDB's page copy or,
 * with `'rebuild'`, a rebuild that keeps no byte of anything erased), and the children that were
 * running start again left to right (not through a restart: the root's intensity is not spent),
 * each opening its handles on the new environment. The pause is all of that; the copy takes most
 * of it (at ~1 GB, see README: Retention and erasure).
 *
 * A compaction that fails before its swap leaves the environment as it was, and the children
 * start again over it; the error is rethrown. If a child cannot start again, the holder is
 * killed, so the root's rest_for_one restarts it and everything after it (and counts that
 * restart, as for any failure), and the start's error is rethrown.
 *
 * Calls are serialized: a call made while one runs waits for it and then runs its own (an
 * erasure committed during a compaction's copy must meet a later copy), and calls made while
 * one waits share that next one, which rebuilds if any of them asked for a rebuild.
 */
export interface OnlineCompactionOptions {
  /** The registered names of the root supervisor and of the environment holder. */
  root: string;
  holder: string;
  /** The holder's child id under the root. */
  holderId: string;
  router: ConversationRouter;
  /** Told each step of the compaction (fault-injector.ts's `compactStep`). */
  step?: (step: CompactionStep) => void;
}

/**
 * What `runtime.compact()` resolves with: the compaction's sizes and times, and the pause writers
 * saw.
 */
export interface OnlineCompactionReport extends CompactionReport {
  /** From the first write held to the last child running again, in ms. */
  pauseMs: number;
}

export function onlineCompactions(options: OnlineCompactionOptions): { run(copy?: CopyMethod): Promise<OnlineCompactionReport>; idle(): Promise<void> } {
  let running: Promise<unknown> = Promise.resolve();
  let next: Promise<OnlineCompactionReport> | undefined;
  /** How `next` will copy (read when it starts). */
  let nextCopy: CopyMethod = 'pages';
  return {
    run(copy = 'pages') {
      if (next !== undefined) {
        if (copy === 'rebuild') nextCopy = copy;
        return next;
      }
      nextCopy = copy;
      const start = () => {
        if (next === mine) next = undefined;
        return compactOnce(options, nextCopy);
      };
      const mine: Promise<OnlineCompactionReport> = running.then(start, start);
      next = mine;
      running = mine.then(ignore, ignore);
      return mine;
    },
    idle: () => running.then(ignore),
  };
}

async function compactOnce(options: OnlineCompactionOptions, copy: CopyMethod): Promise<OnlineCompactionReport> {
  const { root, holder, holderId, router } = options;
  const started = performance.now();
  const release = router.hold();
  // Start order (which_children lists the most recently started first), those after the holder.
  const children = (await whichChildren(root)).reverse();
  const at = children.findIndex((c) => c.id === holderId);
  const after = children.slice(at + 1).filter((c) => c.id !== undefined && c.pid !== undefined);
  let report: CompactionReport | undefined;
  let failure: unknown;
  try {
    for (const child of [...after].reverse()) await terminateChild(root, child.id!);
    report = await call<CompactionReport, EnvironmentHolderCall>(holder, { type: 'compact', options: { copy, ...(options.step ? { step: options.step } : {}) } }, { timeoutMs: Infinity });
  } catch (error) {
    failure = error;
  }
  try {
    for (const child of after) {
      try {
        await restartChild(root, child.id!);
      } catch (error) {
        // Running again already (the root restarted it after a failure meanwhile), or a
        // temporary child, dropped when it stopped (rest_for_one would not restart it either).
        if (error instanceof SupervisorError && (error.code === 'running' || error.code === 'restarting' || error.code === 'not_found')) continue;
        const pid = whereis(holder);
        if (pid !== undefined) exit(pid, 'kill');
        throw error;
      }
    }
  } finally {
    release();
  }
  if (failure !== undefined) throw failure;
  return { ...report!, pauseMs: performance.now() - started };
}

const ignore = () => undefined;
