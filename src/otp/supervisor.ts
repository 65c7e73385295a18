/**
 * The generic supervisor (OTP's supervisor.erl). A supervisor is a gen server that traps
 * exits; like OTP's it handles one request at a time and blocks while it starts, restarts or
 * stops children ("children are responsible for keeping their start and shutdown short").
 *
 * Contract
 * - Start: children start left to right, each start awaited; the child is linked to the
 *   supervisor. If one fails, the ones already started are stopped (right to left) and
 *   `startSupervisor` rejects with SupervisorError `failed_to_start_child`
 *   (OTP's `{shutdown, {failed_to_start_child, Id, Reason}}`).
 * - A child exits (an EXIT from its link):
 *   - permanent: restarted; transient: restarted unless the reason is normal, shutdown or
 *     `{shutdown, _}` (then its spec is kept, not running); temporary: never restarted, its
 *     spec is dropped.
 *   - Every restart first goes through `addRestart`: if more than `intensity` restarts fall
 *     within `period` seconds, the supervisor gives up (`escalate` event): it stops its
 *     remaining children right to left and exits with `shutdown`, which its own supervisor
 *     sees as a child exit.
 *   - Strategies: one_for_one restarts the child; one_for_all stops all others (right to
 *     left; temporary ones are dropped) and starts all again left to right; rest_for_one does
 *     that for the child and those started after it.
 *   - A child that fails to start during a restart is marked `restarting` and retried
 *     through a message to itself (after `setImmediate`, so a pending shutdown runs first);
 *     every retry counts against intensity.
 * - Stopping a child (shutdown spec): unlink, monitor, then `brutal_kill` kills at once; a
 *   number of ms sends the exit signal `shutdown` as the child's parent (a gen server that
 *   traps exits runs `terminate`; one that does not ends at once) and kills after that long;
 *   `infinity` waits. The supervisor's own exit stops children right to left (a dynamic
 *   supervisor: all in parallel). The supervisor stops on an exit signal from its parent
 *   only (gen_server's rule); anyone else uses `stop(sup)`.
 * - A start bounded by the child's `startTimeoutMs` that has not settled in time is a start
 *   failure with ExitError `timeout`.
 * - autoShutdown (OTP 24): when a significant child ends by itself and is not restarted,
 *   `any_significant` shuts the supervisor down (children right to left, then exit
 *   `shutdown`); `all_significant` does so once no significant child is running.
 * - Dynamic supervisors (simple_one_for_one): one child template, no children at start,
 *   `startChild(sup, ...args)`, `terminateChild(sup, pid)` (ok for a pid that already
 *   exited, as OTP's find_child), `restartChild`/`deleteChild` reject with
 *   `simple_one_for_one`, optional `maxChildren`.
 */
import { genServer, noReply, type ServerSelf } from './gen-server.ts';
import type { From } from './call.ts';
import { call, send } from './call.ts';
import { resolveChildSpec, type AutoShutdown, type ChildSpec, type ChildType, type DynamicChildSpec, type ResolvedChildSpec, type StartResult } from './child-spec.ts';
import { monotonicClock, type Clock } from './clock.ts';
import { ExitError, SupervisorError } from './otp-errors.ts';
import { isNormalExit, type ExitReason } from './exit-reason.ts';
import { monitor } from './monitor.ts';
import type { Message, Pid, ProcessRef } from './pid.ts';
import { EXIT, exit, exitSignal, link, Process, resolve, startProcess, unlink, type ExitMessage } from './process.ts';
import { emitSupervisorEvent } from './supervisor-events.ts';
import type { TreeEvent } from './tree-events.ts';

/**
 * What a supervisor restarts when a child exits: the child (`one_for_one`), all (`one_for_all`), or
 * it and those started after it (`rest_for_one`).
 */
export type Strategy = 'one_for_one' | 'one_for_all' | 'rest_for_one';

/**
 * How a supervisor restarts (supervisor:sup_flags()). Invalid: SupervisorError
 * `invalid_supervisor_flags`.
 */
export interface SupervisorFlags {
  /** Default `one_for_one`. */
  readonly strategy?: Strategy;
  /** Max restarts within `period`; one more and the supervisor gives up. Default 1. */
  readonly intensity?: number;
  /** Seconds. Default 5. */
  readonly period?: number;
  /** End the supervisor when significant children end (OTP 24's auto_shutdown). Default `never`. */
  readonly autoShutdown?: AutoShutdown;
}

