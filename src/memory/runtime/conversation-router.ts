/**
 * The conversation router: hands each write to its conversation's actor, starting the actor on
 * first use, and holds writes while there is no actor to take them (Akka's passivation
 * buffer). It is the registry's memory of which incarnation serves which conversation.
 *
 * Per conversation it knows one of:
 * - `live`: an incarnation is running; writes go into its lane (its write mailbox, see
 *   conversation-actor.ts) at once;
 * - `passivating`: the incarnation announced it is exiting idle; writes wait in the buffer
 *   and go to the next incarnation, which the router starts when the old one is down;
 * - `restarting`: the incarnation crashed (or was killed); its supervisor restarts it and the
 *   new incarnation announces itself, taking the buffer. If its supervisor goes away instead,
 *   the router starts the conversation again under the next conversation supervisor.
 *
 * A write is never answered `noproc`. What an incarnation held when it died is settled as
 * what happened to it: the write it had issued to storage settles with the storage outcome;
 * those still queued in its lane are rejected with `write_aborted` (nothing of them was
 * stored), or `store_closed` if the runtime is stopping.
 *
 * The previous incarnation's lane is also the fence between incarnations: a new incarnation
 * hydrates only after the write that lane had in flight settled, so it reads the true last id.
 *
 * Passivation is driven from here too: an idle sweep, every `idleMs / 2`, sends `idle` to each
 * live actor that has had no write delivered for `idleMs` (an actor still committing ignores
 * it). So an actor passivates between `idleMs` and `1.5 × idleMs` after its last write, and a
 * write costs no timer of its own (one sweep timer serves every conversation, as Orleans'
 * activation collector does). Above `maxLive` live actors, the least recently written idle
 * ones are asked to passivate at once (LRU passivation, as Akka's active-entity-limit does), so
 * memory stays bounded however many conversations are touched within `idleMs`.
 *
 * `hold()` (a compaction, which stops the conversation supervisor): from then on every write
 * waits in its route's buffer, none goes to an incarnation (one that is draining for its stop
 * could refuse it) and none starts one, until the returned release, which delivers them to the
 * live incarnations or starts new ones. Nothing held is refused or lost.
 */
import { cast, isAlive, isNormalExit, startChild, watch, whereis, type ExitReason, type ExitWatcher, type Pid } from '../../otp/index.ts';
import type { IdleEvent, RouterPort } from './conversation-actor.ts';
import { conversationActorName } from './conversation-actor.ts';
import { StorageError } from '../contract/memory-errors.ts';
import type { WriteLane } from './write-lane.ts';
import type { StoredMessage } from '../../message.ts';
import type { CheckedEntry } from '../contract/validate-input.ts';
import { recordsDropped, type PendingOp, type Settle } from './write-queue.ts';
import type { AppendOptions } from '../contract/message-log.ts';

/** One incarnation of a conversation's actor; it watches the actor's exit itself (no monitor closure per actor). */
class Incarnation implements ExitWatcher {
  /** It announced it is passivating: counted live until down, but no longer over the cap. */
  leaving = false;

  constructor(
    readonly pid: Pid,
    /** Its write mailbox. */
    readonly lane: WriteLane,
    private readonly conversationId: string,
    private readonly router: ConversationRouter,
  ) {}

  fire(reason: ExitReason): void {
    this.router.down(this.conversationId, this, reason);
  }
}

interface Route {
  state: 'live' | 'passivating' | 'restarting' | 'starting' | 'idle';
  current: Incarnation | undefined;
  /** The lane of the latest incarnation, live or not (a successor waits for its write in flight). */
  lastLane: WriteLane | undefined;
  /** What the current incarnation waits for before hydrating. */
  fence: Promise<void> | undefined;
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
  /** Above this many live actors, the least recently written idle ones passivate early. */
  maxLive: number;
}

export class ConversationRouter implements RouterPort {
  private readonly routes = new Map<string, Route>();
  private closedWith: StorageError | undefined;
  private readonly sweeper: ReturnType<typeof setInterval>;
  /** Incarnations started and not down yet. */
  private live = 0;
  /** Of those, the ones passivating. */
  private leaving = 0;
  private evictionQueued = false;
  /** Holds in force (`hold`). */
  private holds = 0;
  /** The route whose actor `start` is starting, while its `startChild` call runs. */
  private starting: Route | undefined = undefined;

