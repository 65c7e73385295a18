/**
 * The generic supervisor (OTP's supervisor.erl), itself a gen server that traps exits.
 * (Implementation in progress.)
 */
import type { ChildSpec, ChildType, DynamicChildSpec } from './child-spec.ts';
import type { Clock } from './clock.ts';
import type { Pid, ProcessRef } from './pid.ts';

export type Strategy = 'one_for_one' | 'one_for_all' | 'rest_for_one';

export interface SupervisorFlags {
  /** Default `one_for_one`. */
  readonly strategy?: Strategy;
  /** Max restarts within `period`; one more and the supervisor gives up. Default 1. */
  readonly intensity?: number;
  /** Seconds. Default 5. */
  readonly period?: number;
}

export interface SupervisorSpec extends SupervisorFlags {
  /** Started left to right, each start awaited; stopped right to left. */
  readonly children: readonly ChildSpec[];
}

export interface DynamicSupervisorSpec<TArgs extends unknown[] = unknown[]> {
  readonly child: DynamicChildSpec<TArgs>;
  readonly intensity?: number;
  readonly period?: number;
  /** Refuse `startChild` beyond this many running children (SupervisorError `max_children`). Default unlimited. */
  readonly maxChildren?: number;
}

export interface SupervisorOptions {
  /** Register the supervisor under this name. */
  readonly name?: string;
  /** Time source for restart intensity (ms, monotonic). Default `performance.now()`. */
  readonly clock?: Clock;
}

/** supervisor:which_children/1, one entry per child. */
export interface ChildInfo {
  /** Undefined for a dynamic supervisor's children. */
  readonly id: string | undefined;
  /** The running child, `'restarting'` while a failed restart is retried, undefined if not running. */
  readonly pid: Pid | 'restarting' | undefined;
  readonly type: ChildType;
}

/** supervisor:count_children/1. */
export interface ChildCounts {
  readonly specs: number;
  readonly active: number;
  readonly supervisors: number;
  readonly workers: number;
}

function notYet(): never {
  throw new Error('src/otp/supervisor.ts: not implemented yet');
}

/** Start a supervisor: validates the spec, starts the children in order; resolves when all started. */
export function startSupervisor(spec: SupervisorSpec, options?: SupervisorOptions): Promise<Pid> {
  void spec;
  void options;
  return notYet();
}

/** Start a dynamic (simple_one_for_one) supervisor with no children. */
export function startDynamicSupervisor<TArgs extends unknown[]>(spec: DynamicSupervisorSpec<TArgs>, options?: SupervisorOptions): Promise<Pid> {
  void spec;
  void options;
  return notYet();
}

/**
 * Add a child. Static supervisor: `startChild(sup, spec)`. Dynamic supervisor:
 * `startChild(sup, ...args)` calls the template's `start(...args)`. Resolves with the Pid,
 * or undefined if the start returned 'ignore'.
 */
export function startChild(sup: ProcessRef, spec: ChildSpec): Promise<Pid | undefined>;
export function startChild(sup: ProcessRef, ...args: unknown[]): Promise<Pid | undefined>;
export function startChild(sup: ProcessRef, ...args: unknown[]): Promise<Pid | undefined> {
  void sup;
  void args;
  return notYet();
}

/** Stop a child (by id; by Pid on a dynamic supervisor). A static spec is kept (temporary ones are dropped). */
export function terminateChild(sup: ProcessRef, child: string | Pid): Promise<void> {
  void sup;
  void child;
  return notYet();
}

/** Start a stopped child again from its kept spec. */
export function restartChild(sup: ProcessRef, id: string): Promise<Pid | undefined> {
  void sup;
  void id;
  return notYet();
}

/** Remove a stopped child's spec. */
export function deleteChild(sup: ProcessRef, id: string): Promise<void> {
  void sup;
  void id;
  return notYet();
}

export function whichChildren(sup: ProcessRef): Promise<ChildInfo[]> {
  void sup;
  return notYet();
}

export function countChildren(sup: ProcessRef): Promise<ChildCounts> {
  void sup;
  return notYet();
}
