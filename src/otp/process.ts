/**
 * The process shell: one xstate v5 actor plus what OTP gives every process.
 *
 * Contract
 * - `spawn(logic)` starts an actor and returns its Pid. Any xstate logic works (machines,
 *   `fromPromise`, `fromCallback`, ...); `genServer(...)` builds a gen_server-style logic.
 *   Its parent is the process it is linked to at its start (`link`: proc_lib's start_link);
 *   a process started without a link is its own parent (gen's `nolink`), so is everything
 *   top-level code starts (top-level code is no process and cannot be linked). A supervisor
 *   becomes the parent of the children it starts.
 * - A process ends exactly once, with an ExitReason:
 *   - its actor reaches a final state: `normal` (a gen server: the reason it stopped with);
 *   - an exception escapes its actor (snapshot status `error`): `{ crashed: error }`;
 *   - an exit signal it does not trap (see `exit`), or `stop` (see `stop`).
 * - Exit signals (erlang:exit/2, and a linked process's exit): `kill` sent by `exit` ends the
 *   process at once with `killed` (between messages: a synchronous JS turn cannot be
 *   pre-empted; a machine's invoked children are stopped with it). Otherwise, a process that
 *   does not trap exits ignores `normal` and ends at once with any other reason; a process
 *   that traps exits receives `{ type: EXIT, from, reason }`, except that a behaviour takes
 *   its parent's exit signal as a stop (gen_server's and gen_statem's loops): a gen server
 *   runs `terminate` and exits with the reason; a machine that has a transition for
 *   `{ type: TERMINATE, reason }` gets that event and exits with the reason when it reaches a
 *   final state; a machine without one exits at once.
 * - On exit, in this order: the registered name is released; its timers are cancelled;
 *   pending calls reject with an ExitError for the reason; then (next microtask) linked
 *   processes get the exit signal and monitors fire DOWN. So a DOWN observer or a restarting
 *   supervisor can reuse the name.
 * - The current process: the one whose behaviour runs now, inside its synchronous turn; a
 *   gen server's callbacks also run in an AsyncLocalStorage context, so while the promise a
 *   callback returned is pending the server is still the current process after each `await`
 *   (`call` to itself is `calling_self`). The context is switched on while callbacks run and
 *   off at the end of the event-loop turn in which the last one finished.
 * - Hibernation (erlang:hibernate/3): a machine whose state is tagged `HIBERNATE` hibernates at
 *   the end of every turn (its start, a message delivered to it) that leaves it in such a
 *   state: the shell drops its xstate actor and keeps only the state value and context. The
 *   next message (cast, call, info, exit signal, TERMINATE) first restores the actor from them
 *   (no entry action runs again), then is delivered as usual. `processInfo` reads the kept
 *   state without waking the process. A hibernating state must have no invoked or spawned
 *   children and no delayed transitions (`after`): the shell does not hibernate a machine
 *   with children, and delayed events would be lost. A traced process does not hibernate.
 *   The behaviour's initialisation (a machine's `context` function) runs as the process, so
 *   `self()` there is the new process. `spawnHibernated` starts a machine hibernated, like a
 *   gen_server whose `init` returns `{ok, State, hibernate}`: its `init` (run as the process)
 *   gives the state value and context, and no actor exists until the first message, so a
 *   process that mostly rests costs no actor even to start.
 * - Mailbox depth: messages accepted but not yet taken by the behaviour. A machine takes
 *   every event synchronously (xstate runs to completion inside `send`), so its depth is what
 *   its `mailboxDepth(snapshot)` option reports (e.g. events it queues in context while busy);
 *   a gen server reports its own queue.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { createActor, type AnyActorLogic, type AnyActorRef, type AnyStateMachine, type ContextFrom, type StateValue, type StateValueFrom } from 'xstate';
import { InfoEnvelope } from './envelopes.ts';
import { InvalidInputError } from '../errors.ts';
import { ExitError } from './otp-errors.ts';
import { formatExitReason, type ExitReason, type ExitSignal } from './exit-reason.ts';
import { claimName, lookupName, releaseName, type Registrant } from './name-table.ts';
import { Pid, type Message, type ProcessRef } from './pid.ts';
import { fewHas, fewItems, fewSize, fewWith, fewWithout, type Few } from './few.ts';

/** The state tag of a machine that may hibernate there (see the file header). */
export const HIBERNATE = 'otp.hibernate';

