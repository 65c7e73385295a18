/**
 * conversation_sup: the dynamic (simple_one_for_one) supervisor of conversation actors.
 *
 * - One child per active conversation, started on first use by the router
 *   (`startChild(sup, conversationId)`).
 * - `transient`: a crashed actor is restarted (it hydrates again from storage); an actor
 *   that passivated after being idle exits `normal` and is not restarted.
 * - shutdown 5000 ms: a stopping actor first commits the writes it holds.
 * - Intensity 10 restarts in 10 s: crashes of single conversations are independent, so the
 *   budget is larger than the root's; a storm of them (say, storage that keeps failing in a
 *   way that is not a storage error) still escalates to the root.
 */
import type { ChildSpec, Clock } from '../src/otp/index.ts';
import { startDynamicSupervisor } from '../src/otp/index.ts';
import { spawnConversationActor, type ConversationDeps } from '../src/memory/runtime/conversation-actor.ts';

export interface ConversationSupOptions {
  /** The runtime's name: the supervisor is registered as `<runtime>_conversation_sup`. */
  runtime: string;
  /** What each actor needs, read when it starts (so a restarted store's table is used). */
  deps: () => ConversationDeps;
  clock?: Clock;
  /** Called each time the supervisor has (re)started, so waiting conversations can start. */
  onStarted: () => void;
}

export const conversationSupName = (runtime: string) => `${runtime}_conversation_sup`;

export function conversationSupChild(options: ConversationSupOptions): ChildSpec {
  return {
    id: 'conversations',
    type: 'supervisor',
    restart: 'permanent',
    shutdown: 'infinity',
    start: async () => {
      const pid = await startDynamicSupervisor<[string]>(
        {
          child: {
            start: (conversationId: string) => spawnConversationActor(options.runtime, conversationId, options.deps()),
            restart: 'transient',
            shutdown: 5000,
          },
          intensity: 10,
          period: 10,
        },
        { name: conversationSupName(options.runtime), ...(options.clock ? { clock: options.clock } : {}) },
      );
      options.onStarted();
      return pid;
    },
  };
}
