/**
 * Process timers with erlang:send_after/start_timer semantics.
 * - `sendAfter(dest, message, ms)` sends `message` (a gen server gets it in `handleInfo`) after
 *   `ms`; `startTimer(dest, message, ms)` sends `{ type: 'timeout', ref, message }` instead.
 * - `dest` is a Pid or a name. A Pid's timer dies with that process: it is cancelled when the
 *   process exits, and a timer for a process that is already dead never fires. A name is
 *   resolved when the timer fires; a free name drops the message (no error).
 * - `cancelTimer(ref)` returns the ms that were left, or false if the timer already fired,
 *   was cancelled or died with its process; `readTimer(ref)` is the same without cancelling.
 * `ms` must be a non-negative number (InvalidInputError `invalid_option`, no timer made).
 */
import { InvalidInputError } from '../errors.ts';
import type { Message, ProcessRef } from './pid.ts';
import { deliverInfo, resolve, type Process } from './process.ts';

let nextRef = 1;

/** A running timer, as `cancelTimer` and `readTimer` take it. */
export class TimerRef {
  /** Unique per timer. */
  readonly id = nextRef++;
  private handle: ReturnType<typeof setTimeout> | undefined;
  private readonly deadline: number;

  /** @internal Made by `sendAfter` and `startTimer`, never by hand. */
  constructor(
    private readonly owner: Process | undefined,
    ms: number,
    fire: () => void,
  ) {
    this.deadline = performance.now() + ms;
    this.handle = setTimeout(() => {
      this.handle = undefined;
      this.owner?.owned?.delete(this);
      fire();
    }, ms);
    if (owner !== undefined) (owner.owned ??= new Set()).add(this);
  }

  /** Ms left, or false once it fired or was cancelled. */
  left(): number | false {
    return this.handle === undefined ? false : Math.max(0, Math.round(this.deadline - performance.now()));
  }

  /**
   * Cancels it (nothing if it fired or was cancelled). `cancelTimer` also says how long was left.
   */
  cancel(): void {
    if (this.handle === undefined) return;
    clearTimeout(this.handle);
    this.handle = undefined;
    this.owner?.owned?.delete(this);
  }

  /** `#Ref<timer.id>`. */
  toString(): string {
    return `#Ref<timer.${this.id}>`;
  }
}

/** What `startTimer` delivers (erlang:start_timer's `{timeout, TimerRef, Msg}`). */
export interface TimerMessage<M = unknown> {
  /** Always `'timeout'`. */
  readonly type: 'timeout';
  /** The timer that fired (what `startTimer` returned). */
  readonly ref: TimerRef;
  /** The message given to `startTimer`. */
  readonly message: M;
}

function checkMs(ms: number, what: string): void {
  if (!(typeof ms === 'number' && ms >= 0 && ms !== Infinity)) {
    throw new InvalidInputError('invalid_option', `${what}: ms must be a non-negative finite number, got ${ms}`);
  }
}

/** A timer that delivers `message` to `dest` after `ms`; for a Pid, it dies with that process. */
function arm(dest: ProcessRef, ms: number, build: (ref: TimerRef) => Message): TimerRef {
  const owner = typeof dest === 'string' ? undefined : resolve(dest);
  const ref: TimerRef = new TimerRef(owner, ms, () => {
    const target = owner ?? resolve(dest);
    if (target !== undefined && target.alive) deliverInfo(target, build(ref));
  });
  // A timer for a Pid that is already dead is dead too.
  if (typeof dest !== 'string' && owner === undefined) ref.cancel();
  return ref;
}

/**
 * Sends `message` to `dest` after `ms` (erlang:send_after/3); a gen server gets it in `handleInfo`.
 *
 * @throws `InvalidInputError` `invalid_option` for an `ms` that is not a non-negative finite
 * number.
 */
export function sendAfter<M extends Message>(dest: ProcessRef, message: M, ms: number): TimerRef {
  checkMs(ms, 'sendAfter');
  return arm(dest, ms, () => message);
}

/**
 * Sends `{ type: 'timeout', ref, message }` (`TimerMessage`) to `dest` after `ms`
 * (erlang:start_timer/3).
 *
 * @throws `InvalidInputError` `invalid_option` for an `ms` that is not a non-negative finite
 * number.
 */
export function startTimer<M>(dest: ProcessRef, message: M, ms: number): TimerRef {
  checkMs(ms, 'startTimer');
  return arm(dest, ms, (ref): TimerMessage<M> => ({ type: 'timeout', ref, message }));
}

/**
 * Cancels the timer: the ms that were left, or false if it already fired, was cancelled or died
 * with its process.
 */
export function cancelTimer(ref: TimerRef): number | false {
  const left = ref.left();
  ref.cancel();
  return left;
}

/** The ms left, or false (as `cancelTimer`, without cancelling). */
export function readTimer(ref: TimerRef): number | false {
  return ref.left();
}

/** A raw event to `proc` after `ms`, cancelled with it (a gen server's own timeout). */
export function deliverAfter(proc: Process, event: object, ms: number): TimerRef {
  return new TimerRef(proc, ms, () => proc.deliver(event));
}
