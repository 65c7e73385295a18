/**
 * The process shell: one xstate v5 actor plus what OTP gives every process.
 *
 * Contract
 * - `spawn(logic)` starts an actor and returns its Pid. Any xstate logic works (machines,
 *   `fromPromise`, `fromCallback`, ...); `genServer(...)` builds a gen_server-style logic.
 * - A process ends exactly once, with an ExitReason:
 *   - its actor reaches a final state: `normal` (a gen server: the reason it stopped with);
 *   - an exception escapes its actor (snapshot status `error`): `{ crashed: error }`;
 *   - `exit(pid, 'kill')`: `killed`, at once (between messages: a synchronous JS turn
 *     cannot be pre-empted; a machine's invoked children are stopped with it);
 *   - `exit(pid, reason)` for any other reason: graceful if the behaviour handles
 *     termination (a gen server always does; a machine does if it has a transition for
 *     `{ type: TERMINATE, reason }`), which lets it finish in-flight work, run its terminate
 *     hook and end in a final state; the process then exits with `reason`. A behaviour that
 *     does not handle termination exits with `reason` at once.
 * - On exit, in this order: the registered name is released; pending calls reject with an
 *   ExitError for the reason; then (next microtask) linked processes get the exit signal and
 *   monitors fire DOWN. So a DOWN observer or a restarting supervisor can reuse the name.
 * - Links are bidirectional. A process with `trapExit` receives a linked process's exit as
 *   the message `{ type: EXIT, from, reason }`; one without dies with the same reason unless
 *   the reason is `normal`.
 * - Mailbox depth: messages accepted but not yet taken by the behaviour. A machine takes
 *   every event synchronously (xstate runs to completion inside `send`), so its depth is what
 *   its `mailboxDepth(snapshot)` option reports (e.g. events it queues in context while busy);
 *   a gen server reports its own queue.
 */
import { createActor, type AnyActorLogic, type AnyActorRef } from 'xstate';
import { InfoEnvelope } from './envelopes.ts';
import { ExitError, RegistryError } from './otp-errors.ts';
import { formatExitReason, type ExitReason, type ExitSignal } from './exit-reason.ts';
import { Pid, type Message, type ProcessRef } from './pid.ts';
import { claimName, lookupName, releaseName } from './registry.ts';

/** Sent to a behaviour asked to stop gracefully. A machine that handles it should end in a final state. */
export const TERMINATE = 'otp.terminate';
export interface TerminateEvent {
  readonly type: typeof TERMINATE;
  readonly reason: ExitReason;
}

/** A linked process's exit, as received by a process with `trapExit`. */
export const EXIT = 'otp.exit';
export interface ExitMessage {
  readonly type: typeof EXIT;
  readonly from: Pid;
  readonly reason: ExitReason;
}

export interface SpawnOptions<TInput = unknown> {
  /** Register under this name atomically with the spawn; a taken name throws RegistryError and spawns nothing. */
  readonly name?: string;
  /** Passed to the logic as xstate `input` (a gen server's `init` argument). */
  readonly input?: TInput;
  /** Link the new process to this one before it starts (spawn_link from `link`). */
  readonly link?: Pid;
  /** Receive linked exits as `ExitMessage`s instead of dying with them. Default false. */
  readonly trapExit?: boolean;
  /** A machine's own backlog (events it holds in context while busy), for inspection. */
  readonly mailboxDepth?: (snapshot: unknown) => number;
}

/** `running`, or `exiting` once a graceful stop was requested and the behaviour is winding down. */
export type ProcessStatus = 'running' | 'exiting';

export interface ProcessInfo {
  readonly pid: Pid;
  readonly name: string | undefined;
  readonly status: ProcessStatus;
  /** Messages accepted but not yet taken by the behaviour. */
  readonly mailboxDepth: number;
  /** Calls awaiting a reply from this process. */
  readonly pendingCalls: number;
  /** A machine's state value (`snapshot.value`); undefined for other logic. */
  readonly state: unknown;
  readonly links: readonly Pid[];
  readonly monitors: number;
  readonly trapExit: boolean;
}

/** What `call` registers on its target so the target's exit can reject it. */
export interface PendingCall {
  settleExit(reason: ExitReason, target: Pid): void;
}

/** Watches one process's exit (monitors). */
export interface ExitWatcher {
  fire(reason: ExitReason, pid: Pid): void;
}

/** The kinds the shell treats differently; gen servers get enveloped calls and infos. */
export const KIND_MACHINE = 0;
export const KIND_SERVER = 1;
export const KIND_OTHER = 2;

const RUNNING = 0;
const EXITING = 1;
const DEAD = 2;

let nextId = 1;
const live = new Map<number, Process>();
const procOfActor = new WeakMap<AnyActorRef, Process>();

/** The process whose behaviour is running synchronously right now (for `calling_self`). */
export let current: Process | undefined;

/** Marks logic built by `genServer` so the shell envelopes calls/infos for it. */
export const serverLogics = new WeakSet<AnyActorLogic>();

