import type { ChatMemory } from '../memory/contract/chat-memory.ts';

/** Duck typing: anything with `get`, `add` and `clear` is a store. */
export function isChatMemory(value: unknown): value is ChatMemory {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v['get'] === 'function' && typeof v['add'] === 'function' && typeof v['clear'] === 'function';
}
