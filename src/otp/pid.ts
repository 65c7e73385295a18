/**
 * An opaque process identifier. Unique for the life of the Node process (ids are never
 * reused), printable as `<0.ID.0>` like an Erlang pid, comparable with `===`. A Pid keeps
 * pointing at its incarnation: after a restart the new process has a new Pid, so long-lived
 * callers should address a registered name instead.
 */
export abstract class Pid {
  /** The number in `<0.ID.0>`: unique, never reused. */
  abstract readonly id: number;
  /** Makes Pid nominal: only the runtime creates Pids. */
  declare private readonly pidBrand: void;
  /** `<0.ID.0>`. */
  abstract toString(): string;
}

/** How callers address a process: its Pid, or a registered name (resolved on every use). */
export type ProcessRef = Pid | string;

/** Every message is an event object with a `type`, as xstate requires. */
export interface Message {
  /** What the message is; behaviours dispatch on it. */
  readonly type: string;
}