  constructor(private readonly options: RouterOptions) {
    this.sweeper = setInterval(() => this.sweep(), Math.max(1, options.idleMs / 2));
    this.sweeper.unref();
  }

  /** Appends `entries` to `conversationId`; resolves with the stored records. */
  append(conversationId: string, entries: readonly CheckedEntry[], options?: AppendOptions): Promise<StoredMessage[]> {
    return new Promise((resolve, reject) => this.submitAppend(conversationId, entries, options, { resolve, reject }));
  }

  /** `append`, resolving with nothing (`add`). */
  add(conversationId: string, entries: readonly CheckedEntry[], options?: AppendOptions): Promise<void> {
    return new Promise((resolve, reject) => this.submitAppend(conversationId, entries, options, recordsDropped(resolve, reject)));
  }

  /** Makes `conversationId` a fork of `source` at `at`, in its own actor (which numbers on from `at`). */
  fork(conversationId: string, source: string, at: number): Promise<void> {
    return new Promise((resolve, reject) => this.submit(conversationId, { kind: 'fork', source, at, done: { resolve, reject } }));
  }

  clear(conversationId: string): Promise<void> {
    return new Promise((resolve, reject) => this.submit(conversationId, { kind: 'clear', done: { resolve: () => resolve(), reject } }));
  }

  /**
   * Clears `conversationId` only if its last id is still `lastId` when its actor gets to it
   * (after every write queued before): resolves with whether it cleared. The retention sweep's
   * clear, so a write landing after the sweep read the conversation is never erased.
   */
  clearIfLastId(conversationId: string, lastId: number): Promise<boolean> {
    return new Promise((resolve, reject) => this.submit(conversationId, { kind: 'clear', ifLastId: lastId, done: { resolve, reject } }));
  }

  private submit(conversationId: string, op: PendingOp): void {
    if (this.closedWith !== undefined) return op.done.reject(this.closedWith);
    const route = this.route(conversationId);
    const current = route.current;
    if (this.holds === 0 && route.state === 'live' && current !== undefined && route.buffer.length === 0 && isAlive(current.pid)) {
      return this.deliver(route, current, op);
    }
    route.buffer.push(op);
    if (this.holds === 0 && route.state === 'idle') this.start(conversationId, route);
  }

