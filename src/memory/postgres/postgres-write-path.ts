import type { StoredMessage } from '../../message.ts';
import type { CheckedEntry } from '../contract/validate-input.ts';
import { takeStep, type PendingOp, type Settle, type Step } from '../runtime/write-queue.ts';

/**
 * The PostgreSQL store's write path inside one process: group commit across conversations,
 * as lmdb-js gives the LMDB store.
 *
 * - Each conversation has a lane: its writes run one step at a time in the order they were
 *   issued (write-queue.ts: a `clear` alone, or every `append` queued at the head together).
 * - Every conversation with a step ready and none in flight joins the next batch: all of the
 *   batch's append steps go to the database as ONE statement (one transaction, one WAL
 *   flush); each clear runs in its own transaction beside it.
 * - A batch leaves on `setImmediate`, so what one event turn issued shares it, and at most
 *   `MAX_APPEND_BATCHES_IN_FLIGHT` append statements run at once: while one commits, the next
 *   fills. Work for a conversation that is in flight waits for its batch, not for the others.
 * - A failed statement rejects every operation in it with the same error; the lanes go on.
 * - Keyed appends take the same path: each op is an item of the batch with its key, and the
 *   batch's one transaction claims the keys and appends what they guard (postgres-store.ts).
 *   Ops of one step with the same key are sent once and share its outcome.
 * - A fork runs on its own, like a clear.
 */
export interface WriteBackend {
  /**
   * Appends every item in one transaction; per item, its records as stored. An item whose key
   * is already stored (and live) gets the records stored under it, and stores nothing.
   */
  append(items: readonly AppendItem[]): Promise<StoredMessage[][]>;
  clear(conversationId: string): Promise<void>;
  fork(newId: string, source: string, at: number): Promise<void>;
}

export interface AppendItem {
  conversationId: string;
  entries: readonly CheckedEntry[];
  /** An idempotency key: at most one item per `(conversationId, key)` in a batch. */
  key?: string | undefined;
}

export interface WritePath {
  submit<T>(conversationId: string, make: (done: Settle<T>) => PendingOp): Promise<T>;
}

/** Two: one statement committing while the next one fills. More would only split batches. */
export const MAX_APPEND_BATCHES_IN_FLIGHT = 2;

interface Lane {
  queue: PendingOp[];
  busy: boolean;
}

type AppendStep = Extract<Step, { kind: 'append' }>;

/** `track` is told about every piece of work in flight, so `close()` can wait for it. */
export function createWritePath(backend: WriteBackend, track: (work: Promise<unknown>) => void): WritePath {
  const lanes = new Map<string, Lane>();
  /** Conversations with a step ready and none in flight, in the order they became ready. */
  const ready = new Set<string>();
  let batchesInFlight = 0;
  let scheduled = false;

  function schedule(): void {
    if (scheduled || ready.size === 0) return;
    scheduled = true;
    track(
      new Promise<void>((resolve) =>
        setImmediate(() => {
          scheduled = false;
          flush();
          resolve();
        }),
      ),
    );
  }

  function flush(): void {
    const appends: Array<{ conversationId: string; step: AppendStep }> = [];
    for (const conversationId of ready) {
      const lane = lanes.get(conversationId)!;
      const head = lane.queue[0];
      if (head === undefined) continue;
      if (head.kind === 'append' && batchesInFlight >= MAX_APPEND_BATCHES_IN_FLIGHT) continue;
      const next = takeStep(lane.queue)!;
      lane.queue = next.rest;
      lane.busy = true;
      ready.delete(conversationId);
      const step = next.step;
      if (step.kind === 'clear') {
        // (`ifLastId` comes only from the runtime's retention sweep, which on PostgreSQL clears
        // in its own transaction under the counter row's lock: src/retention/postgres-retention.ts.)
        const done = step.ops[0].done;
        track(runAlone(conversationId, { resolve: () => done.resolve(true), reject: (e) => done.reject(e) }, () => backend.clear(conversationId)));
      }
      else if (step.kind === 'fork') track(runAlone(conversationId, step.ops[0].done, () => backend.fork(conversationId, step.ops[0].source, step.ops[0].at)));
      else appends.push({ conversationId, step });
    }
    if (appends.length > 0) {
      batchesInFlight++;
      track(runAppends(appends));
    }
  }

  async function runAlone(conversationId: string, done: Settle<void>, work: () => Promise<void>): Promise<void> {
    try {
      await work();
      done.resolve();
    } catch (error) {
      done.reject(error);
    } finally {
      release(conversationId);
    }
  }

  async function runAppends(batch: ReadonlyArray<{ conversationId: string; step: AppendStep }>): Promise<void> {
    try {
      const items: AppendItem[] = [];
      /** Per item, the ops it settles: one, or every op of its step with its key. */
      const settles: Array<AppendStep['ops'][number][]> = [];
      for (const { conversationId, step } of batch) {
        if (!step.ops.some((op) => op.key !== undefined)) {
          // Unkeyed: the step's entries as one item.
          items.push({ conversationId, entries: step.ops.length === 1 ? step.ops[0]!.entries : step.ops.flatMap((op) => op.entries) });
          settles.push([...step.ops]);
          continue;
        }
        const byKey = new Map<string, AppendStep['ops'][number][]>();
        for (const op of step.ops) {
          if (op.key !== undefined) {
            const same = byKey.get(op.key);
            if (same !== undefined) {
              same.push(op);
              continue;
            }
            byKey.set(op.key, settles[settles.push([op]) - 1]!);
          } else settles.push([op]);
          items.push({ conversationId, entries: op.entries, key: op.key });
        }
      }
      const stored = await backend.append(items);
      settles.forEach((ops, i) => {
        const records = stored[i]!;
        if (ops.length === 1 || ops[0]!.key !== undefined) {
          for (const op of ops) op.done.resolve(records);
          return;
        }
        let at = 0;
        for (const op of ops) {
          op.done.resolve(records.slice(at, at + op.entries.length));
          at += op.entries.length;
        }
      });
    } catch (error) {
      for (const { step } of batch) for (const op of step.ops) op.done.reject(error);
    } finally {
      batchesInFlight--;
      for (const { conversationId } of batch) release(conversationId);
      schedule(); // appends held back by the in-flight limit
    }
  }

  function release(conversationId: string): void {
    const lane = lanes.get(conversationId)!;
    lane.busy = false;
    if (lane.queue.length === 0) {
      lanes.delete(conversationId);
      return;
    }
    ready.add(conversationId);
    schedule();
  }

  return {
    submit<T>(conversationId: string, make: (done: Settle<T>) => PendingOp): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        const op = make({ resolve, reject });
        let lane = lanes.get(conversationId);
        if (lane === undefined) lanes.set(conversationId, (lane = { queue: [], busy: false }));
        lane.queue.push(op);
        if (!lane.busy) {
          ready.add(conversationId);
          schedule();
        }
      });
    },
  };
}