/** What `startSupervisor` (and `startApplication`) takes: the flags and the children. */
export interface SupervisorSpec extends SupervisorFlags {
  /** Started left to right, each start awaited; stopped right to left. */
  readonly children: readonly ChildSpec[];
}

/** What `startDynamicSupervisor` takes: one child template (simple_one_for_one) and the flags. */
export interface DynamicSupervisorSpec<TArgs extends unknown[] = unknown[]> {
  /** The template every `startChild(sup, ...args)` starts from. */
  readonly child: DynamicChildSpec<TArgs>;
  /** Default 1. */
  readonly intensity?: number;
  /** Seconds. Default 5. */
  readonly period?: number;
  /** Refuse `startChild` beyond this many children (SupervisorError `max_children`). Default unlimited. */
  readonly maxChildren?: number;
  /** Default `never`; `all_significant` ends the supervisor when its last child ended by itself. */
  readonly autoShutdown?: AutoShutdown;
}

/** How a supervisor runs: its name and clock. */
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
  /** `'worker'` or `'supervisor'`. */
  readonly type: ChildType;
}

/** supervisor:count_children/1. */
export interface ChildCounts {
  /** Child specs (a dynamic supervisor: 1). */
  readonly specs: number;
  /** Children running now. */
  readonly active: number;
  /** Specs (dynamic: children) of type supervisor. */
  readonly supervisors: number;
  /** Specs (dynamic: children) of type worker. */
  readonly workers: number;
}

/** One supervised child as the supervisor tracks it. */
export interface Child {
  readonly id: string | undefined;
  readonly spec: ResolvedChildSpec;
  readonly args: readonly unknown[];
  pid: Process | 'restarting' | undefined;
  restarts: number;
}

/** A supervisor's state; readable synchronously (without a call) for tree inspection. */
export class SupervisorState {
  /** Static children in start order. */
  children: Child[] = [];
  /** A dynamic supervisor's children. */
  readonly dynamicChildren = new Set<Child>();
  readonly byPid = new Map<Pid, Child>();
  /** OTP's restart list: whole-second timestamps, newest first. */
  restartTimes: number[] = [];

  constructor(
    readonly self: ServerSelf,
    /** The supervisor's own process. */
    readonly me: Process,
    readonly strategy: Strategy | 'simple_one_for_one',
    readonly intensity: number,
    readonly period: number,
    readonly clock: Clock,
    readonly template: ResolvedChildSpec | undefined,
    readonly maxChildren: number,
    readonly autoShutdown: AutoShutdown,
  ) {}

  get dynamic(): boolean {
    return this.strategy === 'simple_one_for_one';
  }

  /** All children, in start order (dynamic: insertion order). */
  list(): Child[] {
    return this.dynamic ? [...this.dynamicChildren] : this.children;
  }
}

const states = new WeakMap<Pid, SupervisorState>();

/** The state of a live supervisor process (for application inspection). */
export function supervisorStateOf(pid: Pid): SupervisorState | undefined {
  return states.get(pid);
}

type SupervisorInput =
  | { readonly kind: 'static'; readonly flags: Required<SupervisorFlags>; readonly children: readonly ResolvedChildSpec[]; readonly clock: Clock }
  | {
      readonly kind: 'dynamic';
      readonly intensity: number;
      readonly period: number;
      readonly template: ResolvedChildSpec;
      readonly maxChildren: number;
      readonly autoShutdown: AutoShutdown;
      readonly clock: Clock;
    };

type SupervisorCall =
  | { readonly type: 'start_child'; readonly args: readonly unknown[] }
  | { readonly type: 'terminate_child'; readonly child: string | Pid }
  | { readonly type: 'restart_child'; readonly id: string }
  | { readonly type: 'delete_child'; readonly id: string }
  | { readonly type: 'which_children' }
  | { readonly type: 'count_children' };

interface TryAgain extends Message {
  readonly type: 'try_again_restart';
  readonly child: Child;
}

function emit(event: TreeEvent): void {
  emitSupervisorEvent(event);
}

// ---------------------------------------------------------------------------------------------
// Starting and stopping one child

type StartOutcome = { readonly ok: true; readonly pid: Process | undefined } | { readonly ok: false; readonly error: unknown };

