/**
 * The conversation actor: one process per active conversation, the only writer of it.
 *
 *   ready ──idle──▶ passivating ─▶ (exit normal)
 *     │
 *     └── stop ──▶ draining ──lane idle──▶ (exit with the stop reason)
 *
 * The machine is the actor's lifecycle; its writes go to its lane (write-lane.ts), the
 * actor's write mailbox, which the router pushes to directly: a write costs no state
 * transition, and the writes that queue while one commits share the next commit.
 *
 * - Start: the actor starts hibernated in `ready` (`spawnHibernated`, gen_server's
 *   `{ok, State, hibernate}`): its init tells the router its lane and hydrates, and no xstate
 *   actor exists until its lifecycle moves. Hydrating waits until any write of an earlier
 *   incarnation is settled, then reads the conversation's last id from the table (a reverse
 *   scan of one row, not a replay) and opens the lane, which numbers on from it: 1, 2, 3, ...
 *   with no gap and no duplicate. Writes that arrive before queue in the lane.
 * - ready: on `idle` (the router's idle sweep: no write delivered for `idleMs`) an actor whose
 *   lane is idle passivates: it tells the router first (so writes sent from then on wait for
 *   the next incarnation), then exits `normal`, which its transient child spec does not restart.
 * - A graceful stop (`otp.terminate`: the supervisor's shutdown, since the actor traps exits)
 *   lets the lane finish the writes it holds (once hydrated), then exits with the stop reason.
 * - A failure other than a storage error (an injected fault, a broken invariant, a failed
 *   hydration) crashes the actor; the batch is rejected with `write_aborted` and the
 *   supervisor restarts the actor, which hydrates again from storage. A killed actor's lane
 *   issues nothing more.
 *
 * An actor at rest (`ready`, its lane taking writes) hibernates (HIBERNATE, process.ts): the
 * shell holds no xstate actor for it, only its state value and context, until a message
 * (`idle`, a stop, a fault) moves its lifecycle; then it rests again. Most live actors are at
 * rest, so a live conversation costs its lane, its context and the shell's records (~2 KB)
 * rather than a full xstate actor (~6 KB more), and starting one makes no actor at all. That
 * is also why the lane's fault and a failed hydration reach the actor through its pid
 * (`cast`), never its xstate `self`: the xstate actor behind `self` is gone once it hibernates.
 */
import { fromPromise, setup } from 'xstate';
import { cast, HIBERNATE, isAlive, selfPid, spawnHibernated, TERMINATE, type Pid, type TerminateEvent } from '../../otp/index.ts';
import type { FaultInjector } from './fault-injector.ts';
import { InjectedFault } from './fault-injector.ts';
import type { MessageTable } from '../contract/message-table.ts';
import type { WallClock } from '../../wall-clock.ts';
import { WriteLane, type LaneOwner } from './write-lane.ts';
import type { StepHooks, WriteObserver } from './write-queue.ts';

/** What an actor tells the router about itself. */
export interface RouterPort {
  /** A new incarnation of `conversationId` started (first use, or a supervisor restart);
   * writes for it go to `lane`. */
  incarnated(conversationId: string, pid: Pid, lane: WriteLane): void;
  /** The actor is about to exit idle; route new writes to the next incarnation. */
  passivating(conversationId: string, pid: Pid): void;
  /** Settles when the write the previous incarnation had in flight has settled; undefined
   * when there is none to wait for. */
  fence(conversationId: string): Promise<void> | undefined;
}

export interface ConversationDeps {
  table: MessageTable;
  clock: WallClock;
  router: RouterPort;
  /** Built once per runtime by `conversationHooks`. */
  hooks: StepHooks | undefined;
  /** The runtime's `observer`, if any. */
  observer?: WriteObserver | undefined;
}

/** The commit faults of a runtime's conversation actors, if it was given an injector. */
export function conversationHooks(faults: FaultInjector | undefined): StepHooks | undefined {
  return (
    faults && {
      beforeWrite(conversationId) {
        if (faults.takeCommitFault(conversationId)) throw new InjectedFault(`commit of conversation ${conversationId}`);
      },
    }
  );
}

/** Sent by the router when no write was delivered for `idleMs`. */
export interface IdleEvent {
  readonly type: 'idle';
}

/** The lane failed other than with a storage error, or hydration failed: the actor crashes with it. */
interface FaultEvent {
  readonly type: 'fault';
  readonly error: unknown;
}

/**
 * The actor's state, and its lane's owner. Its fields are private: a hibernated actor is
 * restored from its context, and xstate then walks the context's enumerable fields for actor
 * refs to revive; here there is nothing to walk (the deps lead to the whole store).
 */
