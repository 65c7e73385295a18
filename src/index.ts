/**
 * Mnemo's root entry: what an application starts with. The runtime and its stores, agents
 * with memory over the kernel, the layered memory (recall), the model services, and the
 * errors users catch. Everything else has an entry of its own:
 *
 * - `mnemo/otp`: the runtime primitives (processes, calls, monitors, supervisors, applications);
 * - `mnemo/server`: the HTTP API and chat page;
 * - `mnemo/postgres`: the PostgreSQL stores;
 * - `mnemo/langgraph`: a LangGraph.js checkpointer and store;
 * - `mnemo/testing`: the contract suites and fault injection, for your own stores and tests.
 *
 * Importing this entry loads the runtime, the memory and recall; the HTTP server, PostgreSQL's
 * driver, the OpenAI client and the o200k tokenizer load when first used.
 *
 * @module mnemo
 */

// Errors: one hierarchy, stable codes (every layer's errors a user may catch).
export { MnemoError, InvalidInputError, type InvalidInputCode, type ErrorRecord } from './errors.ts';
export { StorageError, type StorageErrorCode } from './memory/contract/memory-errors.ts';
export { ForkError, type ForkErrorCode } from './memory/contract/fork.ts';
export { LlmError, type LlmErrorCode } from './llm/llm-errors.ts';
export { MaxToolCallsError, MaxToolIterationsError, NoLlmServiceError, ToolNotFoundError } from './kernel/kernel-errors.ts';
export { InvalidMemoryConfigError } from './provider/provider-errors.ts';
export { SummaryFailedError } from './provider/summary-errors.ts';
export {
  RecallClosedError,
  RecallLimitError,
  RecallUnavailableError,
  UserErasingError,
  TurnInterruptedError,
  FactConflictError,
  FactNotFoundError,
  StaleWriteError,
  SearchPoolClosedError,
  ExtractionAnswerError,
  EmbeddingsError,
  type RecallLimitCode,
} from './recall/index.ts';

// The runtime: its supervision tree, the default store, compaction.
export { startRuntime } from './runtime.ts';
export type { Runtime, RuntimeOptions, RuntimeParts, RuntimeRecallOptions, RuntimeRetention, RuntimeStorage, RuntimeHealth } from './runtime.ts';
export type { WriteObserver } from './memory/runtime/write-queue.ts';
export type { OnlineCompactionReport } from './memory/runtime/online-compaction.ts';
export type { RetentionOptions, SweepReport } from './retention/retention-sweep.ts';
export { compactDataDir, type CompactionReport, type CompactionOptions } from './memory/lmdb/lmdb-environment.ts';
export type { CopyMethod } from './memory/lmdb/compacting-copy.ts';
export { defaultMemory } from './memory/runtime/default-memory.ts';

// Messages and the store layer (beamai's ChatMemory).
export type {
  Message,
  SystemMessage,
  UserMessage,
  AssistantMessage,
  ToolMessage,
  ToolCall,
  ContentBlock,
  ContentPart,
  Role,
  Meta,
  JsonValue,
  JsonObject,
  StoredMessage,
} from './message.ts';
export type { ChatMemory } from './memory/contract/chat-memory.ts';
export type { MessageLog, NewEntry, RangeQuery } from './memory/contract/message-log.ts';
export type { AppendOptions } from './memory/contract/idempotency.ts';
export { createInMemoryStore, type InMemoryStoreOptions } from './memory/in-memory/in-memory-store.ts';
export { createLmdbStore, type LmdbStore, type LmdbStoreOptions } from './memory/lmdb/lmdb-store.ts';
export type { LmdbEnvironmentOptions } from './memory/lmdb/lmdb-environment.ts';
export type { ClosableLog } from './memory/standalone-log.ts';

// Policy layer: what of a conversation a model sees.
export type { MemoryProvider } from './provider/memory-provider.ts';
export { defaultProvider } from './provider/default-provider.ts';
export { safeWindow } from './provider/safe-window.ts';
export { tokenWindowProvider, type TokenWindowOptions } from './provider/token-window-provider.ts';
export { summaryProvider, type SummaryProvider, type SummaryProviderOptions } from './provider/summary-provider.ts';
export { createSummarizer, type Summarizer, type SummarizerOptions } from './provider/summarizer.ts';
export type { SummaryRecord, SummaryProvenance, NewSummary } from './provider/summary-record.ts';
export type { TokenCounter } from './provider/token-counter.ts';

