import type { LanguageSetting } from '../language.ts';
import type { Tool } from '../kernel/tool.ts';
import type { LlmService } from '../llm/llm-service.ts';
import type { JsonValue } from '../message.ts';
import type { WallClock } from '../wall-clock.ts';
import type { SummaryRecord } from '../provider/summary-record.ts';
import type { ChatInput, ChatResult, ChatStreamEvent } from './chat/chat-service.ts';
import type { RecordTurnInput, RecordTurnResult } from './chat/record-turn.ts';
import type { ExportOptions, ExportReport } from './demo-folder/demo-export.ts';
import type { ImportOptions, ImportReport } from './demo-folder/demo-import.ts';
import type { EmbeddingDrain } from './jobs/embed-drain.ts';
import type { EmbeddingsOptions } from './embeddings/embeddings-options.ts';
import type { EmbeddingsStatus } from './queries/embeddings-status.ts';
import type { SearchResult } from './queries/search-result.ts';
import type { ExtractionRetryOptions, ExtractionStatus } from './jobs/extraction-worker.ts';
import type { FactEntry, FactWrite } from './records/fact-entry.ts';
import type { RememberInput } from './facts/facts-service.ts';
import type { RankedFact, RankOptions } from './facts/rank-facts.ts';
import type { FactsErrorHandler } from './recall-deps.ts';
import type { RecallLimits } from './recall-limits.ts';
import type { DailyRow, SessionRow } from './rows/row-types.ts';
import type { LogRecord } from './records/records.ts';
import type { SessionsPage, SessionSummary } from './rows/session-list.ts';
import type { SessionRowsPage, SessionRowsQuery } from './queries/recall-queries.ts';
import type { SearchInput } from './queries/ranked-search.ts';
import type { ErasureReport, RecallStore } from './storage/recall-store.ts';

/**
 * The layered memory of the Agent Memory Demo (`createRecall`, `runtime.recall`): per-user
 * sessions (titles, `updatedAt`), a daily view with per-day anchors, long-term memory as facts
 * with a rendered document and its versions, a dialogue log, keyword recall and anchor windows,
 * ranked (and hybrid) recall, the memory tools, and the chat turn (chat/chat-service.ts).
 *
 * Every call names its user; ids follow recall-ids.ts (else `InvalidInputError` `invalid_id`,
 * nothing read or written), and every read and write is confined to that user's data: another
 * user's session id finds nothing (fail closed: `[]`, `false`).
 *
 * Erasure: `eraseUser` removes everything of a user in one step of the store; while it runs,
 * calls naming that user are refused with `user_erasing` (user-gate.ts), and the user's
 * background jobs write nothing after it (their leases are gone).
 *
 * Storage: everything lives in the `store` (storage/recall-store.ts: LMDB or PostgreSQL). The
 * service does not own it: `close()` refuses new calls and waits for the running ones; then
 * close the store (and what it was opened over).
 */
