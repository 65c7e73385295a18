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
 * - `handleCast(message, state)` for `cast`; `handleInfo(message, state)` for `send` and, with
 *   `trapExit`, linked exits (`ExitMessage`). Unhandled infos are dropped; a call or cast
 *   without its handler crashes the process, like a missing clause. An exit signal from the
 *   server's own supervisor stops it with that reason (gen_server's parent rule).
 * - `self.stop(reason = 'normal')` stops the server once the current handler finishes
 *   (OTP's `{stop, Reason, ...}`); `terminate(reason, state)` then runs and the process exits
 *   with `reason`. A graceful `exit(pid, reason)` queues behind the messages already received,
 *   then runs `terminate` the same way. `exit(pid, 'kill')` skips it.
 * - An exception (or rejection) in any callback crashes the process with that error; like
 *   gen_server, `terminate({ crashed: error }, state)` runs first (not awaited). A crash in
 *   `init` or in `terminate` itself skips it.
 */
import type { ActorLogic, AnyActorRef, EventObject, Snapshot } from 'xstate';
import type { From } from './call.ts';
import { CallEnvelope, InfoEnvelope } from './envelopes.ts';
import type { ExitReason } from './exit-reason.ts';
import type { Message, Pid } from './pid.ts';
import { EXIT, processOfActor, serverLogics, TERMINATE, type ExitMessage, type Process, type TerminateEvent } from './process.ts';

/** Return from `handleCall` to reply later through `from`. */
export const noReply: unique symbol = Symbol('noReply');

export interface ServerSelf {
  readonly pid: Pid;
  /** Stop after the current handler (or at once, if idle); `terminate` runs first. */
  stop(reason?: ExitReason): void;
}

export interface GenServerCallbacks<
  S,
  TInput = void,
  TCall extends Message = Message,
  TCast extends Message = Message,
  TInfo extends Message = Message,
> {
  init(input: TInput, self: ServerSelf): S | Promise<S>;
  handleCall?(request: TCall, from: From, state: S): unknown;
  handleCast?(message: TCast, state: S): void | Promise<void>;
  handleInfo?(message: TInfo | ExitMessage, state: S): void | Promise<void>;
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
  proc: Process | undefined = undefined;
  private queue: object[] = [];
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
    this.queue[this.head++] = undefined as unknown as object;
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

/** Wakes an idle server so a `self.stop()` from outside a handler takes effect. */
const POKE = { type: 'otp.poke' };

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

export function genServer<S, TInput = void, TCall extends Message = Message, TCast extends Message = Message, TInfo extends Message = Message>(
  callbacks: GenServerCallbacks<S, TInput, TCall, TCast, TInfo>,
): GenServerLogic<TInput> {
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
    const result = callbacks.terminate?.(reason, snapshot.state as S);
    if (isThenable(result)) after(snapshot, result, (s) => finish(s, reason));
    else finish(snapshot, reason);
  };

  const handle = (snapshot: ServerSnapshot, event: object): void => {
    const state = snapshot.state as S;
    if (event instanceof CallEnvelope) {
      if (callbacks.handleCall === undefined) throw new Error(`gen server got call '${event.type}' but has no handleCall`);
      const from = event.from;
      const result = callbacks.handleCall(event.request as TCall, from, state);
      if (isThenable(result)) after(snapshot, result, (_s, value) => value !== noReply && from.reply(value));
      else if (result !== noReply) from.reply(result);
    } else if (event instanceof InfoEnvelope) {
      const message = event.message as ExitMessage;
      // gen_server: an exit signal from the parent (its supervisor) stops the server.
      if (message.type === EXIT && message.from === snapshot.proc?.supervisor && message.from !== undefined) {
        snapshot.stopReason = message.reason;
        return;
      }
      const result = callbacks.handleInfo?.(event.message as TInfo, state);
      if (isThenable(result)) after(snapshot, result, () => {});
    } else if ((event as Message).type === TERMINATE) {
      terminate(snapshot, (event as TerminateEvent).reason);
    } else if (event !== POKE) {
      if (callbacks.handleCast === undefined) throw new Error(`gen server got cast '${(event as Message).type}' but has no handleCast`);
      const result = callbacks.handleCast(event as TCast, state);
      if (isThenable(result)) after(snapshot, result, () => {});
    }
  };

  /** A callback threw: like gen_server, run `terminate` (best effort), then crash the actor. */
  const crash = (snapshot: ServerSnapshot, error: unknown): never => {
    if (snapshot.initialised && snapshot.stopReason === undefined) {
      snapshot.stopReason = { crashed: error };
      try {
        const result = callbacks.terminate?.({ crashed: error }, snapshot.state as S);
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
      const next = snapshot.dequeue();
      if (next === undefined) return;
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
      };
      snapshot.inHandler = true;
      const state = callbacks.init(snapshot.input as TInput, self);
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
      }
    },

    transition: (snapshot: ServerSnapshot, event: EventObject) => {
      if (event.type === 'xstate.stop') {
        snapshot.status = 'stopped';
        return snapshot;
      }
      if (event instanceof Crash) return crash(snapshot, event.error);
      if (snapshot.busy && !(event instanceof Resume)) {
        snapshot.enqueue(event);
        return snapshot;
      }
      snapshot.inHandler = true;
      try {
        if (event instanceof Resume) {
          snapshot.busy = false;
          event.run(snapshot);
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
  } as unknown as GenServerLogic<TInput>;
  serverLogics.add(logic);
  return logic;
}
