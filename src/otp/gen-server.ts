/**
 * genServer: a gen_server-style behaviour compiled to xstate actor logic, for workers that
 * need no explicit states.
 *
 * Contract (gen_server's, in TypeScript)
 * - `init(input, self)` returns the state (or a promise of it); no message is handled before
 *   it resolves. A throw or rejection crashes the process (`start` rejects with it).
 * - Messages are handled one at a time, in arrival order. A handler may be async: the next
 *   message waits until its promise settles. State is an object the handlers mutate.
 * - `handleCall(request, from, state)` returns the reply (or a promise of it), or `noReply`
 *   to answer later with `from.reply(value)` / `from.fail(error)`.
 * - `handleCast(message, state)` for `cast`; `handleInfo(message, state)` for `send`, timers,
 *   and, with `trapExit`, exit signals (`ExitMessage`) from anyone but its parent. Unhandled
 *   infos are dropped; a call or cast without its handler crashes the process, like a
 *   missing clause.
 * - `self.continue(request)` (OTP's `{continue, C}`): when the current callback (init
 *   included) finishes, `handleContinue(request, state)` runs before any other message.
 * - `self.timeout(ms)` (OTP's `{noreply, State, Timeout}`): if no message arrives within `ms`
 *   after the current callback finishes, `handleInfo({ type: 'timeout' })` runs. Any message
 *   cancels it; a callback that does not call it sets no timeout.
 * - `self.stop(reason = 'normal')` stops the server once the current handler finishes
 *   (OTP's `{stop, Reason, ...}`); `terminate(reason, state)` then runs and the process exits
 *   with `reason`. `stop(pid)` and, in a server that traps exits, its parent's exit signal
 *   queue behind the messages already received, then run `terminate` the same way. An exit
 *   signal the server does not trap (it traps none by default) ends it without `terminate`,
 *   as does `exit(pid, 'kill')`.
 * - Every callback runs in the server's context (an async function, an async method of a
 *   class instance, or a plain function returning a promise): a `call` to the server itself
 *   after an `await`, before that promise settles, is rejected with `calling_self` at once.
 * - An exception (or rejection) in any callback crashes the process with that error; like
 *   gen_server, `terminate({ crashed: error }, state)` runs first (not awaited). A crash in
 *   `init` or in `terminate` itself skips it.
 */
import type { ActorLogic, AnyActorRef, EventObject, Snapshot } from 'xstate';
import { InvalidInputError } from '../errors.ts';
import { CallEnvelope, InfoEnvelope } from './envelopes.ts';
import type { ExitReason } from './exit-reason.ts';
import type { From } from './from.ts';
import type { Message, Pid } from './pid.ts';
import { processOfActor, runCallback, type Process, serverLogics, TERMINATE, type ExitMessage, type TerminateEvent } from './process.ts';
import { deliverAfter, type TimerRef } from './timers.ts';

/** Return from `handleCall` to reply later through `from`. */
export const noReply: unique symbol = Symbol('noReply');

/** A gen server's handle on itself, given to `init`. */
export interface ServerSelf {
  /** Its own Pid. */
  readonly pid: Pid;
  /** Stop after the current handler (or at once, if idle); `terminate` runs first. */
  stop(reason?: ExitReason): void;
  /** Run `handleContinue(request)` when the current callback finishes, before any message. */
  continue(request: unknown): void;
  /** A `{ type: 'timeout' }` info if no message comes within `ms` after the current callback. */
  timeout(ms: number): void;
}

/** The info a gen server gets when its `self.timeout(ms)` passed without a message. */
export interface TimeoutInfo {
  /** Always `'timeout'`. */
  readonly type: 'timeout';
}

/**
 * The callbacks of a gen server (see above for when each runs). `S` is its state, `TInput` its
 * `init` argument, `TCall`/`TCast`/`TInfo` the messages it takes.
 */
export interface GenServerCallbacks<
  S,
  TInput = void,
  TCall extends Message = Message,
  TCast extends Message = Message,
  TInfo extends Message = Message,
