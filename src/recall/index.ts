export {
  createRecall,
  DEFAULT_POOL_THRESHOLD,
  type DailyWindowQuery,
  type Recall,
  type RecallOptions,
  type RecallSummaryOptions,
  type SearchDailyQuery,
  type SearchSessionQuery,
  type SessionWindowQuery,
} from './recall.ts';
export type { ChatInput, ChatResult } from './chat/chat-service.ts';
export type { ChatStreamEvent } from './chat/chat-service.ts';
export type { RecordTurnInput, RecordTurnResult } from './chat/record-turn.ts';
export { TurnInterruptedError } from './chat/turn-interrupted.ts';
export type { DailyRow, MemoryRow, RowError, ToolCallView } from './store/memory-row.ts';
export type { SessionSummary, SessionsPage } from './store/sessions-index.ts';
export type { SessionRowsPage, SessionRowsQuery } from './search/recall-queries.ts';
export type { LongTermVersion } from './store/long-term-store.ts';
export type { DialogueLogRow } from './store/dialogue-log.ts';
export type { RecallEnvironment } from './store/recall-dbs.ts';
export type { FactsErrorHandler } from './recall-deps.ts';
export { DB_NAMES as RECALL_DB_NAMES } from './store/recall-dbs.ts';
export { createSearchPool, type SearchPool, type SearchPoolOptions } from './search/search-pool.ts';
export type { SearchJob } from './search/search-job.ts';
export type { ExportOptions, ExportReport } from './demo-folder/demo-export.ts';
export type { ImportOptions, ImportReport } from './demo-folder/demo-import.ts';
export { createMemoryTools, FACT_TOOL_NAMES, MEMORY_TOOL_NAMES, type FactTarget, type MemoryToolBackend } from './chat/memory-tools.ts';
export type { FactEntry, FactOrigin, FactSource, FactVerdict, FactVerdictKind, FactWrite } from './facts/fact-entry.ts';
export { FactConflictError, FactNotFoundError } from './facts/fact-errors.ts';
export { DEFAULT_LONG_TERM_TOKENS, type RankedFact, type RankOptions } from './facts/rank-facts.ts';
export type { RememberInput } from './facts/facts-service.ts';
export { DEFAULT_EXTRACTION_RETRY, type DeadExtraction, type ExtractionRetryOptions, type ExtractionStatus } from './facts/extraction-worker.ts';
export { buildSystemPrompt } from './chat/system-prompt.ts';
export { buildPromptContext, type MemoryContext } from './chat/prompt-context.ts';
export { assertSessionId, assertUserId, ID_RULE, idProblem, isValidId, newSessionId, sessionConversationId } from './recall-ids.ts';
export { UNTITLED } from './store/session-title.ts';
export { supervisedRecall, type SupervisedRecall } from './supervised-recall.ts';
export { RecallClosedError, RecallLimitError, RecallUnavailableError, SearchPoolClosedError, UserErasingError, type RecallLimitCode } from './recall-errors.ts';
export { DEFAULT_RECALL_LIMITS, type RecallLimits } from './recall-limits.ts';
export type { EraseUserOptions, ErasureReport } from './store/user-erasure.ts';
export type { SearchHit } from './search/bm25-query.ts';
export type { SearchInput } from './search/ranked-search.ts';
export { SEARCH_MEMORY_TOOL } from './search/search-memory-tool.ts';
