import type { MessageTable } from './message-table.ts';
import type { WallClock } from './wall-clock.ts';
import { runStep, takeStep, type PendingOp, type Step, type StepHooks } from './write-queue.ts';

export interface LaneContext {
  table: MessageTable;
  conversationId: string;
  clock: WallClock;
  hooks?: StepHooks;
}

/**
 * The write mailbox of one conversation: pending writes, committed a step at a time
 * (write-queue.ts), numbering from the last id. Appends that queue while a step commits go
 * into the next commit together (group commit per conversation).
 *
 * It is a plain object, not events to a state machine, because it is the hot path: a write
 * costs an array push, and a commit one loop turn. Its owner decides when it runs: writes
 * queue until `open(lastId)`, and `isLive` is asked before every step, so a lane whose owner
 * died issues nothing more (what it still holds was never issued; the owner's supervisor
 * settles it). A failure that is not a storage error halts the lane and goes to `onFault`.
 */
export class WriteLane {
  private queue: PendingOp[] = [];
  private step: Step | undefined = undefined;
  private lastId: number | undefined = undefined;
  private running = false;
  private halted = false;
  private waiters: Array<() => void> = [];

  constructor(
    private readonly context: LaneContext,
    private readonly isLive: () => boolean,
    private readonly onFault: (error: unknown) => void,
  ) {}

  push(op: PendingOp): void {
    this.queue.push(op);
    if (!this.running && this.lastId !== undefined) void this.drain();
  }

  /** Start committing, numbering after `lastId`. */
  open(lastId: number): void {
    this.lastId = lastId;
    if (this.queue.length > 0) void this.drain();
  }

  /** Nothing queued and no step in flight. */
  get idle(): boolean {
    return !this.running && (this.queue.length === 0 || this.halted);
  }

  /** Writes held: queued, and in the step in flight. */
  get backlog(): number {
    const inStep = this.step === undefined ? 0 : this.step.kind === 'clear' ? 1 : this.step.ops.length;
    return this.queue.length + inStep;
  }

  /** Settles when the lane is idle (at once if it is); never, if it halts on a fault. */
  whenIdle(): Promise<void> {
    return this.idle ? Promise.resolve() : new Promise((resolve) => this.waiters.push(resolve));
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (!this.halted && this.isLive()) {
        const next = takeStep(this.queue);
        if (next === undefined) break;
        this.queue = next.rest;
        this.step = next.step;
        this.lastId = await runStep(next.step, { ...this.context, lastId: this.lastId! });
        this.step = undefined;
      }
    } catch (error) {
      // The owner crashes with it; whoever waits for idle goes with the owner.
      this.halted = true;
      this.step = undefined;
      this.running = false;
      this.onFault(error);
      return;
    }
    this.running = false;
    if (this.idle) for (const wake of this.waiters.splice(0)) wake();
  }
}
