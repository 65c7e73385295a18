/**
 * The conversation actor: one process per active conversation, the only writer of it.
 *
 *   hydrating ──lastId read──▶ ready ──write──▶ committing ──done──▶ ready ──idle──▶ passivating ─▶ (exit normal)
 *                                 ▲                  │ queue not empty: next step
 *                                 └──────────────────┘
 *
 * - hydrating: waits until any write of an earlier incarnation is settled, then reads the
 *   conversation's last id from the table (a reverse scan of one row, not a replay).
 * - committing: runs one step of the write queue (write-queue.ts): every append that queued
 *   meanwhile goes into the next commit together (group commit per actor); ids continue from
 *   the last id, so they are 1, 2, 3, ... with no gap and no duplicate.
 * - ready: after `idleMs` without a write the actor passivates: it tells the router first (so
 *   writes sent from then on wait for the next incarnation), then exits `normal`, which its
 *   transient child spec does not restart.
 * - A graceful stop (`otp.terminate`, e.g. the runtime stopping) finishes the queued writes
 *   first, then exits with the stop reason.
 * - A failure other than a storage error (an injected fault, a broken invariant) crashes the
 *   actor; the batch is rejected with `write_aborted` and the supervisor restarts the actor,
 *   which hydrates again from storage.
 */
import { assign, fromPromise, setup } from 'xstate';
import { spawn, TERMINATE, pidOf, type Pid, type TerminateEvent } from '../otp/index.ts';
import type { FaultInjector } from './fault-injector.ts';
import { InjectedFault } from './fault-injector.ts';
import type { MessageTable } from './message-table.ts';
import type { WallClock } from './wall-clock.ts';
import { runStep, takeStep, type PendingOp, type Step } from './write-queue.ts';

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
  idleMs: number;
  router: RouterPort;
  faults: FaultInjector | undefined;
}

export interface ConversationInput {
  conversationId: string;
  deps: ConversationDeps;
}

export interface WriteEvent {
  readonly type: 'write';
  readonly op: PendingOp;
}

interface Context {
  conversationId: string;
  deps: ConversationDeps;
  lastId: number;
  queue: PendingOp[];
  step: Step | undefined;
  stopping: boolean;
}

export const conversationMachine = setup({
  types: {} as {
    context: Context;
    input: ConversationInput;
    events: WriteEvent | TerminateEvent;
  },
  actors: {
    hydrate: fromPromise<number, { conversationId: string; deps: ConversationDeps }>(async ({ input }) => {
      await input.deps.router.settled(input.conversationId);
      return input.deps.table.lastId(input.conversationId);
    }),
    commit: fromPromise<number, { step: Step; context: Context }>(({ input: { step, context } }) =>
      runStep(step, {
        table: context.deps.table,
        conversationId: context.conversationId,
        lastId: context.lastId,
        clock: context.deps.clock,
        beforeWrite: () => {
          if (context.deps.faults?.takeCommitFault(context.conversationId)) {
            throw new InjectedFault(`commit of conversation ${context.conversationId}`);
          }
        },
        onWrite: (write) => context.deps.router.writing(context.conversationId, step.kind === 'clear' ? [step.op] : step.ops, write),
      }),
    ),
  },
  guards: {
    hasWork: ({ context }) => context.queue.length > 0,
    stopping: ({ context }) => context.stopping,
  },
  delays: {
    idle: ({ context }) => context.deps.idleMs,
  },
  actions: {
    enqueue: assign({ queue: ({ context, event }) => (event.type === 'write' ? [...context.queue, event.op] : context.queue) }),
    markStopping: assign({ stopping: true }),
  },
}).createMachine({
  id: 'conversation',
  context: ({ input }) => ({
    conversationId: input.conversationId,
    deps: input.deps,
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
  states: {
    hydrating: {
      invoke: {
        src: 'hydrate',
        input: ({ context }) => ({ conversationId: context.conversationId, deps: context.deps }),
        onDone: { target: 'ready', actions: assign({ lastId: ({ event }) => event.output }) },
      },
    },
    ready: {
      always: [
        { guard: 'hasWork', target: 'committing' },
        { guard: 'stopping', target: 'stopped' },
      ],
      on: { write: { target: 'committing', actions: 'enqueue' } },
      after: { idle: 'passivating' },
    },
    committing: {
      entry: assign(({ context }) => {
        const next = takeStep(context.queue)!;
        return { step: next.step, queue: next.rest };
      }),
      invoke: {
        src: 'commit',
        input: ({ context }) => ({ step: context.step!, context }),
        onDone: { target: 'ready', actions: assign({ lastId: ({ event }) => event.output, step: undefined }) },
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
