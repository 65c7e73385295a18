import type { MessageLog } from './contract/message-log.ts';
import type { StoredMessage } from '../message.ts';
import type { MessageTable } from './contract/message-table.ts';
import { StorageError } from './contract/memory-errors.ts';
import { validatedLog } from './contract/validated-log.ts';
import { validateConversationId } from './contract/validate-input.ts';
import { validateLastId, type ConditionalClear } from './contract/conditional-clear.ts';
import { systemWallClock, type WallClock } from '../wall-clock.ts';
import { recordsDropped, runStep, takeStep, type PendingOp, type Step, type StepContext } from './runtime/write-queue.ts';
import { withLeafSpan } from '../telemetry/tracing.ts';

/**
 * A `MessageLog` over a `MessageTable` for use outside a runtime: each conversation gets a
 * lane (its write queue, run one step at a time, see write-queue.ts) that lives only while the
 * conversation has writes pending, so an idle conversation costs nothing. Ids are numbered in
 * the lane from the conversation's last id, so two `add`s racing on one conversation never
 * collide, and the writes of many conversations issued in one event turn share one LMDB
 * commit. The last ids of the most recently written conversations are remembered (at most
 * `LAST_ID_CACHE` of them), so a conversation written again soon needs no read to number.
 *
 * An append is one span, `mnemo.memory.append`, from the call until its commit is durable
 * (telemetry/tracing.ts). Every method validates its arguments first (`InvalidInputError`, nothing stored). `close`
 * refuses new work (`store_closed`), lets pending writes finish, then closes the table.
 */
export interface ClosableLog extends MessageLog {
  /**
   * Refuses new work (`store_closed`), lets pending writes finish, then closes the store.
   * Idempotent.
   */
  close(): Promise<void>;
}

/** How many conversations' last ids a log remembers between writes. */
export const LAST_ID_CACHE = 10_000;

/** A conversation's writes while it has any pending: the queue, the step in flight, the last id. */
interface Lane {
  readonly conversationId: string;
  /** Undefined until read (or after a failed step: read again before numbering). */
  lastId: number | undefined;
  queue: PendingOp[];
  step: Step | undefined;
  /** Reused for every step of the lane. */
  readonly context: StepContext;
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
  /** Woken when the last lane ends (`close` waits for them). */
  const drained: Array<() => void> = [];
  let closing: Promise<void> | undefined;

  const ensureOpen = () => {
    if (closing !== undefined) throw new StorageError('store_closed', 'the store is closed');
  };

  // The hot path runs on plain callbacks, not an async loop: a write costs a push, and a step
  // two callbacks, with no promise of its own (CPU and garbage per append, bench/append-cpu.ts).
  function enqueue(c: string, op: PendingOp): void {
    const lane = lanes.get(c);
    if (lane !== undefined) {
      lane.queue.push(op);
      return;
    }
    const fresh: Lane = { conversationId: c, lastId: known.get(c), queue: [op], step: undefined, context: { table, conversationId: c, lastId: 0, clock } };
    lanes.set(c, fresh);
    next(fresh);
  }

  /** Takes the lane's next step and issues it (in this event turn when the last id is known), or ends the lane. */
  function next(lane: Lane): void {
    const taken = takeStep(lane.queue);
    if (taken === undefined) {
      lane.step = undefined;
      lanes.delete(lane.conversationId);
      remember(lane.conversationId, lane.lastId);
      if (lanes.size === 0 && drained.length > 0) for (const wake of drained.splice(0)) wake();
      return;
    }
    lane.queue = taken.rest;
    lane.step = taken.step;
    if (lane.lastId !== undefined) return issue(lane, lane.lastId);
    let read: Promise<number>;
    try {
      read = table.lastId(lane.conversationId);
    } catch (error) {
      return failed(lane, error);
    }
    read.then(
      (lastId) => issue(lane, lastId),
      (error: unknown) => failed(lane, error),
    );
  }

  function issue(lane: Lane, lastId: number): void {
    lane.lastId = lastId;
    lane.context.lastId = lastId;
    try {
      runStep(lane.step!, lane.context, {
        committed: (after) => {
          lane.lastId = after;
          next(lane);
        },
        failed: (error) => failed(lane, error),
      });
    } catch (error) {
      failed(lane, error);
    }
  }

  /** The step's ops get the error (those already settled ignore it); the next step reads the last id again. */
  function failed(lane: Lane, error: unknown): void {
    rejectStep(lane.step!, error);
    lane.lastId = undefined;
    next(lane);
  }

  const log: ClosableLog & ConditionalClear = {
    ...validatedLog({
      checkOpen: ensureOpen,
      get: (c) => table.messages(c),
      append: (c, entries, options) =>
        withLeafSpan(
          'mnemo.memory.append',
          { 'mnemo.memory.messages': entries.length },
          () =>
            new Promise<StoredMessage[]>((resolve, reject) =>
              enqueue(c, { kind: 'append', entries, key: options.idempotencyKey, done: { resolve, reject }, onNumbered: options.onNumbered }),
            ),
          { parent: options.traceContext },
        ),
      add: (c, entries, options) =>
        withLeafSpan(
          'mnemo.memory.append',
          { 'mnemo.memory.messages': entries.length },
          () =>
            new Promise<void>((resolve, reject) =>
              enqueue(c, { kind: 'append', entries, key: options.idempotencyKey, done: recordsDropped(resolve, reject), onNumbered: options.onNumbered }),
            ),
          { parent: options.traceContext },
        ),
      clear: (c) => new Promise<void>((resolve, reject) => enqueue(c, { kind: 'clear', done: { resolve: () => resolve(), reject } })),
      // In the new conversation's lane, which then numbers on from the fork point.
      fork: (source, at, newId) => new Promise<void>((resolve, reject) => enqueue(newId, { kind: 'fork', source, at, done: { resolve, reject } })),
      range: (c, q) => table.range(c, q.from, q.to, q.limit),
      tail: (c, n) => table.tail(c, n),
      systemMessages: (c) => table.systemMessages(c),
      lastId: (c) => table.lastId(c),
    }),
    clearIfLastId: async (c, lastId) => {
      ensureOpen();
      const checked = validateLastId(lastId);
      const conversationId = validateConversationId(c);
      return new Promise<boolean>((resolve, reject) => enqueue(conversationId, { kind: 'clear', ifLastId: checked, done: { resolve, reject } }));
    },
    close(): Promise<void> {
      closing ??= (async () => {
        while (lanes.size > 0) await new Promise<void>((wake) => drained.push(wake));
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