/** What a hibernating machine keeps: enough to restore its actor. */
interface Hibernated {
  readonly value: StateValue;
  readonly context: unknown;
}

/** Sent to a behaviour asked to stop gracefully. A machine that handles it should end in a final state. */
export const TERMINATE = 'otp.terminate';
/** The event a machine gets when asked to stop gracefully (`TERMINATE`). */
export interface TerminateEvent {
  /** Always `TERMINATE`. */
  readonly type: typeof TERMINATE;
  /** Why it is asked to stop: it exits with this reason. */
  readonly reason: ExitReason;
}

/** An exit signal, as received by a process that traps exits. */
export const EXIT = 'otp.exit';
/** An exit signal delivered as a message (`EXIT`) to a process that traps exits. */
export interface ExitMessage {
  /** Always `EXIT`. */
  readonly type: typeof EXIT;
  /** The process that sent it (a linked process that exited, or the caller of `exit`); undefined from top-level code. */
  readonly from: Pid | undefined;
  /** The sender's exit reason (or the signal `exit` sent). */
  readonly reason: ExitReason;
}

/** Options of `spawn` (and `start`). */
export interface SpawnOptions<TInput = unknown> {
  /** Register under this name atomically with the spawn; a taken name throws RegistryError and spawns nothing. */
  readonly name?: string;
  /** Passed to the logic as xstate `input` (a gen server's `init` argument). */
  readonly input?: TInput;
  /** Link the new process to this one before it starts, which becomes its parent (start_link from `link`). */
  readonly link?: Pid;
  /** Receive exit signals as `ExitMessage`s instead of dying with them (process_flag(trap_exit)). Default false. */
  readonly trapExit?: boolean;
  /** A machine's own backlog (events it holds in context while busy), for inspection. */
  readonly mailboxDepth?: (snapshot: unknown) => number;
}

/** Options of `start`: `spawn`'s, and how long to wait for `init`. */
export interface StartOptions<TInput = unknown> extends SpawnOptions<TInput> {
  /**
   * Give up on an `init` that has not finished after this many ms: the process is killed
   * and `start` rejects with ExitError `timeout` (proc_lib:start's timeout). Default `Infinity`.
   */
  readonly timeoutMs?: number;
}

/** `running`, or `exiting` once a graceful stop was requested and the behaviour is winding down. */
export type ProcessStatus = 'running' | 'exiting';

/** The shell's own lifecycle: `dead` once the exit reason is set. */
export type ProcessState = ProcessStatus | 'dead';

/** What the shell treats differently: gen servers get enveloped calls and infos; machines can wind down on TERMINATE. */
export type ProcessKind = 'machine' | 'server' | 'other';

/** What `processInfo` reports about a live process. */
export interface ProcessInfo {
  /** The process. */
  readonly pid: Pid;
  /** Its registered name, if any. */
  readonly name: string | undefined;
  /** `running`, or `exiting` while it winds down. */
  readonly status: ProcessStatus;
  /** Messages accepted but not yet taken by the behaviour. */
  readonly mailboxDepth: number;
  /** Calls awaiting a reply from this process. */
  readonly pendingCalls: number;
  /** A machine's state value (`snapshot.value`); undefined for other logic. */
  readonly state: unknown;
  /** The processes it is linked to. */
  readonly links: readonly Pid[];
  /** Monitors watching it. */
  readonly monitors: number;
  /** Whether it receives exit signals as messages. */
  readonly trapExit: boolean;
}

/** What `call` registers on its target so the target's exit can reject it. */
export interface PendingCall {
  settleExit(reason: ExitReason, target: Pid): void;
}

/** Watches one process's exit (monitors). */
export interface ExitWatcher {
  /** Called once, after the process exits, with its exit reason. */
  fire(reason: ExitReason, pid: Pid): void;
}

/** Something a process owns that ends with it (a timer). */
export interface Owned {
  cancel(): void;
}

let nextId = 1;
const live = new Map<number, Process>();
const procOfActor = new WeakMap<AnyActorRef, Process>();

/** The machine (or other non-server logic) whose behaviour is running synchronously right now. */
let current: Process | undefined;

