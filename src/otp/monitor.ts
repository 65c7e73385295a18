/**
 * Monitors: one-way, stackable exit notifications (erlang:monitor/2).
 * - `monitor(ref, onDown)` calls `onDown` once, asynchronously, when the process exits, with
 *   its exit reason. The name is already released by then.
 * - A target that is not alive (dead pid, unregistered name) gets DOWN with `noproc` on the
 *   next microtask.
 * - After `demonitor(ref)` returns, `onDown` is never called (OTP's `[flush]`).
 */
import type { ExitReason } from './exit-reason.ts';
import type { Pid, ProcessRef } from './pid.ts';
import { resolve, type ExitWatcher, type Process } from './process.ts';
import { fewWith, fewWithout } from './few.ts';

/** What a monitor's `onDown` gets once its target exits. */
export interface Down {
  /** The monitor that fired. */
  readonly ref: MonitorRef;
  /** What was monitored: the Pid, or the name as given. */
  readonly target: ProcessRef;
  /** The process that exited; undefined for `noproc` on a name. */
  readonly pid: Pid | undefined;
  /** Why it exited (`noproc` when it was not alive when monitored). */
  readonly reason: ExitReason;
}

let nextRef = 1;

/** A monitor, from `monitor`; cancel it with `demonitor`. */
export class MonitorRef implements ExitWatcher {
  /** Unique per monitor. */
  readonly id = nextRef++;
  /** True until it fires or is cancelled. */
  active = true;

  /** @internal Made by `monitor`, never by hand. */
  constructor(
    /** What is monitored: a Pid, or a name as given. */
    readonly target: ProcessRef,
    private readonly process: Process | undefined,
    private readonly onDown: (down: Down) => void,
  ) {}

  /** @internal Called by the runtime when the target exits. */
  fire(reason: ExitReason, pid: Pid | undefined): void {
    if (!this.active) return;
    this.active = false;
    this.onDown({ ref: this, target: this.target, pid, reason });
  }

  /** Cancels it; true if it was still active. After this `onDown` is never called. */
  cancel(): boolean {
    const wasActive = this.active;
    this.active = false;
    if (this.process !== undefined) this.process.watchers = fewWithout(this.process.watchers, this);
    return wasActive;
  }

  /** `#Ref<id>`. */
  toString(): string {
    return `#Ref<${this.id}>`;
  }
}

/**
 * Calls `onDown` once, asynchronously, when `ref` exits (`noproc` on the next microtask when it is
 * not alive). Stackable: each call is its own monitor.
 */
export function monitor(ref: ProcessRef, onDown: (down: Down) => void): MonitorRef {
  const proc = resolve(ref);
  const mref = new MonitorRef(ref, proc, onDown);
  if (proc === undefined) {
    const pid = typeof ref === 'string' ? undefined : ref;
    queueMicrotask(() => mref.fire('noproc', pid));
  } else {
    proc.watchers = fewWith(proc.watchers, mref);
  }
  return mref;
}

/**
 * A monitor without a ref, for an owner of many processes that keeps a record per process
 * anyway (the conversation router): `watcher.fire(reason, pid)` is called once, after the
 * process exits, as a monitor's `onDown` would be (`noproc` on the next microtask if it is not
 * alive). It cannot be cancelled; it costs no MonitorRef and no closure.
 */
export function watch(pid: Pid, watcher: ExitWatcher): void {
  const proc = resolve(pid);
  if (proc === undefined) queueMicrotask(() => watcher.fire('noproc', pid));
  else proc.watchers = fewWith(proc.watchers, watcher);
}

/** Stop monitoring. Returns false if the DOWN was already delivered (or demonitored before). */
export function demonitor(ref: MonitorRef): boolean {
  return ref.cancel();
}
