import type { MessageLog } from './contract/message-log.ts';
import type { StoredMessage } from '../message.ts';
import type { MessageTable } from './contract/message-table.ts';
import { StorageError } from './contract/memory-errors.ts';
import { validatedLog } from './contract/validated-log.ts';
import { validateConversationId } from './contract/validate-input.ts';
import { validateLastId, type ConditionalClear } from './contract/conditional-clear.ts';
import { systemWallClock, type WallClock } from '../wall-clock.ts';
import { runStep, takeStep, type PendingOp, type Step } from './runtime/write-queue.ts';

/**
 * A `MessageLog` over a `MessageTable` for use outside a runtime: each conversation gets a
 * lane (its write queue, run one step at a time, see write-queue.ts) that lives only while the
 * conversation has writes pending, so an idle conversation costs nothing. Ids are numbered in
 * the lane from the conversation's last id, so two `add`s racing on one conversation never
 * collide, and the writes of many conversations issued in one event turn share one LMDB
 * commit. The last ids of the most recently written conversations are remembered (at most
 * `LAST_ID_CACHE` of them), so a conversation written again soon needs no read to number.
 *
 * Every method validates its arguments first (`InvalidInputError`, nothing stored). `close`
 * refuses new work (`store_closed`), lets pending writes finish, then closes the table.
 */
export interface ClosableLog extends MessageLog {
  close(): Promise<void>;
}

/** How many conversations' last ids a log remembers between writes. */
export const LAST_ID_CACHE = 10_000;

interface Lane {
  lastId: number | undefined;
  queue: PendingOp[];
}

export function createSerialLog(
  table: MessageTable,
  options: { clock?: WallClock; onClose?: () => Promise<void> } = {},
): ClosableLog & ConditionalClear {
  const clock = options.clock ?? systemWallClock;
  const lanes = new Map<string, Lane>();
  /** Last ids of recently written conversations, oldest first (a Map keeps insertion order). */
  const known = new Map<string, number>();
  const remember = (c: string, lastId: number | undefined) => {
    known.delete(c);
    if (lastId === undefined) return;
    known.set(c, lastId);
    if (known.size > LAST_ID_CACHE) known.delete(known.keys().next().value!);
  };
  const draining = new Set<Promise<void>>();
  let closing: Promise<void> | undefined;

  const ensureOpen = () => {
    if (closing !== undefined) throw new StorageError('store_closed', 'the store is closed');
  };

  function submit<T>(c: string, make: (done: { resolve(v: T): void; reject(e: unknown): void }) => PendingOp): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const op = make({ resolve, reject });
      const lane = lanes.get(c);
      if (lane !== undefined) {
        lane.queue.push(op);
        return;
      }
      const fresh: Lane = { lastId: known.get(c), queue: [op] };
      lanes.set(c, fresh);
      const run = drain(c, fresh).finally(() => draining.delete(run));
      draining.add(run);
    });
  }

  async function drain(c: string, lane: Lane): Promise<void> {
    for (;;) {
      const next = takeStep(lane.queue);
      if (next === undefined) break;
      lane.queue = next.rest;
      try {
        lane.lastId ??= await table.lastId(c);
        lane.lastId = await runStep(next.step, { table, conversationId: c, lastId: lane.lastId, clock });
      } catch (error) {
        rejectStep(next.step, error);
        lane.lastId = undefined;
      }
    }
    lanes.delete(c);
    remember(c, lane.lastId);
  }

  const log: ClosableLog & ConditionalClear = {
    ...validatedLog({
      checkOpen: ensureOpen,
      get: (c) => table.messages(c),
      append: (c, entries, options) =>
        submit<StoredMessage[]>(c, (done) => ({ kind: 'append', entries, key: options.idempotencyKey, done, onNumbered: options.onNumbered })),
      clear: async (c) => {
        await submit<boolean>(c, (done) => ({ kind: 'clear', done }));
      },
      // In the new conversation's lane, which then numbers on from the fork point.
      fork: (source, at, newId) => submit<void>(newId, (done) => ({ kind: 'fork', source, at, done })),
      range: (c, q) => table.range(c, q.from, q.to, q.limit),
      tail: (c, n) => table.tail(c, n),
      systemMessages: (c) => table.systemMessages(c),
      lastId: (c) => table.lastId(c),
    }),
    clearIfLastId: async (c, lastId) => {
      ensureOpen();
      const checked = validateLastId(lastId);
      return submit<boolean>(validateConversationId(c), (done) => ({ kind: 'clear', ifLastId: checked, done }));
    },
    close(): Promise<void> {
      closing ??= (async () => {
        while (draining.size > 0) await Promise.allSettled([...draining]);
        await options.onClose?.();
      })();
      return closing;
    },
  };
  return log;
}

function rejectStep(step: Step, error: unknown): void {
  for (const op of step.ops) op.done.reject(error);
}