/** One callback of a gen server: its server is the current process while it runs (a promise's: until it settles). */
interface ServerTurn {
  readonly proc: Process;
  live: boolean;
}

/** The gen server callback running, across its awaits. */
const serverContext = new AsyncLocalStorage<ServerTurn>();

/** Callbacks running (or whose promise has not settled); the context is switched off soon after none is. */
let callbacksRunning = 0;
let contextOn = false;
let switchOffQueued = false;

/** Marks logic built by `genServer` so the shell envelopes calls/infos for it. */
export const serverLogics = new WeakSet<AnyActorLogic>();

export class Process extends Pid implements Registrant {
  readonly id: number;
  name: string | undefined = undefined;
  actor: AnyActorRef | undefined = undefined;
  state: ProcessState = 'running';
  readonly kind: ProcessKind;
  exitReason: ExitReason | undefined = undefined;
  terminateReason: ExitReason | undefined = undefined;
  trapExit: boolean;
  /** Calls made to it and not answered yet (made on the first call). */
  pending: Set<PendingCall> | undefined = undefined;
  /** Usually one each (its supervisor; the router's monitor): see few.ts. */
  links: Few<Process> = undefined;
  watchers: Few<ExitWatcher> = undefined;
  owned: Set<Owned> | undefined = undefined;
  readyWaiters: Array<(error?: unknown) => void> | undefined = undefined;
  ready = true;
  /** The process it was linked to at its start (its supervisor, for a supervised child); undefined: its own parent. Its exit signal stops a behaviour. */
  parent: Process | undefined;
  readonly depthOf: ((snapshot: unknown) => number) | undefined;
  /** The behaviour, kept to restore a hibernating machine's actor. */
  readonly logic: AnyActorLogic;
  /** Set while the machine hibernates (no actor). */
  hibernated: Hibernated | undefined = undefined;
  /** Turns of this process running now (nested when it sends to itself). */
  turns = 0;

  constructor(kind: ProcessKind, logic: AnyActorLogic, options: SpawnOptions) {
    super();
    this.id = nextId++;
    this.kind = kind;
    this.logic = logic;
    // proc_lib: the parent of a process started linked is the one it links to; started without a link, it is its own.
    this.parent = options.link instanceof Process ? options.link : undefined;
    this.trapExit = options.trapExit === true;
    this.depthOf = options.mailboxDepth;
  }

  get alive(): boolean {
    return this.state !== 'dead';
  }

  toString(): string {
    return `<0.${this.id}.0>`;
  }

  toJSON(): string {
    return this.toString();
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return this.name === undefined ? `Pid${this.toString()}` : `Pid${this.toString()}(${this.name})`;
  }

  /** Hand one message to the behaviour. The hot path of cast and call. */
  deliver(message: object): void {
    if (this.state === 'dead') return;
    const actor = this.actor ?? this.wake();
    if (actor === undefined) return;
    const previous = current;
    current = this;
    this.turns++;
    try {
      actor.send(message as Message);
    } finally {
      current = previous;
      if (--this.turns === 0 && this.kind === 'machine') this.hibernateIfResting();
    }
  }

  /** The behaviour's snapshot (a hibernating machine's kept state), for inspection. */
  snapshot(): unknown {
    return this.actor?.getSnapshot() ?? this.hibernated;
  }

  mailboxDepth(): number {
    const snapshot = this.snapshot() as { queueDepth?: () => number } | undefined;
    if (snapshot === undefined) return 0;
    if (this.kind === 'server' && typeof snapshot.queueDepth === 'function') return snapshot.queueDepth();
    return this.depthOf === undefined ? 0 : this.depthOf(snapshot);
  }

  /** At the end of a turn: drop the actor of a machine resting in a HIBERNATE state. */
  hibernateIfResting(): void {
    const actor = this.actor;
    if (actor === undefined || this.state === 'dead' || traced.has(this)) return;
    const snapshot = actor.getSnapshot() as { status: string; value: StateValue; context: unknown; children: object; hasTag(tag: string): boolean };
    if (snapshot.status !== 'active' || !snapshot.hasTag(HIBERNATE)) return;
    for (const _child in snapshot.children) return;
    this.hibernated = { value: snapshot.value, context: snapshot.context };
    this.actor = undefined;
    actor.stop(); // its observers see `complete`, but they ignore an actor that is no longer the process's
  }

