export {
  createRecall,
  DEFAULT_POOL_THRESHOLD,
  RecallClosedError,
  type DailyWindowQuery,
  type Recall,
  type RecallOptions,
  type SearchDailyQuery,
  type SearchSessionQuery,
  type SessionWindowQuery,
} from './recall.ts';
export type { ChatInput, ChatResult } from './chat-service.ts';
export type { DailyRow, MemoryRow, RowError, ToolCallView } from './memory-row.ts';
export type { ConversationSummary } from './sessions-index.ts';
export type { LongTermVersion } from './long-term-store.ts';
export type { DialogueLogRow } from './dialogue-log.ts';
export type { RecallEnvironment } from './recall-dbs.ts';
export { DB_NAMES as RECALL_DB_NAMES } from './recall-dbs.ts';
export type { WallClock } from './local-time.ts';
export { createSearchPool, SearchPoolClosedError, type SearchPool, type SearchPoolOptions } from './search-pool.ts';
export type { SearchJob } from './search-job.ts';
export type { ExportOptions, ExportReport } from './demo-export.ts';
export type { ImportOptions, ImportReport } from './demo-import.ts';
export { createMemoryTools, MEMORY_TOOL_NAMES, type MemoryToolBackend } from './memory-tools.ts';
export { buildSystemPrompt } from './system-prompt.ts';
export { buildPromptContext, type MemoryContext } from './prompt-context.ts';
export { assertSessionId, assertUserId, newSessionId, sessionConversationId } from './recall-ids.ts';
export { UNTITLED } from './conversation-title.ts';
export { supervisedRecall, RecallUnavailableError, type SupervisedRecall } from './supervised-recall.ts';
export type { SearchHit } from './search/bm25-query.ts';
export type { SearchInput } from './search/ranked-search.ts';
export { SEARCH_MEMORY_TOOL } from './search/search-memory-tool.ts';
