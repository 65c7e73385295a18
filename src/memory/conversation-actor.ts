/**
 * The conversation actor: one process per active conversation, the only writer of it.
 *
 *   hydrating ──lastId read──▶ ready ──write──▶ committing ──committed──▶ ready ──idle──▶ passivating ─▶ (exit normal)
 *                                 ▲                  │ queue not empty: next step
 *                                 └──────────────────┘
 *
 * - hydrating: waits until any write of an earlier incarnation is settled, then reads the
 *   conversation's last id from the table (a reverse scan of one row, not a replay).
 * - committing: runs one step of the write queue (write-queue.ts): every append that queued
 *   meanwhile goes into the next commit together (group commit per actor); ids continue from
 *   the last id, so they are 1, 2, 3, ... with no gap and no duplicate. The step runs as a
 *   plain promise that reports back with an event (`committed` / `failed`), not as an invoked
 *   child actor: this is the hot path, and a child actor per commit costs more than the commit.
 * - ready: on `idle` (the router's idle sweep: no write delivered for `idleMs`) the actor
 *   passivates: it tells the router first (so writes sent from then on wait for the next
 *   incarnation), then exits `normal`, which its transient child spec does not restart.
 * - A graceful stop (`otp.terminate`, e.g. the runtime stopping) finishes the queued writes
 *   first, then exits with the stop reason.
 * - A failure other than a storage error (an injected fault, a broken invariant) crashes the
 *   actor; the batch is rejected with `write_aborted` and the supervisor restarts the actor,
 *   which hydrates again from storage.
 */
import { fromPromise, setup } from 'xstate';
import { spawn, TERMINATE, pidOf, type Pid, type TerminateEvent } from '../otp/index.ts';
import type { FaultInjector } from './fault-injector.ts';
import { InjectedFault } from './fault-injector.ts';
import type { MessageTable } from './message-table.ts';
import type { WallClock } from './wall-clock.ts';
import { runStep, takeStep, type PendingOp, type Step, type StepHooks } from './write-queue.ts';

/** What an actor tells the router about itself. */
export interface RouterPort {
  /** A new incarnation of `conversationId` started (first use, or a supervisor restart). */
  incarnated(conversationId: string, pid: Pid): void;
  /** The actor is about to exit idle; route new writes to the next incarnation. */
  passivating(conversationId: string, pid: Pid): void;
  /** A write of `ops` is in flight; a successor must wait for it before hydrating. */
  writing(conversationId: string, ops: readonly PendingOp[], write: Promise<unknown>): void;
  /** Settles when every write of the conversation that is in flight has settled. */
  settled(conversationId: string): Promise<void>;
}

export interface ConversationDeps {
  table: MessageTable;
  clock: WallClock;
  router: RouterPort;
  /** Built once per runtime by `conversationHooks`. */
  hooks: StepHooks;
}

/** The step hooks every conversation actor of a runtime shares: fault injection, the fence. */
export function conversationHooks(router: RouterPort, faults: FaultInjector | undefined): StepHooks {
  return {
    beforeWrite(conversationId) {
      if (faults?.takeCommitFault(conversationId)) throw new InjectedFault(`commit of conversation ${conversationId}`);
    },
    onWrite(conversationId, ops, write) {
      router.writing(conversationId, ops, write);
    },
  };
}

export interface ConversationInput {
  conversationId: string;
  deps: ConversationDeps;
}

export interface WriteEvent {
  readonly type: 'write';
  readonly op: PendingOp;
}

/** Sent by the router when no write was delivered for `idleMs`. */
export interface IdleEvent {
  readonly type: 'idle';
}

type CommitEvent = { readonly type: 'committed'; readonly lastId: number } | { readonly type: 'failed'; readonly error: unknown };

interface Context {
  conversationId: string;
  deps: ConversationDeps;
  /** The commit's outcome as an event to this actor (bound once per incarnation). */
  committed: (lastId: number) => void;
  failed: (error: unknown) => void;
  lastId: number;
  /** Writes waiting for the next step (mutated in place: it can grow long under load). */
  queue: PendingOp[];
  step: Step | undefined;
  stopping: boolean;
}