  /** Restore a hibernating machine's actor (before a message is delivered to it). */
  wake(): AnyActorRef | undefined {
    const kept = this.hibernated;
    if (kept === undefined) return undefined;
    this.hibernated = undefined;
    const snapshot = (this.logic as AnyStateMachine).resolveState({ value: kept.value, context: kept.context as never });
    const actor = createActor(this.logic, { snapshot });
    attach(this, actor);
    const previous = current;
    current = this;
    try {
      actor.start();
    } finally {
      current = previous;
    }
    return actor;
  }

  /** Ends the process at once with `reason` (kill, crash, finish, or an untrapped exit signal). */
  die(reason: ExitReason): void {
    if (this.state === 'dead') return;
    this.state = 'dead';
    this.exitReason = reason;
    live.delete(this.id);
    if (this.name !== undefined) releaseName(this.name, this);
    const owned = this.owned;
    this.owned = undefined;
    if (owned !== undefined) for (const thing of owned) thing.cancel();
    const actor = this.actor;
    this.actor = undefined;
    this.hibernated = undefined;
    if (actor !== undefined && actor.getSnapshot().status === 'active') (actor as { stop?: () => void }).stop?.();
    if (this.readyWaiters !== undefined) {
      for (const waiter of this.readyWaiters) waiter(new ExitError(codeOf(reason), reason, `process ${this} exited: ${formatExitReason(reason)}`));
      this.readyWaiters = undefined;
    }
    const pending = this.pending;
    this.pending = undefined;
    if (pending !== undefined) for (const call of pending) call.settleExit(reason, this);
    const links = this.links;
    const watchers = this.watchers;
    this.links = undefined;
    this.watchers = undefined;
    if (links === undefined && watchers === undefined) return;
    queueMicrotask(() => {
      if (links !== undefined) {
        // A process that unlinked in the meantime (a supervisor shutting this child down) gets no signal.
        for (const other of fewItems(links)) {
          if (!fewHas(other.links, this)) continue;
          other.links = fewWithout(other.links, this);
          exitSignal(this, other, reason);
        }
      }
      if (watchers !== undefined) for (const watcher of fewItems(watchers)) watcher.fire(reason, this);
    });
  }

  markReady(): void {
    this.ready = true;
    const waiters = this.readyWaiters;
    this.readyWaiters = undefined;
    if (waiters !== undefined) for (const waiter of waiters) waiter();
  }
}

/** The process running now (any behaviour inside its synchronous turn, or a gen server across the awaits of a callback), if any. */
export function self(): Process | undefined {
  if (current !== undefined || !contextOn) return current;
  const turn = serverContext.getStore();
  return turn?.live === true ? turn.proc : undefined;
}

/**
 * The pid of the process running now (erlang:self/0): inside a machine's synchronous turn, or
 * across the awaits of a gen server callback. `undefined` outside any process.
 */
export function selfPid(): Pid | undefined {
  return self();
}

/** True if `target` is the process running now (gen:call's `calling_self` check). */
export function isSelf(target: Process): boolean {
  return target === self();
}

/**
 * Run a gen server callback inside the server's context, so the server stays the current
 * process after each `await` of a promise it returns, whatever kind of function it is (an
 * async function or method, or a plain one handing the work to one). Work it leaves running
 * after it returned (or after its promise settled) is not the process.
 */
export function runCallback<R>(proc: Process, callback: () => R): R {
  const turn: ServerTurn = { proc, live: true };
  callbacksRunning++;
  contextOn = true;
  let result: R;
  try {
    result = serverContext.run(turn, callback);
  } catch (error) {
    callbackDone(turn);
    throw error;
  }
  const thenable = result as { then?: unknown };
  if (typeof thenable === 'object' && thenable !== null && typeof thenable.then === 'function') {
    (result as PromiseLike<unknown>).then(
      () => callbackDone(turn),
      () => callbackDone(turn),
    );
  } else {
    callbackDone(turn);
  }
  return result;
}

function callbackDone(turn: ServerTurn): void {
  turn.live = false;
  if (--callbacksRunning > 0 || switchOffQueued) return;
  // Off once this event-loop turn is over, not after each callback: on Node 20 and 22 switching
  // an AsyncLocalStorage on and off costs ~2 µs, and while it is on it hooks every promise of
  // the process, which the append path (machines) should not pay between messages to servers.
  switchOffQueued = true;
  setImmediate(switchOff);
}

