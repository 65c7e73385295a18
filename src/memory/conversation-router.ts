/**
 * The conversation router: hands each write to its conversation's actor, starting the actor on
 * first use, and holds writes while there is no actor to take them (Akka's passivation
 * buffer). It is the registry's memory of which incarnation serves which conversation.
 *
 * Per conversation it knows one of:
 * - `live`: an incarnation is running; writes are cast to it at once;
 * - `passivating`: the incarnation announced it is exiting idle; writes wait in the buffer
 *   and go to the next incarnation, which the router starts when the old one is down;
 * - `restarting`: the incarnation crashed (or was killed); its supervisor restarts it and the
 *   new incarnation announces itself, taking the buffer. If its supervisor goes away instead,
 *   the router starts the conversation again under the next conversation supervisor.
 *
 * A write is never answered `noproc`. What an incarnation held when it died is settled as
 * what happened to it: a write already issued to storage settles with the storage outcome;
 * one that was not is rejected with `write_aborted` (nothing of it was stored), or
 * `store_closed` if the runtime is stopping.
 *
 * Writes in flight are also the fence between incarnations: a new incarnation hydrates only
 * after the previous one's last write settled, so it reads the true last id.
 *
 * Writes go straight into the live incarnation's lane (its write mailbox), not through its
 * event mailbox: see conversation-actor.ts.
 *
 * Passivation is driven from here too: an idle sweep, every `idleMs / 2`, sends `idle` to each
 * live actor that has had no write delivered for `idleMs` (an actor still committing ignores
 * it). So an actor passivates between `idleMs` and `1.5 × idleMs` after its last write, and a
 * write costs no timer of its own (one sweep timer serves every conversation, as Orleans'
 * activation collector does).
 */
import { cast, isAlive, isNormalExit, monitor, startChild, whereis, type ExitReason, type Pid } from '../otp/index.ts';
import type { IdleEvent, RouterPort } from './conversation-actor.ts';
import { conversationActorName } from './conversation-actor.ts';
import { StorageError } from './storage-error.ts';
import type { WriteLane } from './write-lane.ts';
import type { PendingOp } from './write-queue.ts';

interface Incarnation {
  readonly pid: Pid;
  /** Its write mailbox. */
  readonly lane: WriteLane;
  /** Writes handed to this incarnation and not settled yet. */
  readonly held: Set<Tracked>;
}

interface Route {
  state: 'live' | 'passivating' | 'restarting' | 'starting' | 'idle';
  current: Incarnation | undefined;
  /** When a write was last delivered (performance.now()). */
  lastActive: number;
  /** Writes waiting for an incarnation, in arrival order. */
  buffer: PendingOp[];
}

export interface RouterOptions {
  /** The runtime's name, the prefix of actor names. */
  runtime: string;
  /** The registered name of the conversation supervisor. */
  supervisorName: string;
  /** A live actor with no write delivered for this long passivates. */
  idleMs: number;
}

export class ConversationRouter implements RouterPort {
  private readonly routes = new Map<string, Route>();
  /** Per conversation, its last write issued to storage (for the hydration fence). */
  private readonly inFlight = new Map<string, Promise<unknown>>();
  private closedWith: StorageError | undefined;
  private readonly sweeper: ReturnType<typeof setInterval>;

  constructor(private readonly options: RouterOptions) {
    this.sweeper = setInterval(() => this.sweep(), Math.max(1, options.idleMs / 2));
    this.sweeper.unref();
  }

  /** Route one write; `op.done` settles it. */
  submit(conversationId: string, op: PendingOp): void {
    if (this.closedWith !== undefined) return op.done.reject(this.closedWith);
    const tracked = this.track(op);
    const route = this.route(conversationId);
    const current = route.current;
    if (route.state === 'live' && current !== undefined && route.buffer.length === 0 && isAlive(current.pid)) {
      return this.deliver(route, current, tracked);
    }
    route.buffer.push(tracked);
    if (route.state === 'idle') this.start(conversationId, route);
  }

  /** Conversations with an incarnation or writes waiting for one. */
  get size(): number {
    return this.routes.size;
  }

  /** Stop routing: reject waiting writes, and every later one, with `error`. */
  close(error: StorageError): void {
    this.closedWith ??= error;
    clearInterval(this.sweeper);
    for (const route of this.routes.values()) {
      for (const op of route.buffer.splice(0)) op.done.reject(error);
    }
  }

  /**
   * A conversation supervisor (re)started. Incarnations of the previous one are gone and will
   * not be restarted: start the conversations that have writes waiting, forget the others.
   */
  supervisorStarted(): void {
    for (const [id, route] of this.routes) {
      if (route.state !== 'idle' && route.state !== 'restarting') continue;
      if (whereis(conversationActorName(this.options.runtime, id)) !== undefined) continue;
      if (route.buffer.length > 0) this.start(id, route);
      else this.routes.delete(id);
    }
  }

  // --- RouterPort (called by conversation actors) ---