class Conversation implements LaneOwner {
  readonly #id: string;
  // Not the deps object: it is built per start (a restarted store's table), so keeping it
  // would keep one more object per live conversation.
  readonly #router: RouterPort;
  readonly #table: MessageTable;
  readonly #pid: Pid;
  readonly #lane: WriteLane;

  constructor(conversationId: string, deps: ConversationDeps, pid: Pid) {
    this.#id = conversationId;
    this.#router = deps.router;
    this.#table = deps.table;
    this.#pid = pid;
    const { table, clock, hooks, observer } = deps;
    this.#lane = new WriteLane({ table, conversationId, clock, hooks, observer }, this);
  }

  get id(): string {
    return this.#id;
  }
  get router(): RouterPort {
    return this.#router;
  }
  get pid(): Pid {
    return this.#pid;
  }
  get lane(): WriteLane {
    return this.#lane;
  }

  live(): boolean {
    return isAlive(this.#pid);
  }

  fault(error: unknown): void {
    cast(this.#pid, { type: 'fault', error } satisfies FaultEvent);
  }

  /**
   * Tells the router its lane, then opens the lane once the last id is read (after the
   * previous incarnation's write settled). With nothing to wait for and a table that reads
   * synchronously (a new conversation on LMDB), it opens now, so the router hands it the
   * waiting writes in the same turn. A lane whose owner died meanwhile issues nothing.
   */
  start(): void {
    const id = this.#id;
    const table = this.#table;
    this.#router.incarnated(id, this.#pid, this.#lane);
    const fence = this.#router.fence(id);
    let lastId: Promise<number>;
    try {
      if (fence !== undefined) lastId = fence.then(() => table.lastId(id));
      else if (table.lastIdNow !== undefined) return this.#lane.open(table.lastIdNow(id));
      else lastId = table.lastId(id);
    } catch (error) {
      // The actor is still in its init: the fault reaches it from the next microtask.
      lastId = Promise.reject(error);
    }
    lastId.then(
      (last) => this.#lane.open(last),
      (error: unknown) => this.fault(error),
    );
  }
}

/** A plain object, as xstate copies a context's enumerable fields when it assigns it. */
interface Context {
  readonly conversation: Conversation;
}

/** The conversation actor's machine, built at the first spawn, not at import (a read needs none). */
let machine: ReturnType<typeof buildConversationMachine> | undefined;
const conversationMachine = () => (machine ??= buildConversationMachine());

const buildConversationMachine = () =>
  setup({
    types: {} as {
      context: Context;
      events: IdleEvent | TerminateEvent | FaultEvent;
    },
    actors: {
      drain: fromPromise<void, WriteLane>(({ input }) => input.whenIdle()),
    },
    guards: {
      laneIdle: ({ context }) => context.conversation.lane.idle,
    },
    actions: {
      crash: ({ event }) => {
        throw (event as FaultEvent).error;
      },
    },
  }).createMachine({
    id: 'conversation',
    // Never built by xstate: the actor starts hibernated with its context (spawnConversationActor).
    context: () => {
      throw new Error('a conversation actor starts with spawnConversationActor');
    },
    on: {
      fault: { actions: 'crash' },
    },
    initial: 'ready',
    states: {
      ready: {
        // At rest: the shell holds no xstate actor until the next message.
        tags: [HIBERNATE],
        on: {
          idle: { guard: 'laneIdle', target: 'passivating' },
          [TERMINATE]: 'draining',
        },
      },
      draining: {
        invoke: { src: 'drain', input: ({ context }) => context.conversation.lane, onDone: 'stopped' },
      },
      passivating: {
        entry: ({ context: { conversation } }) => conversation.router.passivating(conversation.id, conversation.pid),
        always: 'stopped',
      },
      stopped: { type: 'final' },
    },
  });

/** Pending writes held by an actor (queued in its lane and in the commit in flight), for inspection. */
export function conversationBacklog(snapshot: unknown): number {
  return (snapshot as { context?: Context }).context?.conversation.lane.backlog ?? 0;
}

/** The registered name of a conversation's actor within a runtime named `runtime`. */
export function conversationActorName(runtime: string, conversationId: string): string {
  // join builds one flat string; a template literal keeps the pieces (two cons strings) as
  // long as the name lives, and a live conversation holds its name.
  return [runtime, '/conversation/', conversationId].join('');
}

export function spawnConversationActor(runtime: string, conversationId: string, deps: ConversationDeps): Pid {
  return spawnHibernated(
    conversationMachine(),
    () => {
      // Runs as the new process: selfPid is its pid.
      const conversation = new Conversation(conversationId, deps, selfPid()!);
      conversation.start();
      return { value: 'ready' as const, context: { conversation } };
    },
    {
      name: conversationActorName(runtime, conversationId),
      // Traps exits: the supervisor's shutdown arrives as TERMINATE, so the lane commits what it holds.
      trapExit: true,
      mailboxDepth: conversationBacklog,
    },
  );
}
