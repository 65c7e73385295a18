import type { ChatMemory } from '../memory/contract/chat-memory.ts';
import { defaultMemory } from '../memory/index.ts';
import { defaultProvider } from '../provider/default-provider.ts';
import { isChatMemory } from '../provider/is-chat-memory.ts';
import { isMemoryProvider, type MemoryProvider } from '../provider/memory-provider.ts';
import { InvalidMemoryConfigError } from '../provider/provider-errors.ts';

/**
 * The agent's `memory` setting, beamai's five forms:
 * - `'default'` (also when omitted): the shared default store (`defaultMemory()`), no window;
 * - `{ window: n }`: the shared default store, sending the last n non-system messages;
 * - `{ store }`: your own store, no window (window it with `defaultProvider(store, n)`);
 * - a provider: any object with `history`, `append`, `prepare` and `clear`, used as is;
 * - `false` or `'none'`: no memory; each run starts from nothing and stores nothing.
 * Every agent partitions the shared store by its own conversation id.
 * Anything else (`{window: 0}`, `{store: 42}`, `true`, `42`, extra keys, ...) is rejected
 * when the agent is created, where beamai would have failed only on first use.
 */
export type MemoryConfig =
  | 'default'
  | {
      /** The shared default store; the model is sent the last `window` non-system messages (an integer > 0). */
      window: number;
    }
  | {
      /** Your own store, no window. */
      store: ChatMemory;
    }
  | MemoryProvider
  | false
  | 'none';

export function resolveMemory(config: unknown): MemoryProvider | undefined {
  if (config === undefined || config === 'default') return defaultProvider(defaultMemory());
  if (config === false || config === 'none') return undefined;
  if (isMemoryProvider(config)) return config;
  if (isPlainObject(config)) {
    const keys = Object.keys(config);
    if (keys.length === 1 && keys[0] === 'window') {
      const n = config['window'];
      if (typeof n !== 'number' || !Number.isInteger(n) || n <= 0) {
        throw new InvalidMemoryConfigError(`memory.window must be an integer > 0, got ${describe(n)}`, config);
      }
      return defaultProvider(defaultMemory(), n);
    }
    if (keys.length === 1 && keys[0] === 'store') {
      const store = config['store'];
      if (!isChatMemory(store)) {
        throw new InvalidMemoryConfigError(`memory.store must be a store (get, add, clear), got ${describe(store)}`, config);
      }
      return defaultProvider(store);
    }
  }
  throw new InvalidMemoryConfigError(
    `memory must be 'default', {window: n}, {store}, a provider, false or 'none'; got ${describe(config)}`,
    config,
  );
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function describe(v: unknown): string {
  try {
    return typeof v === 'object' && v !== null ? JSON.stringify(v) ?? String(v) : String(v);
  } catch {
    return String(v);
  }
}
