import type { MessageTable, WriteOutcome } from '../contract/message-table.ts';
import type { StoredMessage } from '../../message.ts';
import { StorageError } from '../contract/memory-errors.ts';
import type { CheckedEntry } from '../contract/validate-input.ts';
import { isoWithOffset, type WallClock } from '../../wall-clock.ts';
import { keyIsLive, type KeyRecord } from '../contract/idempotency.ts';
import { ForkError } from '../contract/fork.ts';

/**
 * The write path of one conversation, shared by the standalone `SerialLog`, the conversation
 * actor's lane (write-lane.ts) and the PostgreSQL write path: a queue of pending operations, taken a step at a time. A step is either
 * one `clear`, or every `append` at the head of the queue committed as ONE batch (group
 * commit: appends that arrived while the previous step was committing share the next commit),
 * or one `fork` (making this conversation a fork: see fork.ts).
 *
 * IDEMPOTENCY KEYS (see idempotency.ts) are handled here, in the conversation's one writer:
 * two ops of one step with the same key store once and both get the records; the keys are
 * looked up (see `runKeyedStep`), an op whose key is stored and live is answered with the
 * stored records, and the rest are written with their keys, in the same atomic write. Ops
 * queued behind a step run after it committed, so a duplicate that arrives while its first
 * attempt commits finds the key. Over a `custom` table (a log that numbers and keeps keys
 * itself) a step with keys is written op by op, each keyed op alone.
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

/** An append's `done` for a caller that wants no records (`add`): its promise resolves with
 * nothing, without a `.then` layer (a promise per append) to drop them. A class: a closure
 * named by an object literal costs a `defineProperty` per call under tsx's keepNames. */
class RecordsDropped implements Settle<StoredMessage[]> {
  constructor(
    private readonly done: () => void,
    readonly reject: (error: unknown) => void,
  ) {}

  resolve(): void {
    this.done();
  }
}

export function recordsDropped(resolve: () => void, reject: (error: unknown) => void): Settle<StoredMessage[]> {
  return new RecordsDropped(resolve, reject);
}

export type PendingOp =
  | {
      readonly kind: 'append';
      readonly entries: readonly CheckedEntry[];
      readonly key?: string | undefined;
      readonly done: Settle<StoredMessage[]>;
      /** `AppendOptions.onNumbered`: called with the op's records right after their write is issued. */
      readonly onNumbered?: ((records: readonly StoredMessage[]) => void) | undefined;
    }
  | {
      readonly kind: 'clear';
      /** Clear only if the conversation's last id is still this (checked when the step runs: see `runStep`). */
      readonly ifLastId?: number | undefined;
      /** Resolved with whether it cleared (false: `ifLastId` no longer held, nothing was done). */
      readonly done: Settle<boolean>;
    }
  | { readonly kind: 'fork'; readonly source: string; readonly at: number; readonly done: Settle<void> };

export type AppendOp = Extract<PendingOp, { kind: 'append' }>;
export type ClearOp = Extract<PendingOp, { kind: 'clear' }>;
export type ForkOp = Extract<PendingOp, { kind: 'fork' }>;

export type Step =
  | { readonly kind: 'append'; readonly ops: readonly AppendOp[] }
  | { readonly kind: 'clear'; readonly ops: readonly [ClearOp] }
  | { readonly kind: 'fork'; readonly ops: readonly [ForkOp] };

