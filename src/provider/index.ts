export type { MemoryProvider } from './memory-provider.ts';
export { isMemoryProvider } from './memory-provider.ts';
export { isChatMemory } from './is-chat-memory.ts';
export { defaultProvider } from './default-provider.ts';
export { safeWindow } from './safe-window.ts';
export { tokenWindowProvider, tokenWindow, type TokenWindowOptions } from './token-window-provider.ts';
export { o200kTokenCounter, type TokenCounter } from './token-counter.ts';
export { InvalidMemoryConfigError } from './provider-errors.ts';
export { readSafeWindow, readTokenWindow } from './bounded-windows.ts';
export { isMessageLog, readBackwards, readLastTurn } from './history-reader.ts';
export { summaryProvider, type SummaryProvider, type SummaryProviderOptions } from './summary-provider.ts';
export {
  createSummarizer,
  splitPending,
  summaryRequest,
  SUMMARY_INSTRUCTION,
  type Summarizer,
  type SummarizerOptions,
} from './summarizer.ts';
export {
  SUMMARY_ID_PREFIX,
  latestSummary,
  listSummaries,
  summaryConversationId,
  summaryMessage,
  type SummaryProvenance,
  type SummaryRecord,
} from './summary-record.ts';
export { extractiveSummary } from './extractive-summary.ts';
export { SummaryFailedError } from './summary-errors.ts';