export class Process extends Pid {
  readonly id: number;
  name: string | undefined = undefined;
  actor: AnyActorRef | undefined = undefined;
  state = RUNNING;
  readonly kind: number;
  exitReason: ExitReason | undefined = undefined;
  terminateReason: ExitReason | undefined = undefined;
  trapExit: boolean;
  /** Calls made to it and not answered yet (made on the first call). */
  pending: Set<PendingCall> | undefined = undefined;
  links: Set<Process> | undefined = undefined;
  watchers: Set<ExitWatcher> | undefined = undefined;
  readyWaiters: Array<(error?: unknown) => void> | undefined = undefined;
  ready = true;
  /** The supervisor that started this process, for tree inspection. */
  supervisor: Process | undefined = undefined;
  readonly depthOf: ((snapshot: unknown) => number) | undefined;

  constructor(kind: number, options: SpawnOptions) {
    super();
    this.id = nextId++;
    this.kind = kind;
    this.trapExit = options.trapExit === true;
    this.depthOf = options.mailboxDepth;
  }

  get alive(): boolean {
    return this.state !== DEAD;
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
    const actor = this.actor;
    if (actor === undefined || this.state === DEAD) return;
    const previous = current;
    current = this;
    try {
      actor.send(message as Message);
    } finally {
      current = previous;
    }
  }

  mailboxDepth(): number {
    const actor = this.actor;
    if (actor === undefined) return 0;
    const snapshot = actor.getSnapshot() as { queueDepth?: () => number };
    if (this.kind === KIND_SERVER && typeof snapshot.queueDepth === 'function') return snapshot.queueDepth();
    return this.depthOf === undefined ? 0 : this.depthOf(snapshot);
  }

  /** Ends the process at once with `reason` (kill, crash, finish, or a non-graceful exit). */
  die(reason: ExitReason): void {
    if (this.state === DEAD) return;
    this.state = DEAD;
    this.exitReason = reason;
    live.delete(this.id);
    if (this.name !== undefined) releaseName(this.name, this);
    const actor = this.actor;
    this.actor = undefined;
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
        for (const other of links) if (other.links?.delete(this) === true) exitSignal(other, this, reason);
      }
      if (watchers !== undefined) for (const watcher of watchers) watcher.fire(reason, this);
    });
  }

  markReady(): void {
    this.ready = true;
    const waiters = this.readyWaiters;
    this.readyWaiters = undefined;
    if (waiters !== undefined) for (const waiter of waiters) waiter();
  }
}

export function codeOf(reason: ExitReason): ExitError['code'] {
  if (typeof reason === 'string') return reason === 'noproc' ? 'noproc' : reason;
  return 'shutdown' in reason ? 'shutdown' : 'crashed';
}

/** Resolve a Pid or a registered name to a live process, or undefined. */
export function resolve(ref: ProcessRef): Process | undefined {
  const proc = typeof ref === 'string' ? lookupName(ref) : (ref as unknown as Process);
  return proc !== undefined && proc.state !== DEAD ? proc : undefined;
}

/**
 * Start a process running `logic`. Returns at once; a gen server's (possibly async) `init`
 * runs before any message. Throws RegistryError if `options.name` is taken.
 */
export function spawn<TLogic extends AnyActorLogic>(logic: TLogic, options: SpawnOptions = {}): Pid {
  const kind = serverLogics.has(logic) ? KIND_SERVER : isMachine(logic) ? KIND_MACHINE : KIND_OTHER;
  const proc = new Process(kind, options);
  if (options.name !== undefined) claimName(options.name, proc);
  const actor = createActor(logic as AnyActorLogic, { input: options.input });
  proc.actor = actor;
  procOfActor.set(actor, proc);
  live.set(proc.id, proc);
  actor.subscribe({
    error: (error: unknown) => proc.die({ crashed: error }),
    complete: () => onComplete(proc, actor),
  });
  if (options.link !== undefined) link(proc, options.link);
  const previous = current;
  current = proc;
  try {
    actor.start();
  } finally {
    current = previous;
  }
  return proc;
}

/**
 * Spawn and wait until the behaviour is initialised (a gen server's async `init` done).
 * Rejects with an ExitError (`crashed`, reason = the init error) if it dies first.
 */
export function start<TLogic extends AnyActorLogic>(logic: TLogic, options: SpawnOptions = {}): Promise<Pid> {
  let proc: Process;
  try {
    proc = spawn(logic, options) as Process;
  } catch (error) {
    return Promise.reject(error);
  }
  if (proc.state === DEAD) {
    const reason = proc.exitReason ?? 'noproc';
    return Promise.reject(new ExitError(codeOf(reason), reason, `process ${proc} exited during init: ${formatExitReason(reason)}`));
  }
  if (proc.ready) return Promise.resolve(proc);
  return new Promise((resolvePid, reject) => {
    (proc.readyWaiters ??= []).push((error) => (error === undefined ? resolvePid(proc) : reject(error)));
  });
}

