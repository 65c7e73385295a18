import type { MessageTable } from '../contract/message-table.ts';
import type { StoredMessage } from '../../message.ts';
import { StorageError } from '../contract/memory-errors.ts';
import type { CheckedEntry } from '../contract/validate-input.ts';
import { isoWithOffset, type WallClock } from '../../wall-clock.ts';

/**
 * The write path of one conversation, shared by the standalone `SerialLog`, the conversation
 * actor's lane (write-lane.ts) and the PostgreSQL write path: a queue of pending operations, taken a step at a time. A step is either
 * one `clear`, or every `append` at the head of the queue committed as ONE batch (group
 * commit: appends that arrived while the previous step was committing share the next commit).
 *
 * Each operation is settled exactly once, with the outcome of what was stored:
 * - committed: resolved with its records;
 * - a `StorageError` from the table: rejected with it (nothing of the batch was stored);
 * - any other failure before the write was issued (an injected fault, a broken invariant):
 *   rejected with `write_aborted`, and the failure is rethrown so the owner crashes.
 * (Each op is settled once by construction; the promise functions behind `Settle` would ignore
 * a second call anyway.)
 */
export interface Settle<T> {
  resolve(value: T): void;
  reject(error: unknown): void;
}

export type PendingOp =
  | {
      readonly kind: 'append';
      readonly entries: readonly CheckedEntry[];
      readonly done: Settle<StoredMessage[]>;
      /** `AppendOptions.onNumbered`: called with the op's records right after their write is issued. */
      readonly onNumbered?: ((records: readonly StoredMessage[]) => void) | undefined;
    }
  | { readonly kind: 'clear'; readonly done: Settle<void> };

export type AppendOp = Extract<PendingOp, { kind: 'append' }>;
export type ClearOp = Extract<PendingOp, { kind: 'clear' }>;

export type Step = { readonly kind: 'append'; readonly ops: readonly AppendOp[] } | { readonly kind: 'clear'; readonly ops: readonly [ClearOp] };

/** Splits the next step off the queue. */
export function takeStep(queue: readonly PendingOp[]): { step: Step; rest: PendingOp[] } | undefined {
  const head = queue[0];
  if (head === undefined) return undefined;
  if (head.kind === 'clear') return { step: { kind: 'clear', ops: [head] }, rest: queue.slice(1) };
  let end = 1;
  while (end < queue.length && queue[end]!.kind === 'append') end++;
  if (end === queue.length) return { step: { kind: 'append', ops: queue as AppendOp[] }, rest: [] };
  return { step: { kind: 'append', ops: queue.slice(0, end) as AppendOp[] }, rest: queue.slice(end) };
}

export interface StepContext {
  table: MessageTable;
  conversationId: string;
  /** The conversation's last id before the step. */
  lastId: number;
  clock: WallClock;
  hooks?: StepHooks | undefined;
  /** Told of every committed append batch; absent, it costs one check per commit. */
  observer?: WriteObserver | undefined;
}

/** What an operator's metrics learn from the write path (`RuntimeOptions.observer`). */
export interface WriteObserver {
  /** One commit stored `appends` append calls together (`messages` records in all). */
  committed(appends: number, messages: number): void;
}

/** Fault injection into a write path (one object per owner, not per step). */
export interface StepHooks {
  /** Called just before the write is issued; throwing here aborts the step. */
  beforeWrite(conversationId: string): void;
}

/** Runs one step and settles its ops; resolves with the conversation's last id after it. */
export function runStep(step: Step, ctx: StepContext): Promise<number> {
  const { conversationId: c, lastId } = ctx;
  let write: Promise<unknown>;
  let records: StoredMessage[] | undefined;
  try {
    ctx.hooks?.beforeWrite(c);
    if (step.kind === 'clear') write = ctx.table.clear(c);
    else write = ctx.table.write(c, (records = numbered(step.ops, lastId, ctx.clock)));
  } catch (error) {
    return abort(step, c, 'aborted before it was stored', error);
  }
  // In the event turn the write was issued in: what the callers write here shares its commit.
  if (records !== undefined && step.kind === 'append') announce(step.ops, records);
  return write.then(
    (stored) => {
      if (step.kind === 'clear') {
        step.ops[0].done.resolve();
        return 0;
      }
      ctx.observer?.committed(step.ops.length, (stored as StoredMessage[]).length);
      return settleAppends(step.ops, stored as StoredMessage[], lastId);
    },
    (error: unknown) => {
      if (!(error instanceof StorageError)) return abort(step, c, 'failed before it was stored', error);
      for (const op of step.ops) op.done.reject(error);
      // Re-read: a batch stored despite the error must not be numbered twice. If storage is
      // still unreachable, keep the old id; a table that numbers by itself corrects it.
      return ctx.table.lastId(c).catch(() => lastId);
    },
  );
}

function numbered(ops: readonly AppendOp[], lastId: number, clock: WallClock): StoredMessage[] {
  const ts = isoWithOffset(clock.now());
  const records: StoredMessage[] = [];
  let id = lastId;
  for (const op of ops) for (const e of op.entries) records.push({ message_id: ++id, ts, meta: e.meta, message: e.message });
  return records;
}

function announce(ops: readonly AppendOp[], records: StoredMessage[]): void {
  let at = 0;
  for (const op of ops) {
    const mine = ops.length === 1 ? records : records.slice(at, at + op.entries.length);
    at += op.entries.length;
    if (op.onNumbered === undefined) continue;
    try {
      op.onNumbered(mine);
    } catch {
      // The caller's hook; the append itself goes on (AppendOptions).
    }
  }
}

function settleAppends(ops: readonly AppendOp[], rows: StoredMessage[], lastId: number): number {
  if (ops.length === 1) ops[0]!.done.resolve(rows);
  else {
    let at = 0;
    for (const op of ops) op.done.resolve(rows.slice(at, (at += op.entries.length)));
  }
  // The table's ids are the truth (a shared custom store numbers across processes).
  return rows.at(-1)?.message_id ?? lastId;
}

/** Rejects the step's ops with `write_aborted` (nothing was stored), and fails with `error`
 * itself, so the owner crashes. */
function abort(step: Step, c: string, what: string, error: unknown): Promise<never> {
  const aborted = new StorageError('write_aborted', `write to ${c} ${what}`, {}, { cause: error });
  for (const op of step.ops) op.done.reject(aborted);
  return Promise.reject(error);
}
