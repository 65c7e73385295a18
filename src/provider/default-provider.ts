import type { ChatMemory } from '../memory/contract/chat-memory.ts';
import type { MemoryProvider } from './memory-provider.ts';
import { isChatMemory } from './is-chat-memory.ts';
import { InvalidMemoryConfigError } from './provider-errors.ts';
import { safeWindow } from './safe-window.ts';
import { readSafeWindow } from './bounded-windows.ts';
import { isMessageLog, readLastTurn } from './history-reader.ts';

/**
 * beamai's default provider: `history`, `append` and `clear` go straight to the store, which
 * always keeps everything; `prepare` sends the last `window` non-system messages
 * (`safeWindow`), or everything when no window is given.
 * `window` must be an integer > 0 and `store` a ChatMemory, else `InvalidMemoryConfigError`.
 * With a window over a `MessageLog`, it also has `prepareHistory` (the same window read from
 * the end of the log: the system messages from their index, then the last `window` others)
 * and `lastTurn`, so an agent's turn costs the same at 100 messages and at 100,000.
 */
export function defaultProvider(store: ChatMemory, window?: number): MemoryProvider {
  if (!isChatMemory(store)) throw new InvalidMemoryConfigError('store must have get, add and clear', store);
  if (window !== undefined && (!Number.isInteger(window) || window <= 0)) {
    throw new InvalidMemoryConfigError(`window must be an integer > 0, got ${String(window)}`, window);
  }
  const provider: MemoryProvider = {
    history: (id) => store.get(id),
    append: (id, messages) => store.add(id, messages),
    prepare: async (_id, messages) => (window === undefined ? [...messages] : safeWindow(messages, window)),
    clear: (id) => store.clear(id),
  };
  if (window === undefined || !isMessageLog(store)) return provider;
  return {
    ...provider,
    prepareHistory: (id) => readSafeWindow(store, id, window),
    lastTurn: (id) => readLastTurn(store, id),
  };
}