function onComplete(proc: Process, actor: AnyActorRef): void {
  if (proc.state === DEAD) return;
  const snapshot = actor.getSnapshot() as { status: string; output?: unknown };
  if (proc.terminateReason !== undefined) return proc.die(proc.terminateReason);
  if (proc.kind === KIND_SERVER && snapshot.output !== undefined) return proc.die(snapshot.output as ExitReason);
  proc.die('normal');
}

function isMachine(logic: AnyActorLogic): boolean {
  return typeof (logic as { getStateNodeById?: unknown }).getStateNodeById === 'function';
}

function handlesTerminate(proc: Process, event: TerminateEvent): boolean {
  if (proc.kind === KIND_SERVER) return true;
  if (proc.kind !== KIND_MACHINE || proc.actor === undefined) return false;
  const snapshot = proc.actor.getSnapshot() as { can?: (event: TerminateEvent) => boolean };
  return snapshot.can?.(event) === true;
}

/**
 * Send an exit signal. `'kill'` ends the process at once with reason `killed`. Any other
 * reason stops it gracefully if its behaviour handles termination, else at once with that
 * reason. A second graceful request while one is in progress is ignored. Never throws.
 */
export function exit(ref: ProcessRef, signal: ExitSignal): void {
  const proc = resolve(ref);
  if (proc === undefined) return;
  if (signal === 'kill') return proc.die('killed');
  if (proc.state === EXITING) return;
  const event: TerminateEvent = { type: TERMINATE, reason: signal };
  if (!handlesTerminate(proc, event)) return proc.die(signal);
  proc.state = EXITING;
  proc.terminateReason = signal;
  proc.deliver(event);
}

/** Deliver the exit signal of `from` (which ended with `reason`) to a linked process. */
function exitSignal(to: Process, from: Process, reason: ExitReason): void {
  if (to.state === DEAD) return;
  if (to.trapExit) {
    const message: ExitMessage = { type: EXIT, from, reason };
    deliverInfo(to, message);
  } else if (reason !== 'normal') {
    to.die(reason);
  }
}

/** Deliver an out-of-band message (a gen server's `handleInfo`; a machine's plain event). */
export function deliverInfo(to: Process, message: Message): void {
  to.deliver(to.kind === KIND_SERVER ? new InfoEnvelope(message) : message);
}

/**
 * Stop a process and wait for it to end, like gen_server:stop. Resolves when it exits with
 * `reason`; rejects with ExitError `noproc` if it is not alive, with the actual reason if it
 * ended otherwise, or `timeout` (the process keeps stopping) after `timeoutMs`.
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
    (proc.watchers ??= new Set()).add(watcher);
    if (timeoutMs !== Infinity) {
      timer = setTimeout(() => {
        proc.watchers?.delete(watcher);
        fail(new ExitError('timeout', 'timeout', `stop: ${proc} did not exit within ${timeoutMs} ms`));
      }, timeoutMs);
    }
    exit(proc, reason);
  });
}

/**
 * Link two processes (bidirectional, at most one link per pair). If either is dead, the
 * other receives an exit signal with reason `noproc`.
 */
export function link(a: Pid, b: Pid): void {
  const pa = a as unknown as Process;
  const pb = b as unknown as Process;
  if (pa === pb) return;
  if (pa.state === DEAD || pb.state === DEAD) {
    if (pa.state !== DEAD) queueMicrotask(() => exitSignal(pa, pb, 'noproc'));
    if (pb.state !== DEAD) queueMicrotask(() => exitSignal(pb, pa, 'noproc'));
    return;
  }
  (pa.links ??= new Set()).add(pb);
  (pb.links ??= new Set()).add(pa);
}

/** Remove the link between two processes, if any. No exit signal is sent afterwards. */
export function unlink(a: Pid, b: Pid): void {
  (a as unknown as Process).links?.delete(b as unknown as Process);
  (b as unknown as Process).links?.delete(a as unknown as Process);
}

export function isAlive(ref: ProcessRef): boolean {
  return resolve(ref) !== undefined;
}

/** A snapshot of one live process, or undefined if it is not alive. */
export function processInfo(ref: ProcessRef): ProcessInfo | undefined {
  const proc = resolve(ref);
  if (proc === undefined) return undefined;
  const snapshot = proc.actor?.getSnapshot() as { value?: unknown } | undefined;
  return {
    pid: proc,
    name: proc.name,
    status: proc.state === EXITING ? 'exiting' : 'running',
    mailboxDepth: proc.mailboxDepth(),
    pendingCalls: proc.pending?.size ?? 0,
    state: proc.kind === KIND_MACHINE ? snapshot?.value : undefined,
    links: proc.links === undefined ? [] : [...proc.links],
    monitors: proc.watchers?.size ?? 0,
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

export function registerOwnName(proc: Process, name: string): void {
  if (proc.state === DEAD) throw new RegistryError('noproc', `register: ${proc} is not alive`);
  if (proc.name !== undefined) throw new RegistryError('already_named', `register: ${proc} is already registered as '${proc.name}'`, proc);
  claimName(name, proc);
}
