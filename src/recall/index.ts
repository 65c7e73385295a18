/**
 * The layered memory's public face (the root entry and `mnemo/testing` pick from here).
 */
export { createRecall } from './recall.ts';
export {
  DEPRECATED_RECALL_METHODS,
  type DailyWindowQuery,
  type DialogueLogRow,
  type EraseUserOptions,
  type LongTermVersion,
  type Recall,
  type RecallOptions,
  type RecallSummaryOptions,
  type SearchDailyQuery,
  type SearchSessionQuery,
  type SessionWindowQuery,
} from './recall-api.ts';
export type { ChatInput, ChatResult, ChatStreamEvent } from './chat/chat-service.ts';
export type { RecordTurnInput, RecordTurnResult } from './chat/record-turn.ts';
export { TurnInterruptedError } from './chat/turn-interrupted.ts';
export type { DailyRow, RowError, SessionRow, ToolCallView } from './rows/row-types.ts';
export type { SessionsPage, SessionSummary } from './rows/session-list.ts';
export type { SessionRowsPage, SessionRowsQuery } from './queries/recall-queries.ts';
export type { FactsErrorHandler } from './recall-deps.ts';
export type { ExportOptions, ExportReport } from './demo-folder/demo-export.ts';
export type { ImportOptions, ImportReport } from './demo-folder/demo-import.ts';
export { createMemoryTools, FACT_TOOL_NAMES, MEMORY_TOOL_NAMES, type FactTarget, type MemoryToolBackend } from './chat/memory-tools.ts';
export type { FactEntry, FactOrigin, FactSource, FactVerdict, FactVerdictKind, FactWrite } from './records/fact-entry.ts';
export { EmbeddingsError } from './embeddings/embedding-errors.ts';
export { ExtractionAnswerError, FactConflictError, FactNotFoundError } from './facts/fact-errors.ts';
export { DEFAULT_LONG_TERM_TOKENS, type RankedFact, type RankOptions } from './facts/rank-facts.ts';
export type { RememberInput } from './facts/facts-service.ts';
export type { DeadExtraction, ExtractionRetryOptions, ExtractionStatus } from './jobs/extraction-worker.ts';
export { DEFAULT_RETRY as DEFAULT_EXTRACTION_RETRY } from './jobs/job-worker.ts';
export { buildSystemPrompt } from './chat/system-prompt.ts';
export { buildPromptContext, type MemoryContext } from './chat/prompt-context.ts';
export { assertSessionId, assertUserId, ID_RULE, idProblem, isValidId, newSessionId, sessionConversationId } from './recall-ids.ts';
export { UNTITLED } from './rows/session-title.ts';
export { supervisedRecall, type SupervisedRecall } from './supervised-recall.ts';
export { RecallClosedError, RecallLimitError, RecallUnavailableError, SearchPoolClosedError, UserErasingError, type RecallLimitCode } from './recall-errors.ts';
export { DEFAULT_RECALL_LIMITS, type RecallLimits } from './recall-limits.ts';
export type { SearchHit } from './search/search-hit.ts';
export type { SearchInput } from './queries/ranked-search.ts';
export type { Ranking, SearchResult } from './queries/search-result.ts';
export type { EmbeddingsOptions } from './embeddings/embeddings-options.ts';
export type { EmbeddingsStatus } from './queries/embeddings-status.ts';
export { SEARCH_MEMORY_TOOL } from './chat/search-memory-tool.ts';
export { StaleWriteError } from './storage/stale-write-error.ts';
export type * from './storage/recall-store.ts';
export type * from './records/records.ts';
export type * from './storage/job-queue.ts';
export { jobKey } from './storage/job-queue.ts';
export { createLmdbRecallStore, type LmdbRecallStoreOptions } from './storage/lmdb/lmdb-recall-store.ts';
export type { RecallEnvironment } from './storage/lmdb/recall-dbs.ts';
export { DB_NAMES as RECALL_DB_NAMES } from './storage/lmdb/recall-dbs.ts';
export { createSearchPool, type SearchPool, type SearchPoolOptions } from './storage/lmdb/pool/search-pool.ts';
export type { SearchJob } from './storage/lmdb/pool/search-job.ts';