/** Splits the next step off the queue. */
export function takeStep(queue: readonly PendingOp[]): { step: Step; rest: PendingOp[] } | undefined {
  const head = queue[0];
  if (head === undefined) return undefined;
  if (head.kind === 'clear') return { step: { kind: 'clear', ops: [head] }, rest: queue.slice(1) };
  if (head.kind === 'fork') return { step: { kind: 'fork', ops: [head] }, rest: queue.slice(1) };
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

/** Where a step reports, once: the conversation's last id after it, or a failure that is not
 * a storage error (its ops are settled already; the owner crashes). */
export interface StepOutcome {
  committed(lastId: number): void;
  failed(error: unknown): void;
}

/**
 * Runs one step, settles its ops, and tells `to`. An unkeyed append step, every steady
 * append's, runs on callbacks from the table to the ops' own `done` (no promise of this
 * layer: each one cost CPU and garbage per append, docs/performance-history.md 2026-12-08);
 * the other steps are rarer and run on promises.
 */
export function runStep(step: Step, ctx: StepContext, to: StepOutcome): void {
  if (step.kind === 'append') {
    for (const op of step.ops) if (op.key !== undefined) return reportTo(runKeyedStep(step.ops, ctx), to);
    return commitAppends(step.ops, ctx, to);
  }
  reportTo(runOtherStep(step, ctx), to);
}

function reportTo(outcome: Promise<number>, to: StepOutcome): void {
  outcome.then(
    (lastId) => to.committed(lastId),
    (error: unknown) => to.failed(error),
  );
}

/** A clear or a fork step. */
function runOtherStep(step: Exclude<Step, { kind: 'append' }>, ctx: StepContext): Promise<number> {
  const { conversationId: c, lastId } = ctx;
  // A conditional clear (the retention sweep's): the lane runs one step at a time and is the
  // conversation's one writer, so its last id here is the stored one, and no write of this
  // conversation can land between this check and the clear.
  if (step.kind === 'clear' && step.ops[0].ifLastId !== undefined && step.ops[0].ifLastId !== lastId) {
    step.ops[0].done.resolve(false);
    return Promise.resolve(lastId);
  }
  let write: Promise<unknown>;
  try {
    ctx.hooks?.beforeWrite(c);
    write = step.kind === 'clear' ? ctx.table.clear(c) : ctx.table.fork(c, step.ops[0].source, step.ops[0].at);
  } catch (error) {
    return abort(step.ops, c, 'aborted before it was stored', error);
  }
  return write.then(
    (after) => {
      if (step.kind === 'clear') {
        step.ops[0].done.resolve(true);
        return 0;
      }
      step.ops[0].done.resolve();
      return after as number;
    },
    (error: unknown) => rejected(step.ops, ctx, error),
  );
}

/** Numbers `ops` after the last id and writes them (with their keys) as one batch. */
function commitAppends(ops: readonly AppendOp[], ctx: StepContext, to: StepOutcome): void {
  const { conversationId: c, lastId } = ctx;
  let records: StoredMessage[];
  try {
    ctx.hooks?.beforeWrite(c);
    const now = ctx.clock.now();
    records = numbered(ops, lastId, now);
    const keys = keysOf(ops, lastId, now);
    const shared = ops.some((op) => op.onNumbered !== undefined);
    const write = new AppendWrite(ops, ctx, lastId, to);
    if (keys === undefined && !shared) ctx.table.write(c, records, write);
    else ctx.table.write(c, records, write, keys, shared);
  } catch (error) {
    return reportTo(abort(ops, c, 'aborted before it was stored', error), to);
  }
  // In the event turn the write was issued in: what the callers write here shares its commit.
  // (A table reports no sooner than a microtask later, so this runs first.)
  announce(ops, records);
}

/** `commitAppends` as a promise of the last id after it (the keyed steps). */
function commitAppendsAsync(ops: readonly AppendOp[], ctx: StepContext): Promise<number> {
  return new Promise((committed, failed) => commitAppends(ops, ctx, { committed, failed }));
}

/** An append step's write: what the table reports settles the step's ops, then the step. */
class AppendWrite implements WriteOutcome {
  constructor(
    private readonly ops: readonly AppendOp[],
    private readonly ctx: StepContext,
    /** The last id the step numbered from (`ctx` is the lane's and moves on). */
    private readonly lastId: number,
    private readonly to: StepOutcome,
  ) {}

  resolve(stored: StoredMessage[]): void {
    this.ctx.observer?.committed(this.ops.length, stored.length);
    this.to.committed(settleAppends(this.ops, stored, this.lastId));
  }

  reject(error: unknown): void {
    reportTo(rejected(this.ops, { ...this.ctx, lastId: this.lastId }, error), this.to);
  }
}

/** A failed write: a `StorageError` or `ForkError` rejects the ops (nothing was stored); anything else aborts. */
function rejected(ops: readonly PendingOp[], ctx: StepContext, error: unknown): Promise<number> {
  const { conversationId: c, lastId } = ctx;
  if (!(error instanceof StorageError) && !(error instanceof ForkError)) return abort(ops, c, 'failed before it was stored', error);
  for (const op of ops) op.done.reject(error);
  // Re-read: a batch stored despite the error must not be numbered twice. If storage is
  // still unreachable, keep the old id; a table that numbers by itself corrects it.
  return ctx.table.lastId(c).catch(() => lastId);
}

/**
 * In-step duplicates collapse first (no storage needed), then each key is looked up and the
 * absent (or expired) ones are written with the batch. Where the table reads synchronously
 * (LMDB, in memory: `keyOf`) the lookup is in the event turn of the write, so nothing commits
 * between the two; the keys need no commit-time condition: the batch's own condition, that its
 * first id is free, already stops a second writer on the environment that numbered from the
 * same last id, and a writer numbering from a later last id read it, and so the key, after the
 * first writer's commit. Looked up before the write is issued, a batch its stored key answers
 * calls no `onNumbered` hook either. A table without `keyOf` is asked `findKeys` first; a
 * `custom` table dedupes by itself.
 */
function runKeyedStep(ops: readonly AppendOp[], ctx: StepContext): Promise<number> {
  const { table, conversationId: c } = ctx;
  if (table.kind === 'custom') return runOneByOne(ops, ctx);
  const keyOf = table.keyOf;
  if (keyOf === undefined) {
    const keys: string[] = [];
    for (const op of ops) if (op.key !== undefined) keys.push(op.key);
    return table.findKeys(c, keys).then(
      (found) => dedupe(collapse(ops), (key) => found.get(key), ctx),
      (error: unknown) => rejected(ops, ctx, error),
    );
  }
  try {
    return dedupe(collapse(ops), (key, now) => keyOf.call(table, c, key, ctx.lastId, now), ctx);
  } catch (error) {
    return rejected(ops, ctx, error);
  }
}

/** Ops after the first with the same key share its outcome (they are not written). */
function collapse(ops: readonly AppendOp[]): readonly AppendOp[] {
  if (ops.length === 1) return ops;
  const firsts = new Map<string, { op: AppendOp; same: AppendOp[] }>();
  const out: Array<AppendOp | { op: AppendOp; same: AppendOp[] }> = [];
  for (const op of ops) {
    if (op.key === undefined) out.push(op);
    else {
      const first = firsts.get(op.key);
      if (first !== undefined) first.same.push(op);
      else {
        const entry = { op, same: [] as AppendOp[] };
        firsts.set(op.key, entry);
        out.push(entry);
      }
    }
  }
  if (firsts.size === 0 || [...firsts.values()].every((f) => f.same.length === 0)) return ops;
  return out.map((item): AppendOp => {
    if ('kind' in item) return item;
    const { op, same } = item;
    if (same.length === 0) return op;
    return {
      ...op,
      done: {
        resolve: (rows) => {
          op.done.resolve(rows);
          for (const f of same) f.done.resolve(rows);
        },
        reject: (error) => {
          op.done.reject(error);
          for (const f of same) f.done.reject(error);
        },
      },
    };
  });
}

/** Answers the ops whose key is stored and live from storage; writes the others. */
function dedupe(ops: readonly AppendOp[], keyOf: (key: string, now: number) => KeyRecord | undefined, ctx: StepContext): Promise<number> {
  const now = ctx.clock.now();
  let fresh: AppendOp[] | undefined;
  for (let i = 0; i < ops.length; i++) {
    const op = ops[i]!;
    const stored = op.key === undefined ? undefined : keyOf(op.key, now);
    if (stored !== undefined && keyIsLive(stored, now)) {
      replay(op, stored, ctx);
      fresh ??= ops.slice(0, i);
    } else fresh?.push(op);
  }
  // No op answered (the usual case): the step is written as it is.
  const written = fresh ?? ops;
  return written.length === 0 ? Promise.resolve(ctx.lastId) : commitAppendsAsync(written, ctx);
}

/** Answers `op` with the records its key stored. */
function replay(op: AppendOp, stored: KeyRecord, ctx: StepContext): void {
  ctx.table.range(ctx.conversationId, stored.firstId, stored.firstId + stored.count - 1, stored.count).then(
    (rows) => op.done.resolve(rows),
    (error: unknown) => op.done.reject(error),
  );
}

/** Over a log that keeps keys itself: each keyed op alone, unkeyed neighbours together, in order. */
async function runOneByOne(ops: readonly AppendOp[], ctx: StepContext): Promise<number> {
  const groups: AppendOp[][] = [];
  for (const op of ops) {
    const last = groups.at(-1);
    if (op.key === undefined && last !== undefined && last[0]!.key === undefined) last.push(op);
    else groups.push([op]);
  }
  let lastId = ctx.lastId;
  for (let i = 0; i < groups.length; i++) {
    try {
      lastId = await commitAppendsAsync(groups[i]!, { ...ctx, lastId });
    } catch (error) {
      const aborted = new StorageError('write_aborted', `write to ${ctx.conversationId} aborted before it was stored`, {}, { cause: error });
      for (const rest of groups.slice(i + 1)) for (const op of rest) op.done.reject(aborted);
      throw error;
    }
  }
  return lastId;
}

function numbered(ops: readonly AppendOp[], lastId: number, now: number): StoredMessage[] {
  const ts = isoWithOffset(now);
  const records: StoredMessage[] = [];
  let id = lastId;
  for (const op of ops) for (const e of op.entries) records.push({ message_id: ++id, ts, meta: e.meta, message: e.message });
  return records;
}

/** The key records of the keyed ops among `ops`, numbered as `numbered` numbers them. */
function keysOf(ops: readonly AppendOp[], lastId: number, now: number): KeyRecord[] | undefined {
  let keys: KeyRecord[] | undefined;
  let id = lastId;
  for (const op of ops) {
    if (op.key !== undefined) {
      (keys ??= []).push({ key: op.key, firstId: id + 1, count: op.entries.length, at: now });
    }
    id += op.entries.length;
  }
  return keys;
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
  // The table's ids are the truth (a shared custom store numbers across processes), but a
  // keyed retry answered by a custom log returns older ids: they must not move the numbering back.
  const last = rows.at(-1)?.message_id ?? lastId;
  return ops.some((op) => op.key !== undefined) ? Math.max(last, lastId) : last;
}

/** Rejects the step's ops with `write_aborted` (nothing was stored), and fails with `error`
 * itself, so the owner crashes. */
function abort(ops: readonly PendingOp[], c: string, what: string, error: unknown): Promise<never> {
  const aborted = new StorageError('write_aborted', `write to ${c} ${what}`, {}, { cause: error });
  for (const op of ops) op.done.reject(aborted);
  return Promise.reject(error);
}
