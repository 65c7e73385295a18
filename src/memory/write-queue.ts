import type { MessageTable } from './message-table.ts';
import type { StoredMessage } from './message.ts';
import { StorageError } from './storage-error.ts';
import type { CheckedEntry } from './validate-input.ts';
import { isoWithOffset, type WallClock } from './wall-clock.ts';

/**
 * The write path of one conversation, shared by the standalone `SerialLog` and the
 * conversation actor: a queue of pending operations, taken a step at a time. A step is either
 * one `clear`, or every `append` at the head of the queue committed as ONE batch (group
 * commit: appends that arrived while the previous step was committing share the next commit).
 *
 * Each operation is settled exactly once, with the outcome of what was stored:
 * - committed: resolved with its records;
 * - a `StorageError` from the table: rejected with it (nothing of the batch was stored);
 * - any other failure before the write was issued (an injected fault, a broken invariant):
 *   rejected with `write_aborted`, and the failure is rethrown so the owner crashes.
 */
export interface Settle<T> {
  resolve(value: T): void;
  reject(error: unknown): void;
}

export type PendingOp =
  | { readonly kind: 'append'; readonly entries: readonly CheckedEntry[]; readonly done: Settle<StoredMessage[]> }
  | { readonly kind: 'clear'; readonly done: Settle<void> };

export type Step =
  | { readonly kind: 'append'; readonly ops: readonly Extract<PendingOp, { kind: 'append' }>[] }
  | { readonly kind: 'clear'; readonly op: Extract<PendingOp, { kind: 'clear' }> };

/** Splits the next step off the queue. */
export function takeStep(queue: readonly PendingOp[]): { step: Step; rest: PendingOp[] } | undefined {
  const head = queue[0];
  if (head === undefined) return undefined;
  if (head.kind === 'clear') return { step: { kind: 'clear', op: head }, rest: queue.slice(1) };
  let end = 0;
  while (end < queue.length && queue[end]!.kind === 'append') end++;
  return {
    step: { kind: 'append', ops: queue.slice(0, end) as Extract<PendingOp, { kind: 'append' }>[] },
    rest: queue.slice(end),
  };
}

export interface StepContext {
  table: MessageTable;
  conversationId: string;
  /** The conversation's last id before the step. */
  lastId: number;
  clock: WallClock;
  hooks?: StepHooks;
}

/** What the owner of a write path wants to know (one object per owner, not per step). */
export interface StepHooks {
  /** Called just before the write is issued; throwing here aborts the step (fault injection). */
  beforeWrite(conversationId: string): void;
  /** Told about the write while it is in flight, so a successor can wait for it. */
  onWrite(conversationId: string, ops: readonly PendingOp[], write: Promise<unknown>): void;
}

/** Runs one step and returns the conversation's last id after it. */
export async function runStep(step: Step, ctx: StepContext): Promise<number> {
  const ops = step.kind === 'clear' ? [step.op] : step.ops;
  let write: Promise<unknown>;
  let records: StoredMessage[] = [];
  try {
    ctx.hooks?.beforeWrite(ctx.conversationId);
    if (step.kind === 'clear') {
      write = ctx.table.clear(ctx.conversationId);
    } else {
      const ts = isoWithOffset(ctx.clock.now());
      let id = ctx.lastId;
      for (const op of step.ops) {
        for (const e of op.entries) records.push({ message_id: ++id, ts, meta: e.meta, message: e.message });
      }
      write = records.length === 0 ? Promise.resolve(records) : ctx.table.write(ctx.conversationId, records);
    }
  } catch (error) {
    const aborted = new StorageError('write_aborted', `write to ${ctx.conversationId} aborted before it was stored`, {}, { cause: error });
    for (const op of ops) op.done.reject(aborted);
    throw error;
  }
  ctx.hooks?.onWrite(ctx.conversationId, ops, write);
  try {
    const stored = await write;
    if (step.kind === 'clear') {
      step.op.done.resolve();
      return 0;
    }
    const rows = stored as StoredMessage[];
    let at = 0;
    for (const op of step.ops) {
      op.done.resolve(rows.slice(at, at + op.entries.length));
      at += op.entries.length;
    }
    // The table's ids are the truth (a shared custom store numbers across processes).
    return rows.at(-1)?.message_id ?? ctx.lastId;
  } catch (error) {
    if (error instanceof StorageError) {
      for (const op of ops) op.done.reject(error);
      // Re-read: a batch stored despite the error must not be numbered twice. If storage is
      // still unreachable, keep the old id; a table that numbers by itself corrects it.
      return ctx.table.lastId(ctx.conversationId).catch(() => ctx.lastId);
    }
    const aborted = new StorageError('write_aborted', `write to ${ctx.conversationId} failed before it was stored`, {}, { cause: error });
    for (const op of ops) op.done.reject(aborted);
    throw error;
  }
}