function switchOff(): void {
  switchOffQueued = false;
  if (callbacksRunning > 0) return;
  contextOn = false;
  serverContext.disable();
}

export function codeOf(reason: ExitReason): ExitError['code'] {
  if (typeof reason === 'string') return reason === 'noproc' ? 'noproc' : reason;
  return 'shutdown' in reason ? 'shutdown' : 'crashed';
}

/** Resolve a Pid or a registered name to a live process, or undefined. */
export function resolve(ref: ProcessRef): Process | undefined {
  const proc = typeof ref === 'string' ? lookupName(ref) : ref;
  return proc instanceof Process && proc.state !== 'dead' ? proc : undefined;
}

/**
 * Start a process running `logic`. Returns at once; a gen server's (possibly async) `init`
 * runs before any message. Throws RegistryError if `options.name` is taken.
 */
export function spawn<TLogic extends AnyActorLogic>(logic: TLogic, options: SpawnOptions = {}): Pid {
  return spawnProcess(logic, options);
}

function spawnProcess(logic: AnyActorLogic, options: SpawnOptions): Process {
  const kind: ProcessKind = serverLogics.has(logic) ? 'server' : isMachine(logic) ? 'machine' : 'other';
  const proc = new Process(kind, logic, options);
  if (options.name !== undefined) claimName(options.name, proc);
  const previous = current;
  current = proc;
  proc.turns++;
  try {
    // xstate runs a machine's `context` function here: it runs as the new process.
    const actor = createActor(logic, { input: options.input });
    live.set(proc.id, proc);
    attach(proc, actor);
    if (options.link !== undefined) link(proc, options.link);
    actor.start();
  } finally {
    current = previous;
    if (--proc.turns === 0 && kind === 'machine') proc.hibernateIfResting();
  }
  return proc;
}

/**
 * Start a process running `machine` hibernated (see the file header): `init` runs as the new
 * process and returns what its actor is restored from at the first message, a state tagged
 * `HIBERNATE` with no entry action to run (none runs) and its context. An `init` that throws
 * ends the process with `{ crashed: error }`, like a machine whose `context` function throws.
 */
export function spawnHibernated<TMachine extends AnyStateMachine>(
  machine: TMachine,
  init: () => { readonly value: StateValueFrom<TMachine>; readonly context: ContextFrom<TMachine> },
  options: Omit<SpawnOptions, 'input'> = {},
): Pid {
  const proc = new Process('machine', machine, options);
  if (options.name !== undefined) claimName(options.name, proc);
  live.set(proc.id, proc);
  if (options.link !== undefined) link(proc, options.link);
  const previous = current;
  current = proc;
  try {
    const { value, context } = init();
    proc.hibernated = { value, context };
  } catch (error) {
    proc.die({ crashed: error });
  } finally {
    current = previous;
  }
  return proc;
}

/** Make `actor` the behaviour of `proc`: its end is the process's end. */
function attach(proc: Process, actor: AnyActorRef): void {
  proc.actor = actor;
  procOfActor.set(actor, proc);
  actor.subscribe({
    error: (error: unknown) => {
      if (proc.actor === actor) proc.die({ crashed: error });
    },
    complete: () => {
      if (proc.actor === actor) onComplete(proc, actor);
    },
  });
}

/** Processes being traced: they stay awake (trace.ts follows their actor's inspection events). */
const traced = new WeakSet<Process>();

/** Wake `proc` if it hibernates and keep it awake until `release` is called. */
export function keepAwake(proc: Process): AnyActorRef | undefined {
  traced.add(proc);
  return proc.actor ?? proc.wake();
}

export function releaseAwake(proc: Process): void {
  traced.delete(proc);
  if (proc.turns === 0 && proc.kind === 'machine') proc.hibernateIfResting();
}

/**
 * Spawn and wait until the behaviour is initialised (a gen server's async `init` done).
 * Rejects with an ExitError (`crashed`, reason = the init error) if it dies first, or with
 * `timeout` after `timeoutMs` (the process is killed first).
 */
export function start<TLogic extends AnyActorLogic>(logic: TLogic, options: StartOptions = {}): Promise<Pid> {
  return startProcess(logic, options);
}