export const conversationMachine = setup({
  types: {} as {
    context: Context;
    input: ConversationInput;
    events: WriteEvent | IdleEvent | TerminateEvent | CommitEvent;
  },
  actors: {
    hydrate: fromPromise<number, { conversationId: string; deps: ConversationDeps }>(async ({ input }) => {
      await input.deps.router.settled(input.conversationId);
      return input.deps.table.lastId(input.conversationId);
    }),
  },
  guards: {
    hasWork: ({ context }) => context.queue.length > 0,
    stopping: ({ context }) => context.stopping,
  },
  actions: {
    // Context is updated in place: the queue can grow long under load, and a copy per event
    // would make group commit quadratic.
    enqueue: ({ context, event }) => {
      if (event.type === 'write') context.queue.push(event.op);
    },
    markStopping: ({ context }) => {
      context.stopping = true;
    },
    setLastId: ({ context, event }) => {
      context.step = undefined;
      if (event.type === 'committed') context.lastId = event.lastId;
      else if ('output' in event) context.lastId = event.output as number;
    },
    commit: ({ context }) => {
      const next = takeStep(context.queue)!;
      context.queue = next.rest;
      context.step = next.step;
      const { table, clock, hooks } = context.deps;
      runStep(next.step, { table, conversationId: context.conversationId, lastId: context.lastId, clock, hooks }).then(context.committed, context.failed);
    },
    crash: ({ event }) => {
      throw (event as Extract<CommitEvent, { type: 'failed' }>).error;
    },
  },
}).createMachine({
  id: 'conversation',
  context: ({ input, self }) => ({
    conversationId: input.conversationId,
    deps: input.deps,
    // A killed incarnation's write still settles; its outcome then has no actor to go to.
    committed: (lastId: number) => void (self.getSnapshot().status === 'active' && self.send({ type: 'committed', lastId })),
    failed: (error: unknown) => void (self.getSnapshot().status === 'active' && self.send({ type: 'failed', error })),
    lastId: 0,
    queue: [],
    step: undefined,
    stopping: false,
  }),
  entry: ({ context, self }) => context.deps.router.incarnated(context.conversationId, pidOf(self)!),
  on: {
    write: { actions: 'enqueue' },
    [TERMINATE]: { actions: 'markStopping' },
  },
  initial: 'hydrating',
  // No eventless transitions: each event picks its target with guards, which keeps the
  // per-write cost to two plain transitions (write, committed).
  states: {
    hydrating: {
      invoke: {
        src: 'hydrate',
        input: ({ context }) => ({ conversationId: context.conversationId, deps: context.deps }),
        onDone: [
          { guard: 'hasWork', target: 'committing', actions: 'setLastId' },
          { guard: 'stopping', target: 'stopped', actions: 'setLastId' },
          { target: 'ready', actions: 'setLastId' },
        ],
      },
    },
    ready: {
      on: {
        write: { target: 'committing', actions: 'enqueue' },
        idle: 'passivating',
        [TERMINATE]: { target: 'stopped', actions: 'markStopping' },
      },
    },
    committing: {
      entry: 'commit',
      on: {
        committed: [
          { guard: 'hasWork', target: 'committing', reenter: true, actions: 'setLastId' },
          { guard: 'stopping', target: 'stopped', actions: 'setLastId' },
          { target: 'ready', actions: 'setLastId' },
        ],
        failed: { actions: 'crash' },
      },
    },
    passivating: {
      entry: ({ context, self }) => context.deps.router.passivating(context.conversationId, pidOf(self)!),
      always: 'stopped',
    },
    stopped: { type: 'final' },
  },
});

/** Pending writes held by an actor (its queue and the step in flight), for inspection. */
export function conversationBacklog(snapshot: unknown): number {
  const context = (snapshot as { context?: Context }).context;
  if (context === undefined) return 0;
  const inStep = context.step === undefined ? 0 : context.step.kind === 'clear' ? 1 : context.step.ops.length;
  return context.queue.length + inStep;
}

/** The registered name of a conversation's actor within a runtime named `runtime`. */
export function conversationActorName(runtime: string, conversationId: string): string {
  return `${runtime}/conversation/${conversationId}`;
}

export function spawnConversationActor(runtime: string, conversationId: string, deps: ConversationDeps): Pid {
  return spawn(conversationMachine, {
    name: conversationActorName(runtime, conversationId),
    input: { conversationId, deps } satisfies ConversationInput,
    mailboxDepth: conversationBacklog,
  });
}