  /**
   * Holds every write from now on in its route's buffer (see the file's comment) until the
   * returned function is called (once; later calls do nothing).
   */
  hold(): () => void {
    this.holds++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--this.holds > 0 || this.closedWith !== undefined) return;
      for (const [id, route] of this.routes) {
        if (route.buffer.length === 0) continue;
        if (route.state === 'live') this.flush(route);
        else if (route.state === 'idle') this.start(id, route);
      }
    };
  }

  /** Conversation actors started and not down yet (passivating ones included). */
  get liveActors(): number {
    return this.live;
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
      else if (route.lastLane?.idle !== false) this.routes.delete(id);
    }
  }

  // --- RouterPort (called by conversation actors) ---

  incarnated(conversationId: string, pid: Pid, lane: WriteLane): void {
    const route = this.route(conversationId);
    const incarnation = new Incarnation(pid, lane, conversationId, this);
    // The previous incarnation exited before this one could take its name: its lane issues
    // nothing more, and what it has in flight is all there is to wait for.
    route.fence = route.lastLane?.settled();
    route.lastLane = lane;
    route.current = incarnation;
    route.state = 'live';
    this.live++;
    watch(pid, incarnation);
    // This runs in the actor's init: the writes go to it afterwards, from `start` when it
    // started this actor, else (a restart) from a microtask.
    if (route !== this.starting) queueMicrotask(() => this.flush(route));
    if (this.live - this.leaving > this.options.maxLive && !this.evictionQueued) {
      // A microtask, not a later event turn: a loop over an in-memory store never yields to
      // the event loop, and eviction must keep up with it.
      this.evictionQueued = true;
      queueMicrotask(() => this.evict());
    }
  }

  passivating(conversationId: string, pid: Pid): void {
    const route = this.routes.get(conversationId);
    if (route?.current?.pid !== pid || route.current.leaving) return;
    route.state = 'passivating';
    route.current.leaving = true;
    this.leaving++;
  }

  fence(conversationId: string): Promise<void> | undefined {
    return this.routes.get(conversationId)?.fence;
  }

  // --- internals ---

  private submitAppend(conversationId: string, entries: readonly CheckedEntry[], options: AppendOptions | undefined, done: Settle<StoredMessage[]>): void {
    this.submit(conversationId, { kind: 'append', entries, key: options?.idempotencyKey, done, onNumbered: options?.onNumbered });
  }

  private route(conversationId: string): Route {
    let route = this.routes.get(conversationId);
    if (route === undefined) {
      route = { state: 'idle', current: undefined, lastLane: undefined, fence: undefined, lastActive: performance.now(), buffer: [] };
      this.routes.set(conversationId, route);
    }
    return route;
  }

  private sweep(): void {
    const cutoff = performance.now() - this.options.idleMs;
    for (const [id, route] of this.routes) {
      if (route.state === 'live' && route.lastActive <= cutoff && route.current !== undefined) {
        cast(route.current.pid, { type: 'idle' } satisfies IdleEvent);
      } else if (route.state === 'idle' && route.buffer.length === 0 && route.lastLane?.idle !== false) {
        this.routes.delete(id); // kept after a supervisor restart only to fence a write that has settled since
      }
    }
  }

  /**
   * Passivates the least recently written idle actors: the excess over `maxLive` and a tenth
   * of `maxLive` more, so a pass (a sort of the live routes) runs once per that many activations.
   */
  private evict(): void {
    this.evictionQueued = false;
    const excess = this.live - this.leaving - this.options.maxLive;
    if (excess <= 0 || this.closedWith !== undefined) return;
    const idle: Route[] = [];
    for (const route of this.routes.values()) if (route.state === 'live' && route.current?.lane.idle) idle.push(route);
    idle.sort((a, b) => a.lastActive - b.lastActive);
    for (const route of idle.slice(0, excess + Math.ceil(this.options.maxLive / 10))) {
      cast(route.current!.pid, { type: 'idle' } satisfies IdleEvent);
    }
  }

  private deliver(route: Route, incarnation: Incarnation, op: PendingOp): void {
    route.lastActive = performance.now();
    incarnation.lane.push(op);
  }

  private flush(route: Route): void {
    const current = route.current;
    if (route.state !== 'live' || current === undefined || !isAlive(current.pid)) return;
    for (const op of route.buffer.splice(0)) this.deliver(route, current, op);
  }

  private start(conversationId: string, route: Route): void {
    route.state = 'starting';
    this.starting = route;
    let started: Promise<unknown>;
    try {
      started = startChild(this.options.supervisorName, conversationId);
    } finally {
      this.starting = undefined;
    }
    // A supervisor that is not busy starts the actor within the call (a conversation actor
    // starts hibernated, its lane open): the writes go to it in the caller's turn, so a first
    // write is issued with the call that made it, as a later one is.
    this.flush(route);
    started.catch(() => {
      // Raced with a supervisor restart (the name is taken: that incarnation announced
      // itself), or there is no conversation supervisor right now: wait for the next one.
      if (route.state === 'starting') route.state = 'idle';
    });
  }

  /** The incarnation's actor exited (its watcher fired). */
  down(conversationId: string, incarnation: Incarnation, reason: ExitReason): void {
    // Its write in flight settles with the storage outcome; the queued ones never reached
    // storage. (The error is built only for them: an actor that passivated holds none.)
    const queued = incarnation.lane.takeQueued();
    if (queued.length > 0) {
      const abort =
        this.closedWith ??
        new StorageError('write_aborted', `the actor of conversation ${conversationId} stopped (${describe(reason)}) before the write was stored`);
      for (const op of queued) op.done.reject(abort);
    }
    this.live--;
    if (incarnation.leaving) this.leaving--;
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
      if (this.holds === 0) this.start(conversationId, route);
      else route.state = 'idle'; // started by the release
    } else {
      this.routes.delete(conversationId); // it passivated idle or drained: nothing of it is in flight
    }
  }
}
function describe(reason: ExitReason): string {
  return typeof reason === 'string' ? reason : 'shutdown' in reason ? 'shutdown' : 'crashed';
}