/**
 * Run a child's start function and adopt the process (link, track). A start that returns its
 * pid at once (most do: spawning is synchronous) is adopted at once, so a dynamic supervisor
 * answers `startChild` within the same turn, as OTP's supervisor does (no await per child).
 */
function startOne(sup: SupervisorState, child: Child): StartOutcome | Promise<StartOutcome> {
  let started: StartResult | Promise<StartResult>;
  try {
    started = withStartTimeout(child.spec.start(...child.args), child.spec.startTimeoutMs);
  } catch (error) {
    return { ok: false, error };
  }
  if (!isThenable(started)) return adoptStarted(sup, child, started);
  return Promise.resolve(started).then(
    (result) => adoptStarted(sup, child, result),
    (error: unknown): StartOutcome => ({ ok: false, error }),
  );
}

function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

function adoptStarted(sup: SupervisorState, child: Child, result: StartResult): StartOutcome {
  if (result === 'ignore') {
    child.pid = undefined;
    return { ok: true, pid: undefined };
  }
  if (!(result instanceof Process)) {
    return { ok: false, error: new TypeError(`start returned ${String(result)}, not a Pid or 'ignore'`) };
  }
  adopt(sup, child, result);
  return { ok: true, pid: result };
}

/** A start that has not settled after `ms` fails with `timeout`; a pid it hands back later is killed. */
function withStartTimeout(started: StartResult | Promise<StartResult>, ms: number): StartResult | Promise<StartResult> {
  if (ms === Infinity || !(started instanceof Promise)) return started;
  return new Promise((resolveStart, rejectStart) => {
    let late = false;
    const timer = setTimeout(() => {
      late = true;
      rejectStart(new ExitError('timeout', 'timeout', `child start did not finish within ${ms} ms`));
    }, ms);
    started.then(
      (result) => {
        clearTimeout(timer);
        if (!late) resolveStart(result);
        else if (result instanceof Process) exit(result, 'kill');
      },
      (error: unknown) => {
        clearTimeout(timer);
        if (!late) rejectStart(error);
      },
    );
  });
}

function adopt(sup: SupervisorState, child: Child, pid: Process): void {
  child.pid = pid;
  sup.byPid.set(pid, child);
  pid.parent = sup.me;
  emit({ type: 'start', supervisor: sup.me, id: child.id, pid, childType: child.spec.type });
  if (pid.alive) {
    link(sup.me, pid);
  } else {
    // It died between its start and now: handle that exit like any other.
    const message: ExitMessage = { type: EXIT, from: pid, reason: pid.exitReason ?? 'noproc' };
    send(sup.me, message);
  }
}

/** Stop a running child as its shutdown spec says; resolves with its exit reason. */
function shutdownProcess(sup: Process, pid: Process, shutdown: ResolvedChildSpec['shutdown']): Promise<ExitReason> {
  return new Promise((resolveReason) => {
    if (!pid.alive) return resolveReason(pid.exitReason ?? 'noproc');
    let timer: ReturnType<typeof setTimeout> | undefined;
    monitor(pid, (down) => {
      if (timer !== undefined) clearTimeout(timer);
      resolveReason(down.reason);
    });
    if (shutdown === 'brutal_kill') {
      exit(pid, 'kill');
    } else {
      // The supervisor is the child's parent: a gen server that traps exits runs terminate.
      exitSignal(sup, pid, 'shutdown');
      if (shutdown !== 'infinity') timer = setTimeout(() => exit(pid, 'kill'), shutdown);
    }
  });
}

/** Stop one child (if running) and forget its pid. */
async function terminateOne(sup: SupervisorState, child: Child): Promise<void> {
  const pid = child.pid;
  child.pid = undefined;
  if (!(pid instanceof Process)) return;
  unlink(sup.me, pid);
  sup.byPid.delete(pid);
  const reason = await shutdownProcess(sup.me, pid, child.spec.shutdown);
  emit({ type: 'exit', supervisor: sup.me, id: child.id, pid, reason });
}

/** Stop `children` right to left; temporary ones are dropped from the supervisor. */
async function terminateChildren(sup: SupervisorState, children: readonly Child[]): Promise<void> {
  for (let i = children.length - 1; i >= 0; i--) {
    const child = children[i] as Child;
    await terminateOne(sup, child);
    if (child.spec.restart === 'temporary') removeChild(sup, child);
  }
}

