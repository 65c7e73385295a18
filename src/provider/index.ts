export type { MemoryProvider } from './memory-provider.ts';
export { isMemoryProvider } from './memory-provider.ts';
export { isChatMemory } from './is-chat-memory.ts';
export { defaultProvider } from './default-provider.ts';
export { safeWindow } from './safe-window.ts';
export { tokenWindowProvider, tokenWindow, type TokenWindowOptions } from './token-window-provider.ts';
export { o200kTokenCounter, type TokenCounter } from './token-counter.ts';
export { InvalidMemoryConfigError } from './provider-errors.ts';