> {
  /**
   * The initial state, from the start's `input`; no message is handled before it resolves. A throw
   * crashes the process and the start rejects.
   */
  init(input: TInput, self: ServerSelf): S | Promise<S>;
  /**
   * A `call`: returns (or resolves with) the reply, or `noReply` to answer later through `from`.
   */
  handleCall?(request: TCall, from: From, state: S): unknown;
  /** A `cast`: updates `state`. */
  handleCast?(message: TCast, state: S): void | Promise<void>;
  /**
   * Anything else: `send`, timers, trapped exit signals, `self.timeout`. Unhandled infos are
   * dropped.
   */
  handleInfo?(message: TInfo | ExitMessage | TimeoutInfo, state: S): void | Promise<void>;
  /** Runs after the callback that called `self.continue(request)`, before any message. */
  handleContinue?(request: unknown, state: S): void | Promise<void>;
  /**
   * Runs before the server exits on `self.stop`, `stop(pid)`, a trapped parent exit, or a crash
   * (not awaited then).
   */
  terminate?(reason: ExitReason, state: S): void | Promise<void>;
}

/** The xstate snapshot of a gen server (internal; inspect with `processInfo`). */
export class ServerSnapshot {
  status: 'active' | 'done' | 'error' | 'stopped' = 'active';
  output: ExitReason | undefined = undefined;
  error: unknown = undefined;
  state: unknown = undefined;
  initialised = false;
  busy = false;
  inHandler = false;
  stopReason: ExitReason | undefined = undefined;
  /** A `self.continue` not yet run. */
  hasContinue = false;
  continueRequest: unknown = undefined;
  /** A `self.timeout` of the callback running now, armed once it finishes with nothing queued. */
  nextTimeoutMs: number | undefined = undefined;
  /** The armed timeout; stale ticks (of a cancelled one) are ignored. */
  timeoutTick: TimeoutTick | undefined = undefined;
  timeoutTimer: TimerRef | undefined = undefined;
  proc: Process | undefined = undefined;
  private queue: (object | undefined)[] = [];
  private head = 0;

  constructor(readonly input: unknown) {}

  queueDepth(): number {
    return this.queue.length - this.head;
  }

  enqueue(event: object): void {
    this.queue.push(event);
  }

  dequeue(): object | undefined {
    if (this.head === this.queue.length) return undefined;
    const event = this.queue[this.head];
    this.queue[this.head++] = undefined;
    if (this.head === this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
    }
    return event;
  }
}

/** xstate logic built by `genServer`; pass it to `spawn`/`start`. */
export type GenServerLogic<TInput = unknown> = ActorLogic<Snapshot<unknown>, EventObject, TInput>;

/** Continue after an async callback, inside the actor's turn. */
class Resume {
  readonly type = 'otp.resume';
  constructor(readonly run: (snapshot: ServerSnapshot) => void) {}
}

/** An async callback rejected: crash the actor from inside its turn. */
class Crash {
  readonly type = 'otp.crash';
  constructor(readonly error: unknown) {}
}

/** Wakes an idle server so a `self.stop()` from outside a handler (or an init's continue) takes effect. */
const POKE = { type: 'otp.poke' };

/** The server's own timeout passed. */
class TimeoutTick {
  readonly type = 'otp.timeout_tick';
}

const TIMEOUT_INFO: TimeoutInfo = { type: 'timeout' };

