import type { Message } from '../message.ts';

/**
 * beamai's `beamai_memory_provider`: the policy over a store, used by the agent's loop.
 * - `history(id)`: the conversation so far, `[]` when none; loaded once at the start of a run.
 * - `append(id, messages)`: persists user, assistant and tool messages. READ-YOUR-WRITES:
 *   once it resolves, every later `history` of the same conversation sees the messages.
 * - `prepare(id, messages)`: what to send instead of `messages` (window, summary, recall);
 *   it must not change the store. Identity by default.
 * - `clear(id)`: forgets the conversation.
 * Two optional methods let the agent's turn cost stay flat as the conversation grows (the
 * built-in providers have them over a `MessageLog` with a window; a custom provider may add
 * them); when both are present the agent uses them instead of `history` + `prepare`:
 * - `prepareHistory(id)`: `prepare(id, await history(id))`, reading only what it returns;
 * - `lastTurn(id)`: the history from its last user message on (all of it without one).
 */
export interface MemoryProvider {
  /** The conversation so far, oldest first; `[]` when there is none. */
  history(conversationId: string): Promise<Message[]>;
  /** Stores `messages`; once it resolves, every later `history` sees them. */
  append(conversationId: string, messages: readonly Message[]): Promise<void>;
  /**
   * What to send the model instead of `messages` (the history plus this run); never changes the
   * store.
   */
  prepare(conversationId: string, messages: readonly Message[]): Promise<Message[]>;
  /** Forgets the conversation. */
  clear(conversationId: string): Promise<void>;
  /** `prepare(id, await history(id))`, reading only what it returns. */
  prepareHistory?(conversationId: string): Promise<Message[]>;
  /** The history from its last user message on (all of it without one). */
  lastTurn?(conversationId: string): Promise<Message[]>;
}

/** Duck typing: anything with the four methods is a provider. */
export function isMemoryProvider(value: unknown): value is MemoryProvider {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return ['history', 'append', 'prepare', 'clear'].every((k) => typeof v[k] === 'function');
}