/** Stop every dynamic child at once (each killed after the template's shutdown time if need be). */
async function terminateDynamicChildren(sup: SupervisorState): Promise<void> {
  await Promise.all([...sup.dynamicChildren].map((child) => terminateOne(sup, child)));
  sup.dynamicChildren.clear();
}

function removeChild(sup: SupervisorState, child: Child): void {
  if (child.pid instanceof Process) sup.byPid.delete(child.pid);
  if (sup.dynamic) sup.dynamicChildren.delete(child);
  else sup.children = sup.children.filter((c) => c !== child);
}

/** OTP's del_child: a temporary child (or any dynamic one) is removed, others keep their spec. */
function delChild(sup: SupervisorState, child: Child): void {
  if (child.pid instanceof Process) sup.byPid.delete(child.pid);
  child.pid = undefined;
  if (sup.dynamic || child.spec.restart === 'temporary') removeChild(sup, child);
}

/**
 * Start `children` left to right. On a failure, stop there: returns the failed child and its
 * error (children after it stay not running).
 */
async function startChildren(sup: SupervisorState, children: readonly Child[]): Promise<{ child: Child; error: unknown } | undefined> {
  for (const child of [...children]) {
    const outcome = await startOne(sup, child);
    if (!outcome.ok) {
      emit({ type: 'start_error', supervisor: sup.me, id: child.id, error: outcome.error });
      return { child, error: outcome.error };
    }
    if (outcome.pid === undefined && child.spec.restart === 'temporary') removeChild(sup, child);
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Restarts

/** OTP's add_restart: false when the intensity is exceeded. */
export function addRestart(restartTimes: number[], nowMs: number, intensity: number, period: number): { ok: boolean; times: number[] } {
  const now = Math.floor(nowMs / 1000);
  const kept: number[] = [now];
  for (const t of restartTimes) {
    if (t >= now - period) kept.push(t);
    else break;
  }
  return { ok: kept.length <= intensity, times: kept };
}

async function onChildExit(sup: SupervisorState, pid: Process, reason: ExitReason): Promise<void> {
  const child = sup.byPid.get(pid);
  if (child === undefined || child.pid !== pid) return; // already stopped or replaced
  emit({ type: 'exit', supervisor: sup.me, id: child.id, pid, reason });
  const restart = child.spec.restart;
  if (restart === 'temporary' || (restart === 'transient' && isNormalExit(reason))) {
    delChild(sup, child);
    autoShutdown(sup, child);
    return;
  }
  await restartChild_(sup, child, pid);
}

/** OTP's do_auto_shutdown: a significant child ended by itself and is not restarted. */
function autoShutdown(sup: SupervisorState, child: Child): void {
  if (sup.autoShutdown === 'never' || !child.spec.significant) return;
  if (sup.autoShutdown === 'all_significant') {
    const anyLeft = sup.dynamic
      ? sup.dynamicChildren.size > 0
      : sup.children.some((c) => c.spec.significant && c.pid !== undefined);
    if (anyLeft) return;
  }
  emit({ type: 'auto_shutdown', supervisor: sup.me, id: child.id });
  sup.self.stop('shutdown');
}

async function restartChild_(sup: SupervisorState, child: Child, previous: Process | undefined): Promise<void> {
  const added = addRestart(sup.restartTimes, sup.clock.now(), sup.intensity, sup.period);
  sup.restartTimes = added.times;
  if (!added.ok) {
    emit({ type: 'escalate', supervisor: sup.me, reason: 'reached_max_restart_intensity' });
    delChild(sup, child);
    sup.self.stop('shutdown');
    return;
  }
  let failed: { child: Child; error: unknown } | undefined;
  if (sup.strategy === 'one_for_one' || sup.strategy === 'simple_one_for_one') {
    if (child.pid instanceof Process) sup.byPid.delete(child.pid);
    child.pid = undefined;
    const outcome = await startOne(sup, child);
    if (!outcome.ok) {
      emit({ type: 'start_error', supervisor: sup.me, id: child.id, error: outcome.error });
      failed = { child, error: outcome.error };
    }
  } else {
    if (child.pid instanceof Process) sup.byPid.delete(child.pid);
    child.pid = undefined;
    const group = sup.strategy === 'one_for_all' ? sup.children : sup.children.slice(sup.children.indexOf(child));
    await terminateChildren(sup, group);
    failed = await startChildren(sup, group.filter((c) => sup.children.includes(c)));
  }
  if (failed !== undefined) {
    failed.child.pid = 'restarting';
    const retry: TryAgain = { type: 'try_again_restart', child: failed.child };
    setImmediate(() => send(sup.me, retry));
  }
  const pid = child.pid as Child['pid'];
  if (sup.dynamic && pid === undefined) sup.dynamicChildren.delete(child); // restarted as 'ignore'
  child.restarts++;
  if (failed?.child !== child) {
    emit({ type: 'restart', supervisor: sup.me, id: child.id, pid: pid instanceof Process ? pid : undefined, previous, restarts: child.restarts });
  }
}

// ---------------------------------------------------------------------------------------------
// Child management requests

function handleStartChild(sup: SupervisorState, args: readonly unknown[]): Pid | undefined | Promise<Pid | undefined> {
  if (sup.dynamic) {
    const template = sup.template as ResolvedChildSpec;
    if (sup.dynamicChildren.size >= sup.maxChildren) {
      throw new SupervisorError('max_children', `dynamic supervisor ${sup.me} already has ${sup.maxChildren} children`);
    }
    const child: Child = { id: template.id, spec: template, args, pid: undefined, restarts: 0 };
    const outcome = startOne(sup, child);
    return outcome instanceof Promise ? outcome.then((o) => startedDynamic(sup, child, o)) : startedDynamic(sup, child, outcome);
  }
  return startStaticChild(sup, args);
}

function startedDynamic(sup: SupervisorState, child: Child, outcome: StartOutcome): Pid | undefined {
  if (!outcome.ok) throw startFailed(child, outcome.error);
  if (outcome.pid !== undefined) sup.dynamicChildren.add(child);
  return outcome.pid;
}

async function startStaticChild(sup: SupervisorState, args: readonly unknown[]): Promise<Pid | undefined> {
  const spec = resolveChildSpec(args[0], { idRequired: true, autoShutdown: sup.autoShutdown });
  const existing = sup.children.find((c) => c.id === spec.id);
  if (existing !== undefined) {
    if (existing.pid instanceof Process) {
      throw new SupervisorError('already_started', `child '${spec.id}' is already started as ${existing.pid}`, { pid: existing.pid, childId: spec.id as string });
    }
    throw new SupervisorError('already_present', `child '${spec.id}' is already present (not running)`, { childId: spec.id as string });
  }
  const child: Child = { id: spec.id, spec, args: [], pid: undefined, restarts: 0 };
  const outcome = await startOne(sup, child);
  if (!outcome.ok) throw startFailed(child, outcome.error);
  if (outcome.pid !== undefined || spec.restart !== 'temporary') sup.children.push(child);
  return outcome.pid;
}

function startFailed(child: Child, error: unknown): SupervisorError {
  const id = child.id === undefined ? {} : { childId: child.id };
  return new SupervisorError('failed_to_start_child', `child${child.id === undefined ? '' : ` '${child.id}'`} failed to start: ${describe(error)}`, {
    ...id,
    reason: error,
  });
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function findChild(sup: SupervisorState, key: string | Pid): Child | undefined {
  if (typeof key !== 'string') return sup.byPid.get(key);
  return sup.dynamic ? undefined : sup.children.find((c) => c.id === key);
}

async function handleTerminateChild(sup: SupervisorState, key: string | Pid): Promise<void> {
  if (sup.dynamic && typeof key === 'string') {
    throw new SupervisorError('simple_one_for_one', 'terminateChild on a dynamic supervisor takes the child pid, not an id');
  }
  const child = findChild(sup, key);
  if (child === undefined) {
    // OTP's find_child: a dynamic supervisor treats a pid that is no longer alive as found, so stopping is idempotent.
    if (sup.dynamic && key instanceof Process && !key.alive) return;
    throw new SupervisorError('not_found', `no child ${String(key)}`);
  }
  await terminateOne(sup, child);
  delChild(sup, child);
}

async function handleRestartChild(sup: SupervisorState, id: string): Promise<Pid | undefined> {
  if (sup.dynamic) throw new SupervisorError('simple_one_for_one', 'restartChild is not supported by a dynamic supervisor');
  const child = findChild(sup, id);
  if (child === undefined) throw new SupervisorError('not_found', `no child '${id}'`, { childId: id });
  if (child.pid === 'restarting') throw new SupervisorError('restarting', `child '${id}' is restarting`, { childId: id });
  if (child.pid !== undefined) throw new SupervisorError('running', `child '${id}' is running as ${child.pid}`, { childId: id, pid: child.pid });
  const outcome = await startOne(sup, child);
  if (!outcome.ok) throw startFailed(child, outcome.error);
  return outcome.pid;
}

function handleDeleteChild(sup: SupervisorState, id: string): void {
  if (sup.dynamic) throw new SupervisorError('simple_one_for_one', 'deleteChild is not supported by a dynamic supervisor');
  const child = findChild(sup, id);
  if (child === undefined) throw new SupervisorError('not_found', `no child '${id}'`, { childId: id });
  if (child.pid === 'restarting') throw new SupervisorError('restarting', `child '${id}' is restarting`, { childId: id });
  if (child.pid !== undefined) throw new SupervisorError('running', `child '${id}' is running as ${child.pid}`, { childId: id, pid: child.pid });
  removeChild(sup, child);
}

function whichChildrenOf(sup: SupervisorState): ChildInfo[] {
  // OTP lists static children most recently started first.
  const list = sup.dynamic ? sup.list() : [...sup.children].reverse();
  return list.map((c) => ({ id: c.id, pid: c.pid, type: c.spec.type }));
}

function countChildrenOf(sup: SupervisorState): ChildCounts {
  const list = sup.list();
  let active = 0;
  let supervisors = 0;
  for (const c of list) {
    if (c.pid instanceof Process && c.pid.alive) active++;
    if (c.spec.type === 'supervisor') supervisors++;
  }
  return { specs: sup.dynamic ? 1 : list.length, active, supervisors, workers: list.length - supervisors };
}

/**
 * Reply with `work`'s result; a SupervisorError goes to the caller, anything else crashes the
 * supervisor. Work done at once is answered at once (the supervisor is not busy across a turn).
 */
function answer(from: From, work: () => unknown): typeof noReply | Promise<typeof noReply> {
  let result: unknown;
  try {
    result = work();
  } catch (error) {
    return failed(from, error);
  }
  if (!(result instanceof Promise)) {
    from.reply(result);
    return noReply;
  }
  return result.then(
    (value: unknown) => {
      from.reply(value);
      return noReply;
    },
    (error: unknown) => failed(from, error),
  );
}

function failed(from: From, error: unknown): typeof noReply {
  if (!(error instanceof SupervisorError)) throw error;
  from.fail(error);
  return noReply;
}

// ---------------------------------------------------------------------------------------------
// The supervisor behaviour

const supervisorLogic = genServer<SupervisorState, SupervisorInput, SupervisorCall, Message, TryAgain | ExitMessage>({
  async init(input, self) {
    const me = resolve(self.pid);
    if (me === undefined) throw new Error(`supervisor ${self.pid} is not alive in its own init`);
    const sup =
      input.kind === 'static'
        ? new SupervisorState(self, me, input.flags.strategy, input.flags.intensity, input.flags.period, input.clock, undefined, Infinity, input.flags.autoShutdown)
        : new SupervisorState(self, me, 'simple_one_for_one', input.intensity, input.period, input.clock, input.template, input.maxChildren, input.autoShutdown);
    states.set(sup.me, sup);
    if (input.kind === 'static') {
      sup.children = input.children.map((spec) => ({ id: spec.id, spec, args: [], pid: undefined, restarts: 0 }));
      const failed = await startChildren(sup, sup.children);
      if (failed !== undefined) {
        await terminateChildren(sup, sup.children);
        throw startFailed(failed.child, failed.error);
      }
    }
    return sup;
  },

  handleCall(request, from, sup) {
    switch (request.type) {
      case 'start_child':
        return answer(from, () => handleStartChild(sup, request.args));
      case 'terminate_child':
        return answer(from, () => handleTerminateChild(sup, request.child));
      case 'restart_child':
        return answer(from, () => handleRestartChild(sup, request.id));
      case 'delete_child':
        return answer(from, () => handleDeleteChild(sup, request.id));
      case 'which_children':
        return whichChildrenOf(sup);
      case 'count_children':
        return countChildrenOf(sup);
    }
  },

  async handleInfo(message, sup) {
    if (message.type === EXIT) {
      const exitMessage = message as ExitMessage;
      if (exitMessage.from instanceof Process) await onChildExit(sup, exitMessage.from, exitMessage.reason);
    } else if (message.type === 'try_again_restart') {
      const { child } = message as TryAgain;
      if (child.pid === 'restarting' && (sup.dynamic ? sup.dynamicChildren.has(child) : sup.children.includes(child))) {
        await restartChild_(sup, child, undefined);
      }
    }
  },

  async terminate(_reason, sup) {
    if (sup.dynamic) await terminateDynamicChildren(sup);
    else await terminateChildren(sup, sup.children);
  },
});

// ---------------------------------------------------------------------------------------------
// Public API

function invalidFlags(field: string, message: string): never {
  throw new SupervisorError('invalid_supervisor_flags', `supervisor flags: ${message}`, { field });
}

function checkIntensity(intensity: unknown, period: unknown): { intensity: number; period: number } {
  const i = intensity ?? 1;
  const p = period ?? 5;
  if (typeof i !== 'number' || !Number.isInteger(i) || i < 0) invalidFlags('intensity', 'intensity must be a non-negative integer');
  if (typeof p !== 'number' || !Number.isInteger(p) || p < 1) invalidFlags('period', 'period must be a positive integer of seconds');
  return { intensity: i, period: p };
}

function checkAutoShutdown(value: unknown): AutoShutdown {
  const v = value ?? 'never';
  if (v !== 'never' && v !== 'any_significant' && v !== 'all_significant') {
    invalidFlags('autoShutdown', 'autoShutdown must be never, any_significant or all_significant');
  }
  return v;
}

/** Rethrow a failed init as the supervisor error it carries. */
function unwrapInitError(error: unknown): never {
  if (error instanceof ExitError && error.reason instanceof SupervisorError) throw error.reason;
  throw error;
}

/**
 * Start a supervisor. Validates the flags and every child spec (SupervisorError
 * `invalid_supervisor_flags` / `invalid_child_spec`, nothing started), then starts the
 * children in order; resolves once all started, rejects with `failed_to_start_child` after
 * stopping the ones already started.
 *
 * @throws `SupervisorError` `invalid_supervisor_flags`, `invalid_child_spec` (nothing started) or
 * `failed_to_start_child` (`details.childId`, `details.reason`; the started ones were stopped).
 * @throws `RegistryError` `already_registered` when `options.name` is taken.
 *
 * @example
 * ```ts
 * import { genServer, start, startSupervisor, stop, whichChildren } from 'mnemo/otp';
 *
 * const worker = genServer<Record<string, never>>({ init: () => ({}) });
 * const sup = await startSupervisor(
 *   {
 *     strategy: 'one_for_one',
 *     intensity: 3,
 *     period: 5,
 *     children: [
 *       { id: 'a', start: () => start(worker) },
 *       { id: 'b', start: () => start(worker), restart: 'transient' },
 *     ],
 *   },
 *   { name: 'my_sup' },
 * );
 * console.log((await whichChildren(sup)).map((c) => c.id)); // [ 'b', 'a' ]
 * await stop(sup, 'shutdown');
 * ```
 */
export function startSupervisor(spec: SupervisorSpec, options: SupervisorOptions = {}): Promise<Pid> {
  return startSupervisorProcess(spec, options);
}

/** `startSupervisor`, resolving with the process itself (for application.ts). */
export async function startSupervisorProcess(spec: SupervisorSpec, options: SupervisorOptions = {}): Promise<Process> {
  const strategy = spec.strategy ?? 'one_for_one';
  if (strategy !== 'one_for_one' && strategy !== 'one_for_all' && strategy !== 'rest_for_one') {
    invalidFlags('strategy', 'strategy must be one_for_one, one_for_all or rest_for_one (use startDynamicSupervisor for simple_one_for_one)');
  }
  const { intensity, period } = checkIntensity(spec.intensity, spec.period);
  const autoShutdown = checkAutoShutdown(spec.autoShutdown);
  if (!Array.isArray(spec.children)) invalidFlags('children', 'children must be an array of child specs');
  const children = spec.children.map((child) => resolveChildSpec(child, { idRequired: true, autoShutdown }));
  const ids = new Set<string>();
  for (const child of children) {
    if (ids.has(child.id as string)) {
      throw new SupervisorError('invalid_child_spec', `duplicate child id '${child.id}'`, { field: 'id', childId: child.id as string });
    }
    ids.add(child.id as string);
  }
  const input: SupervisorInput = { kind: 'static', flags: { strategy, intensity, period, autoShutdown }, children, clock: options.clock ?? monotonicClock };
  return startProcess(supervisorLogic, { input, trapExit: true, ...(options.name === undefined ? {} : { name: options.name }) }).catch(unwrapInitError);
}

/** Start a dynamic (simple_one_for_one) supervisor: one child template, no children yet. */
export async function startDynamicSupervisor<TArgs extends unknown[]>(spec: DynamicSupervisorSpec<TArgs>, options: SupervisorOptions = {}): Promise<Pid> {
  const { intensity, period } = checkIntensity(spec.intensity, spec.period);
  const maxChildren = spec.maxChildren ?? Infinity;
  if (maxChildren !== Infinity && (!Number.isInteger(maxChildren) || maxChildren < 0)) {
    invalidFlags('maxChildren', 'maxChildren must be a non-negative integer');
  }
  const autoShutdown = checkAutoShutdown(spec.autoShutdown);
  const template = resolveChildSpec(spec.child, { idRequired: false, autoShutdown });
  const input: SupervisorInput = { kind: 'dynamic', intensity, period, template, maxChildren, autoShutdown, clock: options.clock ?? monotonicClock };
  return startProcess(supervisorLogic, { input, trapExit: true, ...(options.name === undefined ? {} : { name: options.name }) }).catch(unwrapInitError);
}

const forever = { timeoutMs: Infinity };

/**
 * Add a child. Static supervisor: `startChild(sup, spec)`. Dynamic supervisor:
 * `startChild(sup, ...args)` calls the template's `start(...args)`. Resolves with the Pid,
 * or undefined if the start returned 'ignore'. Rejects with SupervisorError
 * `already_started` (`details.pid`), `already_present`, `invalid_child_spec`,
 * `max_children` or `failed_to_start_child` (`reason` = the start error).
 */
export function startChild(sup: ProcessRef, spec: ChildSpec): Promise<Pid | undefined>;
export function startChild(sup: ProcessRef, ...args: unknown[]): Promise<Pid | undefined>;
export function startChild(sup: ProcessRef, ...args: unknown[]): Promise<Pid | undefined> {
  return call<Pid | undefined, SupervisorCall>(sup, { type: 'start_child', args }, forever);
}

/**
 * Stop a child: by id on a static supervisor (its spec is kept, a temporary one dropped), by
 * Pid on either kind. On a dynamic supervisor a Pid that already exited is ok (OTP's
 * find_child: stopping is idempotent). Rejects with `not_found`, or `simple_one_for_one` for
 * an id on a dynamic supervisor.
 */
export function terminateChild(sup: ProcessRef, child: string | Pid): Promise<void> {
  return call<void, SupervisorCall>(sup, { type: 'terminate_child', child }, forever);
}

/** Start a stopped child again from its kept spec. Rejects with `running`, `restarting`, `not_found`, `simple_one_for_one`, `failed_to_start_child`. */
export function restartChild(sup: ProcessRef, id: string): Promise<Pid | undefined> {
  return call<Pid | undefined, SupervisorCall>(sup, { type: 'restart_child', id }, forever);
}

/** Remove a stopped child's spec. Rejects with `running`, `restarting`, `not_found`, `simple_one_for_one`. */
export function deleteChild(sup: ProcessRef, id: string): Promise<void> {
  return call<void, SupervisorCall>(sup, { type: 'delete_child', id }, forever);
}

/** The children, like supervisor:which_children/1 (static: most recently started first). */
export function whichChildren(sup: ProcessRef): Promise<ChildInfo[]> {
  return call<ChildInfo[], SupervisorCall>(sup, { type: 'which_children' }, forever);
}

/** Counts of the supervisor's children, like supervisor:count_children/1. */
export function countChildren(sup: ProcessRef): Promise<ChildCounts> {
  return call<ChildCounts, SupervisorCall>(sup, { type: 'count_children' }, forever);
}