// Kernel, tools and agents.
export { createKernel } from './kernel/kernel.ts';
export type { ChatCallOptions, InvokeOptions, InvokeResult, Kernel, KernelConfig, KernelSettings } from './kernel/kernel-types.ts';
export { newContext, withConversationId, conversationId, type Context } from './kernel/context.ts';
export { createFilter } from './kernel/filter.ts';
export type { Around, ChatRequest, ChatResponse, Filter, FilterHooks, Next, Phase, ToolRequest, ToolResponse } from './kernel/filter.ts';
export { memoryFilter, type MemoryFilterOptions } from './kernel/memory-filter.ts';
export { systemPromptFilter } from './kernel/system-prompt-filter.ts';
export { defineTool, type Tool } from './kernel/tool.ts';
export type { DoneEvent, LoopEvent, StreamEvent, TextEvent, ToolCallEvent, ToolResultEvent } from './kernel/stream-events.ts';
export { createAgent } from './agent/agent.ts';
export type { Agent, AgentConfig, AgentRunOptions, AgentRunResult } from './agent/agent.ts';
export type { MemoryConfig } from './agent/memory-config.ts';

// Model services.
export type { ChatOptions, LlmResponse, LlmService, LlmStreamEvent, ToolChoice, ToolSpec, Usage } from './llm/llm-service.ts';
export type { TraceContext } from './telemetry/tracing.ts';
export { fallbackLlm } from './llm/fallback-llm.ts';
export { openAICompatible, type OpenAICompatibleOptions } from './llm/openai-compatible.ts';
export { llmFromEnv } from './llm/llm-from-env.ts';
export type { Language, LanguageSetting } from './language.ts';

// The layered memory of the Agent Memory Demo.
export {
  createRecall,
  createLmdbRecallStore,
  createSearchPool,
  createMemoryTools,
  newSessionId,
  sessionConversationId,
} from './recall/index.ts';
export type {
  Recall,
  RecallOptions,
  RecallSummaryOptions,
  RecallLimits,
  SupervisedRecall,
  RecallStore,
  LmdbRecallStoreOptions,
  ChatInput,
  ChatResult,
  ChatStreamEvent,
  SessionRow,
  RecordTurnInput,
  RecordTurnResult,
  DailyRow,
  ToolCallView,
  RowError,
  SessionSummary,
  SessionsPage,
  SessionRowsPage,
  SessionRowsQuery,
  LongTermVersion,
  DialogueLogRow,
  FactEntry,
  FactSource,
  FactOrigin,
  FactVerdict,
  FactWrite,
  RankedFact,
  RankOptions,
  RememberInput,
  ExtractionRetryOptions,
  ExtractionStatus,
  DeadExtraction,
  SearchSessionQuery,
  SearchDailyQuery,
  SessionWindowQuery,
  DailyWindowQuery,
  SearchInput,
  SearchHit,
  SearchResult,
  Ranking,
  SearchPool,
  SearchPoolOptions,
  EmbeddingsOptions,
  EmbeddingsStatus,
  ExportOptions,
  ExportReport,
  ImportOptions,
  ImportReport,
  ErasureReport,
  EraseUserOptions,
  FactsErrorHandler,
  MemoryToolBackend,
  FactTarget,
} from './recall/index.ts';
// The storage ports, for your own store: what a `RecallStore` and a `MessageLog` exchange.
export type {
  WriteGuard,
  TurnAppend,
  TurnSideWrites,
  TurnAppended,
  FactsState,
  FactsChange,
  RankedDoc,
  NearDoc,
  VectorWrite,
  ImportBatch,
  SessionEntry,
  DailyRecord,
  NewDailyRecord,
  LogRecord,
  NewLogRecord,
  LongTermRecord,
  TurnKeyRecord,
  TurnAnswer,
  JobQueue,
  JobKind,
  Job,
  NewJob,
  LeasedJob,
  DeadJob,
  JobLease,
  JobCounts,
  JobPayloads,
  ExtractPayload,
  EmbedPayload,
  SummarizePayload,
  SweepPayload,
  FactVerdictKind,
  RecallEnvironment,
} from './recall/index.ts';
export type { DocTemplate, DocLine } from './recall/records/fact-entry.ts';
export type { RankedFilters } from './recall/search/rank-filters.ts';
export type { ParsedToolCall, ToolCallRecord } from './kernel/tool-call.ts';
export type { ConditionalClear } from './memory/contract/conditional-clear.ts';
export type { ConversationSelection } from './memory/contract/erasable-log.ts';
export type { WallClock } from './wall-clock.ts';
export * from './deprecated.ts';