/** `start`, resolving with the process itself (for the supervisor). */
export function startProcess(logic: AnyActorLogic, options: StartOptions = {}): Promise<Process> {
  const timeoutMs = options.timeoutMs ?? Infinity;
  if (!(timeoutMs > 0)) {
    return Promise.reject(new InvalidInputError('invalid_option', `start: timeoutMs must be a positive number or Infinity, got ${timeoutMs}`));
  }
  let proc: Process;
  try {
    proc = spawnProcess(logic, options);
  } catch (error) {
    return Promise.reject(error);
  }
  if (proc.state === 'dead') {
    const reason = proc.exitReason ?? 'noproc';
    return Promise.reject(new ExitError(codeOf(reason), reason, `process ${proc} exited during init: ${formatExitReason(reason)}`));
  }
  if (proc.ready) return Promise.resolve(proc);
  return new Promise((resolvePid, reject) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    (proc.readyWaiters ??= []).push((error) => {
      if (timer !== undefined) clearTimeout(timer);
      if (error === undefined) resolvePid(proc);
      else reject(error);
    });
    if (timeoutMs === Infinity) return;
    timer = setTimeout(() => {
      // proc_lib:start: kill the starting process, then report the timeout (not `killed`).
      proc.readyWaiters = undefined;
      proc.die('killed');
      reject(new ExitError('timeout', 'timeout', `start: ${proc} did not finish init within ${timeoutMs} ms`));
    }, timeoutMs);
  });
}

function onComplete(proc: Process, actor: AnyActorRef): void {
  if (proc.state === 'dead') return;
  const snapshot = actor.getSnapshot() as { status: string; output?: unknown };
  if (proc.terminateReason !== undefined) return proc.die(proc.terminateReason);
  if (proc.kind === 'server' && snapshot.output !== undefined) return proc.die(snapshot.output as ExitReason);
  proc.die('normal');
}

function isMachine(logic: AnyActorLogic): boolean {
  return typeof (logic as { getStateNodeById?: unknown }).getStateNodeById === 'function';
}

function handlesTerminate(proc: Process, event: TerminateEvent): boolean {
  if (proc.kind === 'server') return true;
  if (proc.kind !== 'machine') return false;
  const actor = proc.actor ?? proc.wake();
  if (actor === undefined) return false;
  const snapshot = actor.getSnapshot() as { can?: (event: TerminateEvent) => boolean };
  return snapshot.can?.(event) === true;
}

/**
 * Ask a behaviour to wind down: a gen server runs `terminate`, a machine with a TERMINATE
 * transition takes it; then the process exits with `reason`. A behaviour that cannot wind
 * down exits at once. A second request while one is in progress is ignored.
 */
function windDown(proc: Process, reason: ExitReason): void {
  if (proc.state !== 'running') return;
  const event: TerminateEvent = { type: TERMINATE, reason };
  if (!handlesTerminate(proc, event)) return proc.die(reason);
  proc.state = 'exiting';
  proc.terminateReason = reason;
  proc.deliver(event);
}

/**
 * Send an exit signal (erlang:exit/2) from the current process (undefined from top-level
 * code). `'kill'` ends the target at once with `killed`. A target that does not trap exits
 * ignores `normal` (unless it is the sender itself) and ends at once with any other reason;
 * a trapping target receives an `ExitMessage`, or stops if the sender is its parent (itself,
 * for a process started without a link; see the file header). Never throws; a dead or
 * unknown target is ignored.
 */
export function exit(ref: ProcessRef, signal: ExitSignal): void {
  const proc = resolve(ref);
  if (proc === undefined) return;
  const from = self();
  if (signal === 'kill') return proc.die('killed');
  if (signal === 'normal' && from === proc && !proc.trapExit) return proc.die('normal');
  exitSignal(from, proc, signal);
}

/** Deliver an exit signal from `from` (a process, or top-level code) to `to`. */
export function exitSignal(from: Process | undefined, to: Process, reason: ExitReason): void {
  if (to.state === 'dead') return;
  if (!to.trapExit) {
    if (reason !== 'normal') to.die(reason);
    return;
  }
  // A process without a parent is its own (gen's `nolink`): only it stops itself this way.
  if (from === (to.parent ?? to) && to.kind !== 'other') return windDown(to, reason);
  const message: ExitMessage = { type: EXIT, from, reason };
  deliverInfo(to, message);
}

