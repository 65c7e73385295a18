/**
 * Mnemo's public surface. Everything a user imports comes from here (and test kits from
 * `mnemo/testing`). Layers, bottom up: otp → memory → provider → kernel → agent → recall →
 * server; `llm` stands beside kernel and agent.
 */

// Errors: one hierarchy, stable codes.
export { MnemoError, InvalidInputError, type InvalidInputCode, type ErrorRecord } from './errors.ts';
export { DEFAULT_LANGUAGE, LANGUAGES, isLanguage, type Language } from './language.ts';

// The runtime and its supervision tree.
export { startRuntime, DEFAULT_DATA_DIR, DEFAULT_IDLE_MS, DEFAULT_MAX_LIVE_CONVERSATIONS } from './runtime.ts';
export type { Runtime, RuntimeOptions, RuntimeParts, RuntimeRecallOptions, RuntimeRetention, RuntimeStorage, RuntimeHealth } from './runtime.ts';
export type { WriteObserver } from './memory/runtime/write-queue.ts';
export type { OnlineCompactionReport } from './memory/runtime/online-compaction.ts';
export { compactDataDir, COMPACTION_STEPS } from './memory/lmdb/lmdb-environment.ts';
export type { CompactionReport, CompactionStep } from './memory/lmdb/lmdb-environment.ts';
export type { RetentionOptions, SweepReport } from './retention-sweep.ts';

// OTP: processes, calls, monitors, registry, supervisors, applications. (Its `Message`, a
// process message, is shadowed below by the chat message type, the one users mean.)
export * from './otp/index.ts';

// Store layer (beamai's ChatMemory).
export * from './memory/index.ts';
export type { Message } from './memory/index.ts';

export {
  createPostgresStore,
  StorageUnavailableError,
  DEFAULT_POSTGRES_SCHEMA,
  type PostgresStore,
  type PostgresStoreOptions,
  type PostgresConnectionOption,
  type PostgresOperation,
} from './memory/postgres/index.ts';

// Policy layer, kernel, agent, LLM services.
export * from './provider/index.ts';
export * from './kernel/index.ts';
export * from './agent/index.ts';
export * from './llm/index.ts';

// Layered memory of the Agent Memory Demo.
export {
  createRecall,
  createSearchPool,
  createMemoryTools,
  buildSystemPrompt,
  buildPromptContext,
  newSessionId,
  RecallClosedError,
  RecallUnavailableError,
  TurnInterruptedError,
  SearchPoolClosedError,
  UserErasingError,
  RecallLimitError,
  DEFAULT_RECALL_LIMITS,
  sessionConversationId,
  MEMORY_TOOL_NAMES,
  SEARCH_MEMORY_TOOL,
  FACT_TOOL_NAMES,
  FactConflictError,
  FactNotFoundError,
  DEFAULT_LONG_TERM_TOKENS,
  DEFAULT_EXTRACTION_RETRY,
  RECALL_DB_NAMES,
  UNTITLED,
} from './recall/index.ts';
export type {
  Recall,
  RecallOptions,
  SupervisedRecall,
  ChatInput,
  ChatResult,
  ChatStreamEvent,
  RecordTurnInput,
  RecordTurnResult,
  MemoryRow,
  DailyRow,
  ToolCallView,
  SessionSummary,
  LongTermVersion,
  FactEntry,
  FactSource,
  FactVerdict,
  FactWrite,
  RankedFact,
  RememberInput,
  ExtractionRetryOptions,
  ExtractionStatus,
  DeadExtraction,
  DialogueLogRow,
  SearchSessionQuery,
  SearchDailyQuery,
  SessionWindowQuery,
  DailyWindowQuery,
  SearchInput,
  SearchHit,
  SearchPool,
  SearchPoolOptions,
  ExportOptions,
  ExportReport,
  ImportOptions,
  ImportReport,
  RecallSummaryOptions,
  ErasureReport,
  RecallLimits,
  RecallLimitCode,
  EraseUserOptions,
} from './recall/index.ts';

// HTTP API and chat page.
export { createServer, startServer, createServerMetrics } from './server/index.ts';
export type { ServerOptions, RunningServer, ServerMetrics } from './server/index.ts';
