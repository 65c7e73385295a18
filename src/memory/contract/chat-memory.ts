import type { Message } from '../../message.ts';

/**
 * beamai's ChatMemory store behaviour. Storage format is private to each backend.
 *
 * - `get` returns the conversation's messages in chronological order; `[]` when unknown.
 * - `add` appends; an empty list is harmless. It resolves only once the write is durable
 *   (for a persistent backend) and visible to every later `get` in the process.
 *   A bad message rejects the whole batch with an `InvalidInputError`; nothing is stored.
 * - `clear` forgets that conversation only; its numbering restarts at 1.
 */
export interface ChatMemory {
  /** The conversation's messages, oldest first; `[]` when it is unknown. */
  get(conversationId: string): Promise<Message[]>;
  /**
   * Appends `messages`, all or none; resolves once durable and visible to every later read.
   *
   * @throws `InvalidInputError` (`invalid_message`, `invalid_id`) for bad input: nothing is stored.
   */
  add(conversationId: string, messages: readonly Message[]): Promise<void>;
  /** Forgets the conversation (only it); its numbering restarts at 1. */
  clear(conversationId: string): Promise<void>;
}