export interface RecallOptions {
  /** Where everything lives: `createLmdbRecallStore`, `createPostgresRecallStore`, or yours. */
  store: RecallStore;
  /** The model. Absent: offline, with the Demo's fallback replies and titles. */
  llm?: LlmService;
  /** Wall clock, epoch ms. Default `Date.now`. */
  clock?: WallClock;
  /** IANA zone of the daily view and of row `ts`. Default: the system's. */
  timeZone?: string;
  /** LLM calls allowed per turn. Default 10. */
  maxToolIterations?: number;
  /**
   * The model that judges new facts against similar ones and extracts facts from finished
   * turns in the background (often the same service as `llm`). Default: none: keys and
   * duplicate detection alone, no extraction.
   */
  factsLlm?: LlmService;
  /**
   * Told of every failure of the facts model, as thrown, with where (`judge` or `extraction`):
   * the only place a model provider's own words go (a fact's `judgeError` and a job's
   * `lastError` keep the code and Mnemo's own sentence). Default: one `console.warn` line.
   * Whatever it throws is ignored.
   */
  onFactsError?: FactsErrorHandler;
  /**
   * Retries of a failed extraction job (jobs/job-worker.ts): `maxAttempts` (default 5), then it
   * is dead-lettered; waits `backoffMs` (default 2000) doubling per failure, at most
   * `maxBackoffMs` (default 300 000).
   */
  extraction?: ExtractionRetryOptions;
  /** o200k tokens at most in a turn's `[LONG_TERM]` section. Default 300. */
  longTermTokens?: number;
  /**
   * Rolling summaries of the sessions (provider/summarizer.ts, jobs/summary-worker.ts).
   * Default on: written by the summary model (recall's `llm`), offline extractive. A turn whose
   * session's older part (after the latest summary, before its last `keepLast` turns) passes
   * `maxTokens` queues a `summarize` job in its reply's commit; a worker summarizes it in the
   * background, never inside a turn; each later turn's context starts with the latest summary
   * as `[SUMMARY]` (before `[SESSION]`), at most `maxTokens` long. Until a session has one,
   * its context is the Demo's exactly. `false`: off (no job, no `[SUMMARY]`).
   */
  summary?: RecallSummaryOptions | false;
  /**
   * The language of the system prompt, the title prompt, offline titles and the offline
   * fallback's reply (language.ts). Default `'zh'`: the Agent Memory Demo's texts. `'auto'`:
   * each turn in the language of the user's message (Chinese when it has a Han character or
   * the turn's context says `中文`, else English).
   */
  language?: LanguageSetting;
  /**
   * Embeddings for hybrid recall (embeddings/embeddings-options.ts has every field and its
   * default). Needs a store opened with embeddings. Default: none: `search` and the ranking of
   * facts are BM25 alone (and say so), nothing is queued.
   */
  embeddings?: EmbeddingsOptions;
  /**
   * Who drains the embedding queue. Default: the service itself (a drain started with it,
   * stopped by `close`). The runtime passes its supervised drain (supervisors/recall.ts).
   *
   * @internal The runtime's plumbing; an application leaves it unset.
   */
  embeddingsDrain?: () => EmbeddingDrain | undefined;
  /**
   * What one user can make it hold or do (recall-limits.ts): `sessionsPerUser` (default
   * 10,000), `forksPerSession` (1,000), `searchTerms` (distinct terms of a `search` query,
   * 128). Past one: `RecallLimitError` (`session_limit`, `fork_limit`, `search_terms_limit`),
   * nothing written.
   */
  limits?: RecallLimits;
}

/** The turns of the `[SESSION]` window (3 rounds): never summarized by default. */
export const DEFAULT_SUMMARY_KEEP_LAST = 3;
/** A session's older part that makes a summary due, and the longest summary, in o200k tokens. */
export const DEFAULT_SUMMARY_TOKENS = 500;

/** Rolling summaries of a recall's sessions (`RecallOptions.summary`). */
export interface RecallSummaryOptions {
  /** Whole turns never summarized; default 3 (the turns of the `[SESSION]` window). */
  keepLast?: number;
  /** o200k tokens of the older part that make a summary due, and the longest summary; default 500. */
  maxTokens?: number;
  /** The model that writes summaries. Default: recall's `llm` (none: extractive). */
  llm?: LlmService;
}

/**
 * What `searchSession` takes: a keyword scan of one session (the Demo's case-folded substring
 * rule), newest hits kept.
 */
export interface SearchSessionQuery {
  /** The user. */
  userId: string;
  /** The session. */
  sessionId: string;
  /** The text to find. */
  keyword: string;
  /** Default 20, clamped to 1..200. */
  limit?: number;
}

/** What `searchDaily` takes: a keyword scan of the user's daily rows. */
export interface SearchDailyQuery {
  /** The user. */
  userId: string;
  /** The text to find. */
  keyword: string;
  /** Default 20, clamped to 1..200. */
  limit?: number;
  /** `YYYY-MM-DD` to search one day; `''` (default) or an invalid day: every day. */
  day?: string;
}

/** What `sessionWindow` takes: the rows around one row of a session. */
export interface SessionWindowQuery {
  /** The user. */
  userId: string;
  /** The session. */
  sessionId: string;
  /** The anchor; an integer or a numeric string. */
  messageId: JsonValue;
  /** Rows before the anchor; default 0, negatives count as 0. */
  before?: number;
  /** Rows after the anchor; default 0, negatives count as 0. */
  after?: number;
}