  incarnated(conversationId: string, pid: Pid, lane: WriteLane): void {
    const route = this.route(conversationId);
    const incarnation: Incarnation = { pid, lane, held: new Set() };
    route.current = incarnation;
    route.state = 'live';
    monitor(pid, (down) => this.down(conversationId, incarnation, down.reason));
    // The actor is still starting (this runs in its entry action): deliver afterwards.
    queueMicrotask(() => this.flush(route));
  }

  passivating(conversationId: string, pid: Pid): void {
    const route = this.routes.get(conversationId);
    if (route?.current?.pid === pid) route.state = 'passivating';
  }

  writing(conversationId: string, ops: readonly PendingOp[], write: Promise<unknown>): void {
    for (const op of ops) (op.done as Tracked).issued = true;
    this.inFlight.set(conversationId, write);
  }

  settled(conversationId: string): Promise<void> {
    const write = this.inFlight.get(conversationId);
    if (write === undefined) return Promise.resolve();
    const forget = () => {
      if (this.inFlight.get(conversationId) === write) this.inFlight.delete(conversationId);
    };
    return write.then(forget, forget);
  }

  // --- internals ---

  private route(conversationId: string): Route {
    let route = this.routes.get(conversationId);
    if (route === undefined) {
      route = { state: 'idle', current: undefined, lastActive: performance.now(), buffer: [] };
      this.routes.set(conversationId, route);
    }
    return route;
  }

  /** Wrap `op` so that it settles at most once and knows where it is held. */
  private track(op: PendingOp): PendingOp {
    return op.kind === 'append' ? { kind: 'append', entries: op.entries, done: tracked(op.done) } : { kind: 'clear', done: tracked(op.done) };
  }

  private sweep(): void {
    const cutoff = performance.now() - this.options.idleMs;
    for (const route of this.routes.values()) {
      if (route.state === 'live' && route.lastActive <= cutoff && route.current !== undefined) {
        cast(route.current.pid, { type: 'idle' } satisfies IdleEvent);
      }
    }
  }

  private deliver(route: Route, incarnation: Incarnation, op: PendingOp): void {
    route.lastActive = performance.now();
    const done = op.done as Tracked;
    incarnation.held.add(done);
    done.held = incarnation.held;
    incarnation.lane.push(op);
  }

  private flush(route: Route): void {
    const current = route.current;
    if (route.state !== 'live' || current === undefined || !isAlive(current.pid)) return;
    for (const op of route.buffer.splice(0)) this.deliver(route, current, op);
  }

  private start(conversationId: string, route: Route): void {
    route.state = 'starting';
    startChild(this.options.supervisorName, conversationId).then(
      () => undefined,
      () => {
        // Raced with a supervisor restart (the name is taken: that incarnation announced
        // itself), or there is no conversation supervisor right now: wait for the next one.
        if (route.state === 'starting') route.state = 'idle';
      },
    );
  }

  private down(conversationId: string, incarnation: Incarnation, reason: ExitReason): void {
    const abort =
      this.closedWith ??
      new StorageError('write_aborted', `the actor of conversation ${conversationId} stopped (${describe(reason)}) before the write was stored`);
    for (const done of [...incarnation.held]) {
      // An issued write settles with its storage outcome; the others never reached storage.
      if (!done.issued) done.reject(abort);
    }
    const route = this.routes.get(conversationId);
    if (route === undefined || route.current !== incarnation) return;
    route.current = undefined;
    if (this.closedWith !== undefined) {
      for (const op of route.buffer.splice(0)) op.done.reject(this.closedWith);
      this.routes.delete(conversationId);
    } else if (!isNormalExit(reason)) {
      // Its supervisor restarts it; the new incarnation announces itself and takes the buffer.
      route.state = 'restarting';
    } else if (route.buffer.length > 0) {
      this.start(conversationId, route);
    } else {
      this.routes.delete(conversationId);
      this.inFlight.delete(conversationId); // it passivated idle: nothing of it is in flight
    }
  }
}
/** An op's settle functions, settling at most once, with the router's bookkeeping. (A class,
 * not closures: one is made per write.) */
class Tracked {
  private settled = false;
  /** Its write was issued to storage: it settles with the storage outcome, whatever happens to the actor. */
  issued = false;
  /** The held set of the incarnation it was delivered to. */
  held: Set<Tracked> | undefined = undefined;

  constructor(private readonly done: { resolve(v: never): void; reject(e: unknown): void }) {}

  resolve(value: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.held?.delete(this);
    this.done.resolve(value as never);
  }

  reject(error: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.held?.delete(this);
    this.done.reject(error);
  }
}

function tracked<T>(done: { resolve(v: T): void; reject(e: unknown): void }): { resolve(v: T): void; reject(e: unknown): void } {
  return new Tracked(done as { resolve(v: never): void; reject(e: unknown): void });
}

function describe(reason: ExitReason): string {
  return typeof reason === 'string' ? reason : 'shutdown' in reason ? 'shutdown' : 'crashed';
}
