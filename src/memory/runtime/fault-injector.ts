import type { CompactionStep } from '../lmdb/lmdb-environment.ts';

/**
 * Deliberate failures, for recovery tests (exported from `mnemo/testing`; pass it as
 * `startRuntime({ faults })`). Production code only asks it "fail now?", and a runtime started
 * without one never fails on purpose.
 *
 * - `failCommits(id, n)`: the next `n` commits of conversation `id` throw inside its actor,
 *   before anything is written: the actor crashes, the batch is rejected with
 *   `write_aborted`, and the conversation supervisor restarts the actor from storage.
 * - `failStore(n)`: the next `n` writes or clears made through the store actor's table crash
 *   the store actor, and the operation fails before anything is written (the conversation
 *   actor that made it crashes too; its batch is rejected with `write_aborted`). Reads are
 *   not counted.
 * - `compactStep` (optional, yours to set): called at each named step of `runtime.compact()`
 *   (`COMPACTION_STEPS`: settled, copied, closed, swapped, reopened) as it is reached; the kill
 *   test SIGKILLs its process there.
 */
export interface FaultInjector {
  /**
   * Makes the next `count` commits of `conversationId` crash its actor before writing
   * (`write_aborted`).
   */
  failCommits(conversationId: string, count: number): void;
  /** Makes the next `count` writes or clears through the store actor crash it before writing. */
  failStore(count: number): void;
  /** Consumes one pending commit fault of `conversationId`, if any. */
  takeCommitFault(conversationId: string): boolean;
  /** Consumes one pending store fault, if any. */
  takeStoreFault(): boolean;
  /** Called at each named step of `runtime.compact()` as it is reached. */
  compactStep?(step: CompactionStep): void;
}

export class InjectedFault extends Error {
  constructor(what: string) {
    super(`injected fault: ${what}`);
    this.name = 'InjectedFault';
  }
}

/** A fault injector with no fault pending. Pass it as `startRuntime({ faults })`. */
export function createFaultInjector(): FaultInjector {
  const commits = new Map<string, number>();
  let store = 0;
  return {
    failCommits: (id, count) => void commits.set(id, (commits.get(id) ?? 0) + count),
    failStore: (count) => void (store += count),
    takeCommitFault: (id) => {
      const n = commits.get(id) ?? 0;
      if (n === 0) return false;
      if (n === 1) commits.delete(id);
      else commits.set(id, n - 1);
      return true;
    },
    takeStoreFault: () => {
      if (store === 0) return false;
      store--;
      return true;
    },
  };
}