/** What `dailyWindow` takes: the rows around one row of a day. */
export interface DailyWindowQuery {
  /** The user. */
  userId: string;
  /** The anchor: the row's id within its day (an integer or a numeric string). */
  messageId: JsonValue;
  /** Rows before the anchor; default 0, negatives count as 0. */
  before?: number;
  /** Rows after the anchor; default 0, negatives count as 0. */
  after?: number;
  /** Default `''`: today, in the configured zone. */
  day?: string;
}

/** Options of `eraseUser`. */
export interface EraseUserOptions {
  /**
   * Also compact the LMDB environment once the erasure committed (`runtime.compact()`), so no
   * byte of the user stays in the free pages of `data.mdb`. A runtime's recall only (the
   * standalone `createRecall` owns no environment to swap: `invalid_option`).
   */
  compact?: boolean;
}

/** One version of the long-term document. */
export interface LongTermVersion {
  /** 1, 2, 3, ... per user. */
  version: number;
  /** The document as it was then. */
  content: string;
  /** When it was written (local wall time `YYYY-MM-DDTHH:MM:SS`). */
  ts: string;
  /** What wrote it: the `remember_note` tool, `setLongTerm`, or an import. */
  source: 'remember_note' | 'set' | 'import';
}

/** One turn of the dialogue log (the Demo's `llm_dialogue.jsonl` row), as the API gives it. */
export type DialogueLogRow = Omit<LogRecord, 'seq' | 'imported'>;

/**
 * The layered memory's calls (see `RecallOptions` for the guarantees every call keeps). Made by
 * `createRecall`; a runtime's is `runtime.recall`.
 *
 * Every call naming a user rejects with `InvalidInputError` `invalid_id` for a bad id,
 * `UserErasingError` (`user_erasing`) while that user is being erased, `RecallClosedError`
 * (`recall_closed`) after `close`, and a `StorageError` when the store fails.
 */