/** Deliver an out-of-band message (a gen server's `handleInfo`; a machine's plain event). */
export function deliverInfo(to: Process, message: Message): void {
  to.deliver(to.kind === 'server' ? new InfoEnvelope(message) : message);
}

/**
 * Stop a process and wait for it to end, like gen_server:stop: the behaviour winds down
 * (a gen server runs `terminate` whether or not it traps exits) and exits with `reason`.
 * Resolves when it exits with `reason`; rejects with ExitError `noproc` if it is not alive,
 * with the actual reason if it ended otherwise, or `timeout` (the process keeps stopping)
 * after `timeoutMs`.
 */
export function stop(ref: ProcessRef, reason: ExitSignal = 'normal', timeoutMs = Infinity): Promise<void> {
  const proc = resolve(ref);
  if (proc === undefined) return Promise.reject(new ExitError('noproc', 'noproc', `stop: no process ${String(ref)}`));
  return new Promise((done, fail) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const watcher: ExitWatcher = {
      fire(actual) {
        if (timer !== undefined) clearTimeout(timer);
        const expected: ExitReason = reason === 'kill' ? 'killed' : reason;
        if (actual === expected) done();
        else fail(new ExitError(codeOf(actual), actual, `stop: ${proc} exited with ${formatExitReason(actual)}`));
      },
    };
    proc.watchers = fewWith(proc.watchers, watcher);
    if (timeoutMs !== Infinity) {
      timer = setTimeout(() => {
        proc.watchers = fewWithout(proc.watchers, watcher);
        fail(new ExitError('timeout', 'timeout', `stop: ${proc} did not exit within ${timeoutMs} ms`));
      }, timeoutMs);
    }
    if (reason === 'kill') proc.die('killed');
    else windDown(proc, reason);
  });
}

/**
 * Link two processes (bidirectional, at most one link per pair). If either is dead, the
 * other receives an exit signal with reason `noproc`.
 */
export function link(a: Pid, b: Pid): void {
  if (!(a instanceof Process) || !(b instanceof Process) || a === b) return;
  if (a.state === 'dead' || b.state === 'dead') {
    if (a.state !== 'dead') queueMicrotask(() => exitSignal(b, a, 'noproc'));
    if (b.state !== 'dead') queueMicrotask(() => exitSignal(a, b, 'noproc'));
    return;
  }
  a.links = fewWith(a.links, b);
  b.links = fewWith(b.links, a);
}

/** Remove the link between two processes, if any. No exit signal is sent afterwards. */
export function unlink(a: Pid, b: Pid): void {
  if (!(a instanceof Process) || !(b instanceof Process)) return;
  a.links = fewWithout(a.links, b);
  b.links = fewWithout(b.links, a);
}

/** True while `ref` (a Pid, or a registered name) names a live process. */
export function isAlive(ref: ProcessRef): boolean {
  return resolve(ref) !== undefined;
}

/** A snapshot of one live process, or undefined if it is not alive. */
export function processInfo(ref: ProcessRef): ProcessInfo | undefined {
  const proc = resolve(ref);
  if (proc === undefined) return undefined;
  const snapshot = proc.snapshot() as { value?: unknown } | undefined;
  return {
    pid: proc,
    name: proc.name,
    status: proc.state === 'exiting' ? 'exiting' : 'running',
    mailboxDepth: proc.mailboxDepth(),
    pendingCalls: proc.pending?.size ?? 0,
    state: proc.kind === 'machine' ? snapshot?.value : undefined,
    links: fewItems(proc.links),
    monitors: fewSize(proc.watchers),
    trapExit: proc.trapExit,
  };
}

/** All live processes, oldest first. */
export function processes(): Pid[] {
  return [...live.values()];
}

/**
 * The Pid of the process running an xstate actor ref, e.g. `pidOf(self)` inside a machine
 * action. Undefined for actors not spawned through the shell (e.g. a machine's invoked children).
 */
export function pidOf(actor: AnyActorRef): Pid | undefined {
  return procOfActor.get(actor);
}

/** The shell process behind an actor ref (for gen-server.ts). */
export function processOfActor(actor: AnyActorRef): Process | undefined {
  return procOfActor.get(actor);
}
