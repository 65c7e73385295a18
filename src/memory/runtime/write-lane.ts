import { detached } from '../../telemetry/tracing.ts';
import { runStep, takeStep, type PendingOp, type Step, type StepContext, type StepOutcome } from './write-queue.ts';

/** What every step of the lane runs with; the lane keeps the last id. */
export type LaneContext = Omit<StepContext, 'lastId'>;

/** Who runs the lane (its conversation actor): asked before every step, told of a fault. */
export interface LaneOwner {
  /** False once the owner died: the lane issues nothing more. */
  live(): boolean;
  /** A failure that is not a storage error: the lane has halted. */
  fault(error: unknown): void;
}

/**
 * The write mailbox of one conversation: pending writes, committed a step at a time
 * (write-queue.ts), numbering from the last id. Appends that queue while a step commits go
 * into the next commit together (group commit per conversation).
 *
 * It is a plain object, not events to a state machine, because it is the hot path: a write
 * costs an array push, and a commit one callback (the lane is its step's `StepOutcome`: no
 * promise per step). Its owner decides when it runs: writes
 * queue until `open(lastId)`, and `owner.live()` is asked before every step, so a lane whose
 * owner died issues nothing more (what it still holds was never issued; the owner's supervisor
 * settles it). A failure that is not a storage error halts the lane and goes to `owner.fault`.
 * A resting lane is small (one is held per live conversation): no closures of its own, and no
 * waiter list until someone waits.
 */
export class WriteLane implements StepOutcome {
  private queue: PendingOp[] = [];
  private step: Step | undefined = undefined;
  /** Woken once the step in flight has settled (`settled`); none until someone waits. */
  private stepWaiters: Array<() => void> | undefined = undefined;
  private opened = false;
  private halted = false;
  private waiters: Array<() => void> | undefined = undefined;
  /** Reused for every step: its `lastId` is the lane's. */
  private readonly context: StepContext;

  constructor(
    context: LaneContext,
    private readonly owner: LaneOwner,
  ) {
    // A literal of one shape: a spread gave each lane's context a hidden class of its own.
    const { table, conversationId, clock, hooks, observer } = context;
    this.context = { table, conversationId, lastId: 0, clock, hooks, observer };
  }

  push(op: PendingOp): void {
    this.queue.push(op);
    if (this.opened && this.step === undefined) this.next();
  }

  /** Start committing, numbering after `lastId`. */
  open(lastId: number): void {
    this.context.lastId = lastId;
    this.opened = true;
    this.next();
  }

  /** Nothing queued and no step in flight (or halted). */
  get idle(): boolean {
    return this.halted || (this.step === undefined && this.queue.length === 0);
  }

  /** Writes held: queued, and in the step in flight. */
  get backlog(): number {
    return this.queue.length + (this.step?.ops.length ?? 0);
  }

  /** Removes and returns the writes not issued yet (its owner died: they never will be). */
  takeQueued(): PendingOp[] {
    const queued = this.queue;
    this.queue = [];
    return queued;
  }

  /** Settles once the step in flight has settled; undefined when none is in flight. */
  settled(): Promise<void> | undefined {
    return this.step === undefined ? undefined : new Promise((resolve) => (this.stepWaiters ??= []).push(resolve));
  }

  /** Settles when the lane is idle (at once if it is); never, if it halts on a fault. */
  whenIdle(): Promise<void> {
    return this.idle ? Promise.resolve() : new Promise((resolve) => (this.waiters ??= []).push(resolve));
  }

  private next(): void {
    const next = this.halted || !this.owner.live() ? undefined : takeStep(this.queue);
    if (next === undefined) {
      const waiters = this.waiters;
      if (this.queue.length === 0 && waiters !== undefined) {
        this.waiters = undefined;
        for (const wake of waiters) wake();
      }
      return;
    }
    this.queue = next.rest;
    this.step = next.step;
    runStep(next.step, this.context, this);
  }

  /** Its step committed (called by the step: `StepOutcome`). */
  committed(lastId: number): void {
    this.context.lastId = lastId;
    this.stepSettled();
    // The next step serves whoever queued meanwhile: not a child of the caller that began this
    // one (a table's own instrumentation, e.g. the pg driver's, would nest its spans there).
    if (this.queue.length === 0) this.next();
    else detached(() => this.next());
  }

  /** Its step failed other than with a storage error (`StepOutcome`). The owner crashes with
   * it; whoever waits for idle goes with the owner. */
  failed(error: unknown): void {
    this.halted = true;
    this.stepSettled();
    this.owner.fault(error);
  }

  private stepSettled(): void {
    this.step = undefined;
    const waiters = this.stepWaiters;
    if (waiters === undefined) return;
    this.stepWaiters = undefined;
    for (const wake of waiters) wake();
  }
}