export interface Recall {
  /**
   * One chat turn (see `ChatInput` for every step): stores the user's row, replies (offline or with
   * the model and the memory tools), stores the reply with its daily mirror, log row and title.
   *
   * @throws `InvalidInputError` (`invalid_id`, `invalid_message`, `invalid_option` for a bad
   * `idempotencyKey`), `RecallLimitError` `session_limit`, `TurnInterruptedError`
   * (`turn_interrupted`) when `signal` fires first, `LlmError` from the model, `StaleWriteError`
   * (`write_stale`) when the user was erased meanwhile.
   */
  chat(input: ChatInput): Promise<ChatResult>;
  /** `chat`, streamed (chat-stream.ts): deltas, tool calls and results, then `done` with `chat`'s result. */
  chatStream(input: ChatInput): AsyncIterableIterator<ChatStreamEvent>;
  /**
   * Stores a turn whose reply came from elsewhere (another framework's model call, such as the
   * AI SDK middleware) where `chat` stores its own: both rows, their daily rows, the log, the
   * extraction job and the listing, in one commit (chat/record-turn.ts). No model is called.
   */
  recordTurn(input: RecordTurnInput): Promise<RecordTurnResult>;
  /**
   * The session's rolling summaries (recall's `summary` option), oldest first, each with its
   * provenance (`from`..`to`: the record ids it covers, the rows' `messageId` in sessions Mnemo
   * wrote; `model`, `at`, `previous`, `method`); the last is what a turn sends. `[]`: none yet.
   */
  summaries(userId: string, sessionId: string): Promise<SummaryRecord[]>;
  /** Resolves when no summary job is due (at once with summaries off). */
  summaryIdle(): Promise<void>;
  /** Listed sessions, newest `updatedAt` first (ties in creation order); `[]` for an unknown user. */
  listSessions(userId: string): Promise<SessionSummary[]>;
  /**
   * `listSessions` a page at a time: at most `limit` (default 100, 1..500) after `cursor` (a
   * previous page's `nextCursor`, opaque; another string: `invalid_cursor`).
   */
  listSessionsPage(userId: string, page?: { limit?: number; cursor?: string }): Promise<SessionsPage>;
  /** A fresh session id (12 lowercase hex). Nothing is stored until its first chat. */
  createSession(userId: string): Promise<string>;
  /** The session's rows, chronological; `[]` when unknown. */
  sessionMessages(userId: string, sessionId: string): Promise<SessionRow[]>;
  /**
   * `sessionMessages` a page at a time, by record id (recall-queries.ts): the rows after
   * `after`, or the last ones before `before` (neither: the newest), at most `limit` (default
   * 100, 1..500), chronological, with the first one's record id and whether more remain.
   */
  sessionMessagesPage(userId: string, sessionId: string, query?: SessionRowsQuery): Promise<SessionRowsPage>;
  /**
   * Branches a session at one of its rows ("edit and resend"): the new session (`newSessionId`,
   * default a fresh id) sees the source's rows up to and including `messageId`, then its own;
   * the source is untouched and the prefix is shared, not copied (MessageLog `fork`). The new
   * session is listed at once with the source's title. `ForkError` (`fork_target_exists`,
   * `fork_point_missing`) when the new id is taken or the row does not exist.
   */
  forkSession(userId: string, sessionId: string, messageId: number, newSessionId?: string): Promise<string>;
  /**
   * Deletes the session, its summaries, its daily rows, its log rows and its index entry. False
   * when there was none. `ifLastId` (the retention sweep's): only if the transcript's last id is
   * still that; false, and nothing deleted, when it is not.
   */
  deleteSession(userId: string, sessionId: string, options?: { ifLastId?: number }): Promise<boolean>;
  /**
   * Keyword recall in one session: rows containing `keyword` (case-folded), the newest `limit`,
   * oldest first.
   */
  searchSession(query: SearchSessionQuery): Promise<SessionRow[]>;
  /**
   * Keyword recall in the daily view: rows containing `keyword`, the newest `limit`, oldest first;
   * each hit says its day.
   */
  searchDaily(query: SearchDailyQuery): Promise<DailyRow[]>;
  /** The rows around an anchor of a session; `[]` when the anchor is not one of its rows. */
  sessionWindow(query: SessionWindowQuery): Promise<SessionRow[]>;
  /**
   * Ranked recall across every session, day and long-term memory of the user: BM25
   * (search/ranked-search.ts), or hybrid with embeddings (embeddings/hybrid-search.ts):
   * `{items, ranking, pendingEmbeddings, embeddingsError?}` (embeddings/search-result.ts).
   */
  search(query: SearchInput): Promise<SearchResult>;
  /** The embedding queue and drain (or `{configured: false}`); with a user, that user's pending items too. */
  embeddingsStatus(userId?: string): Promise<EmbeddingsStatus>;
  /** Resolves when no embedding is due (at once without embeddings). */
  embeddingsIdle(): Promise<void>;
  /** Rebuilds the user's ranked index from their rows; returns the rows indexed. */
  rebuildSearchIndex(userId: string): Promise<number>;
  /**
   * The rows around an anchor of one day; `[]` when the anchor is not one of its rows (or the day
   * is invalid).
   */
  dailyWindow(query: DailyWindowQuery): Promise<DailyRow[]>;
  /** One day's rows (default today), chronological. */
  dailyMessages(userId: string, day?: string): Promise<DailyRow[]>;
  /** The long-term document, `''` when none. */
  getLongTerm(userId: string): Promise<string>;
  /** Replaces the document; blank or unchanged: no-op, `null`. */
  setLongTerm(userId: string, document: string): Promise<LongTermVersion | null>;
  /** Drops the newest version; returns the document now current, `null` when there was none. */
  undoLongTerm(userId: string): Promise<string | null>;
  /** Every version of the long-term document, oldest first. */
  longTermHistory(userId: string): Promise<LongTermVersion[]>;
  /** Current long-term facts, or those valid at `asOf` (ISO 8601): what was believed then. */
  listFacts(userId: string, options?: { asOf?: string }): Promise<FactEntry[]>;
  /** Every entry, superseded and forgotten ones included, in creation order. */
  factHistory(userId: string): Promise<FactEntry[]>;
  /** Stores a fact (key: supersedes the key's current entry; a near-duplicate is not stored twice). */
  remember(userId: string, fact: RememberInput): Promise<FactWrite>;
  /** Changes a current entry; `version` must be its version (else `FactConflictError`, `memory_conflict`). */
  updateFact(userId: string, id: string, change: { text: string; version: number }): Promise<FactWrite>;
  /** Ends a current entry's validity (it stays in the history). `FactNotFoundError` when none is current. */
  forgetFact(userId: string, id: string, options?: { version?: number }): Promise<FactEntry>;
  /** The current entries most relevant to `query`, within a token budget (what a turn injects). */
  rankFacts(userId: string, query: string, options?: RankOptions): Promise<RankedFact[]>;
  /** Resolves when background fact extraction has nothing due (or waits on a failing model). */
  extractionIdle(): Promise<void>;
  /** Extraction jobs queued and retrying, and the dead-lettered ones (failed every attempt). */
  extractionStatus(): Promise<ExtractionStatus>;
  /**
   * Puts the dead-lettered extraction jobs (of `userId`, else every user's) back in the queue
   * with their attempts reset (after the model is fixed, say) and starts the drain. Resolves
   * with how many; 0 without a facts model.
   */
  retryDeadExtractions(userId?: string): Promise<number>;
  /** The dialogue log, in turn order; one session's when `sessionId` is given. */
  dialogueLog(userId: string, sessionId?: string): Promise<DialogueLogRow[]>;
  /** The memory tools bound to one user and session (what a turn gives its agent). */
  memoryTools(userId: string, sessionId: string): Tool[];
  /**
   * Imports an Agent Memory Demo data folder (`root/{user}/...`) as it is: ids, titles, anchors and
   * raw JSON kept.
   *
   * @throws `InvalidInputError` `invalid_option` when a user already has memory here (an import
   * never merges), `invalid_message` for a malformed file (naming file and line).
   */
  importDemoFolder(root: string, options?: ImportOptions): Promise<ImportReport>;
  /**
   * Writes users' memory as an Agent Memory Demo data folder under `root`; an import followed by an
   * export gives back the same JSON.
   *
   * @throws `InvalidInputError` `invalid_option` when a user's folder exists and is not empty,
   * `invalid_id` for an id too long for a file name.
   */
  exportDemoFolder(root: string, options?: ExportOptions): Promise<ExportReport>;
  /**
   * Erases everything of the user in one step of the store: sessions and their summaries, daily
   * rows, long-term memory, facts and versions, the dialogue log, index, vectors, jobs and titles.
   * Waits for the user's running calls; calls naming the user meanwhile (and folder
   * imports/exports) are refused with `user_erasing`. A running background job of the user is
   * aborted and, whenever it answers, writes nothing. `{ compact: true }`: then compact the
   * storage so no byte of the user stays in it (a runtime's recall on LMDB: `EraseUserOptions`).
   */
  eraseUser(userId: string, options?: EraseUserOptions): Promise<ErasureReport>;
  /** @deprecated Use `sessionMessages`. */
  getSessionMessages(userId: string, sessionId: string): Promise<SessionRow[]>;
  /** @deprecated Use `listFacts`. */
  listMemory(userId: string, options?: { asOf?: string }): Promise<FactEntry[]>;
  /** @deprecated Use `factHistory`. */
  memoryHistory(userId: string): Promise<FactEntry[]>;
  /** @deprecated Use `updateFact`. */
  updateMemory(userId: string, id: string, change: { text: string; version: number }): Promise<FactWrite>;
  /** @deprecated Use `forgetFact`. */
  forgetMemory(userId: string, id: string, options?: { version?: number }): Promise<FactEntry>;
  /** @deprecated Use `rankFacts`. */
  rankMemory(userId: string, query: string, options?: RankOptions): Promise<RankedFact[]>;
  /**
   * Refuses new calls (`recall_closed`), waits for the running ones and the background work it
   * owns. The store stays open: close it after.
   */
  close(): Promise<void>;
}

/** The deprecated names of `Recall`'s methods, each with the name it now has (kept for one minor version). */
export const DEPRECATED_RECALL_METHODS = {
  getSessionMessages: 'sessionMessages',
  listMemory: 'listFacts',
  memoryHistory: 'factHistory',
  updateMemory: 'updateFact',
  forgetMemory: 'forgetFact',
  rankMemory: 'rankFacts',
} as const satisfies Partial<Record<keyof Recall, keyof Recall>>;