function cancelTimeout(snapshot: ServerSnapshot): void {
  snapshot.timeoutTimer?.cancel();
  snapshot.timeoutTimer = undefined;
  snapshot.timeoutTick = undefined;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

/**
 * Compiles gen server callbacks into logic for `start`, `spawn` or a child spec.
 *
 * @example
 * ```ts
 * import { call, cast, genServer, start } from 'mnemo/otp';
 *
 * const counter = genServer<{ n: number }, number, { type: 'get' }, { type: 'add'; by: number }>({
 *   init: (first) => ({ n: first }),
 *   handleCall: (_request, _from, state) => state.n,
 *   handleCast: (message, state) => {
 *     state.n += message.by;
 *   },
 * });
 * const pid = await start(counter, { input: 1, name: 'counter' });
 * cast(pid, { type: 'add', by: 2 });
 * console.log(await call(pid, { type: 'get' })); // 3
 * ```
 */
export function genServer<S, TInput = void, TCall extends Message = Message, TCast extends Message = Message, TInfo extends Message = Message>(
  callbacks: GenServerCallbacks<S, TInput, TCall, TCast, TInfo>,
): GenServerLogic<TInput> {
  /** Call a callback (as a method of `callbacks`) in the server's context (process.ts's `runCallback`). */
  const invoke = <A extends unknown[], R>(snapshot: ServerSnapshot, fn: (...args: A) => R, ...args: A): R => {
    const proc = snapshot.proc;
    if (proc === undefined) return Reflect.apply(fn, callbacks, args);
    return runCallback(proc, () => Reflect.apply(fn, callbacks, args));
  };

  const after = (snapshot: ServerSnapshot, promise: PromiseLike<unknown>, then: (snapshot: ServerSnapshot, value: unknown) => void): void => {
    snapshot.busy = true;
    const proc = snapshot.proc;
    promise.then(
      (value) => proc?.deliver(new Resume((s) => then(s, value))),
      (error: unknown) => proc?.deliver(new Crash(error)),
    );
  };

  const finish = (snapshot: ServerSnapshot, reason: ExitReason): void => {
    snapshot.status = 'done';
    snapshot.output = reason;
  };

  const terminate = (snapshot: ServerSnapshot, reason: ExitReason): void => {
    snapshot.stopReason = reason;
    const result = callbacks.terminate === undefined ? undefined : invoke(snapshot, callbacks.terminate, reason, snapshot.state as S);
    if (isThenable(result)) after(snapshot, result, (s) => finish(s, reason));
    else finish(snapshot, reason);
  };

  const handle = (snapshot: ServerSnapshot, event: object): void => {
    const state = snapshot.state as S;
    if (event instanceof CallEnvelope) {
      if (callbacks.handleCall === undefined) throw new Error(`gen server got call '${event.type}' but has no handleCall`);
      const from = event.from;
      const result = invoke(snapshot, callbacks.handleCall, event.request as TCall, from, state);
      if (isThenable(result)) after(snapshot, result, (_s, value) => value !== noReply && from.reply(value));
      else if (result !== noReply) from.reply(result);
    } else if (event instanceof InfoEnvelope) {
      const result = callbacks.handleInfo === undefined ? undefined : invoke(snapshot, callbacks.handleInfo, event.message as TInfo, state);
      if (isThenable(result)) after(snapshot, result, () => {});
    } else if (event instanceof TimeoutTick) {
      if (event !== snapshot.timeoutTick) return;
      snapshot.timeoutTick = undefined;
      snapshot.timeoutTimer = undefined;
      const result = callbacks.handleInfo === undefined ? undefined : invoke(snapshot, callbacks.handleInfo, TIMEOUT_INFO, state);
      if (isThenable(result)) after(snapshot, result, () => {});
    } else if ((event as Message).type === TERMINATE) {
      terminate(snapshot, (event as TerminateEvent).reason);
    } else if (event !== POKE) {
      if (callbacks.handleCast === undefined) throw new Error(`gen server got cast '${(event as Message).type}' but has no handleCast`);
      const result = invoke(snapshot, callbacks.handleCast, event as TCast, state);
      if (isThenable(result)) after(snapshot, result, () => {});
    }
  };

  /** A callback threw: like gen_server, run `terminate` (best effort), then crash the actor. */
  const crash = (snapshot: ServerSnapshot, error: unknown): never => {
    if (snapshot.initialised && snapshot.stopReason === undefined) {
      snapshot.stopReason = { crashed: error };
      try {
        const result = callbacks.terminate === undefined ? undefined : invoke(snapshot, callbacks.terminate, { crashed: error }, snapshot.state as S);
        if (isThenable(result)) result.then(undefined, () => {});
      } catch {
        // the crash reason stays the original error
      }
    }
    throw error;
  };

  /** Handle queued messages until one goes async or the server stops. */
  const drain = (snapshot: ServerSnapshot): void => {
    while (!snapshot.busy && snapshot.status === 'active') {
      if (snapshot.stopReason !== undefined) return terminate(snapshot, snapshot.stopReason);
      if (snapshot.hasContinue) {
        const request = snapshot.continueRequest;
        snapshot.hasContinue = false;
        snapshot.continueRequest = undefined;
        if (callbacks.handleContinue === undefined) throw new Error('gen server asked to continue but has no handleContinue');
        const result = invoke(snapshot, callbacks.handleContinue, request, snapshot.state as S);
        if (isThenable(result)) after(snapshot, result, () => {});
        continue;
      }
      const next = snapshot.dequeue();
      if (next === undefined) {
        const ms = snapshot.nextTimeoutMs;
        if (ms !== undefined && snapshot.proc !== undefined) {
          snapshot.nextTimeoutMs = undefined;
          const tick = new TimeoutTick();
          snapshot.timeoutTick = tick;
          snapshot.timeoutTimer = deliverAfter(snapshot.proc, tick, ms);
        }
        return;
      }
      // A message came before the timeout was armed: the timeout is void.
      if (next !== POKE) snapshot.nextTimeoutMs = undefined;
      handle(snapshot, next);
    }
  };

  const logic = {
    getInitialSnapshot: (_scope: unknown, input: unknown) => new ServerSnapshot(input),

    start: (snapshot: ServerSnapshot, scope: { self: AnyActorRef }) => {
      const proc = processOfActor(scope.self);
      snapshot.proc = proc;
      const self: ServerSelf = {
        pid: proc as Pid,
        stop: (reason = 'normal') => {
          if (snapshot.status !== 'active' || snapshot.stopReason !== undefined) return;
          snapshot.stopReason = reason;
          if (!snapshot.busy && !snapshot.inHandler) proc?.deliver(POKE);
        },
        continue: (request) => {
          snapshot.hasContinue = true;
          snapshot.continueRequest = request;
        },
        timeout: (ms) => {
          if (!(typeof ms === 'number' && ms >= 0)) throw new InvalidInputError('invalid_option', `gen server timeout: ms must be a non-negative number, got ${ms}`);
          snapshot.nextTimeoutMs = ms === Infinity ? undefined : ms;
        },
      };
      snapshot.inHandler = true;
      const state = invoke(snapshot, callbacks.init, snapshot.input as TInput, self);
      snapshot.inHandler = false;
      if (isThenable(state)) {
        if (proc !== undefined) proc.ready = false;
        after(snapshot, state, (s, value) => {
          s.state = value;
          s.initialised = true;
          proc?.markReady();
        });
      } else {
        snapshot.state = state;
        snapshot.initialised = true;
        // init's continue or timeout: run from the server's first turn (messages sent meanwhile wait behind the continue).
        if (snapshot.hasContinue || snapshot.nextTimeoutMs !== undefined) queueMicrotask(() => proc?.deliver(POKE));
      }
    },

    transition: (snapshot: ServerSnapshot, event: EventObject) => {
      if (event.type === 'xstate.stop') {
        snapshot.status = 'stopped';
        return snapshot;
      }
      if (event instanceof Crash) return crash(snapshot, event.error);
      const resume = event instanceof Resume;
      // Any message cancels an armed timeout (gen_server's receive ... after Timeout).
      if (snapshot.timeoutTick !== undefined && !resume && event !== POKE && !(event instanceof TimeoutTick)) cancelTimeout(snapshot);
      if (snapshot.busy && !resume) {
        snapshot.enqueue(event);
        return snapshot;
      }
      snapshot.inHandler = true;
      try {
        if (resume) {
          snapshot.busy = false;
          event.run(snapshot);
        } else if (snapshot.hasContinue || !snapshot.initialised) {
          snapshot.enqueue(event);
        } else {
          handle(snapshot, event);
        }
        drain(snapshot);
      } catch (error) {
        return crash(snapshot, error);
      }
      snapshot.inHandler = false;
      return snapshot;
    },

    getPersistedSnapshot: (snapshot: ServerSnapshot) => ({ status: snapshot.status, output: snapshot.output, error: snapshot.error }),
    // The one cast left: xstate types a snapshot as a discriminated union of immutable records, and a
    // gen server keeps one mutable snapshot object (its queue) for its whole life.
  } as unknown as GenServerLogic<TInput>;
  serverLogics.add(logic);
  return logic;
}
