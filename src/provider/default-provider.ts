import type { ChatMemory } from '../memory/contract/chat-memory.ts';
import type { MemoryProvider } from './memory-provider.ts';
import { isChatMemory } from './is-chat-memory.ts';
import { InvalidMemoryConfigError } from './provider-errors.ts';
import { safeWindow } from './safe-window.ts';

/**
 * beamai's default provider: `history`, `append` and `clear` go straight to the store, which
 * always keeps everything; `prepare` sends the last `window` non-system messages
 * (`safeWindow`), or everything when no window is given.
 * `window` must be an integer > 0 and `store` a ChatMemory, else `InvalidMemoryConfigError`.
 */
export function defaultProvider(store: ChatMemory, window?: number): MemoryProvider {
  if (!isChatMemory(store)) throw new InvalidMemoryConfigError('store must have get, add and clear', store);
  if (window !== undefined && (!Number.isInteger(window) || window <= 0)) {
    throw new InvalidMemoryConfigError(`window must be an integer > 0, got ${String(window)}`, window);
  }
  return {
    history: (id) => store.get(id),
    append: (id, messages) => store.add(id, messages),
    prepare: async (_id, messages) => (window === undefined ? [...messages] : safeWindow(messages, window)),
    clear: (id) => store.clear(id),
  };
}
