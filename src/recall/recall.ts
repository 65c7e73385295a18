import { InvalidInputError, MnemoError } from '../errors.ts';
import { assertLanguage, DEFAULT_LANGUAGE, type Language } from '../language.ts';
import { RecallClosedError } from './recall-errors.ts';
import type { Tool } from '../kernel/tool.ts';
import type { LlmService } from '../llm/llm-service.ts';
import type { MessageLog } from '../memory/contract/message-log.ts';
import { hasConditionalClear } from '../memory/contract/conditional-clear.ts';
import type { JsonValue } from '../message.ts';
import { MESSAGES_DB } from '../memory/lmdb/lmdb-table.ts';
import { createSummarizer } from '../provider/summarizer.ts';
import { summaryConversationId } from '../provider/summary-record.ts';
import { isCalendarDay } from './store/calendar-day.ts';
import { chatTurn, turnTools, type ChatInput, type ChatResult } from './chat/chat-service.ts';
import { chatStream } from './chat/chat-stream.ts';
import { recordTurn, type RecordTurnInput, type RecordTurnResult } from './chat/record-turn.ts';
import type { ChatStreamEvent } from './chat/chat-service.ts';
import { forgetMirror, laggingSessions, repairLaggingSessions, startMirror } from './store/daily-mirror.ts';
import { ForkError } from '../memory/contract/fork.ts';
import { readDay, removeSessionDailyRows } from './store/daily-store.ts';
import { removeSessionDocs } from './store/session-docs.ts';
import { exportDemoFolder, type ExportOptions, type ExportReport } from './demo-folder/demo-export.ts';
import { importDemoFolder, type ImportOptions, type ImportReport } from './demo-folder/demo-import.ts';
import { readLog, removeSessionLog, toLogRow, type DialogueLogRow } from './store/dialogue-log.ts';
import { removeSessionTurnKeys } from './chat/turn-keys.ts';
import { systemWallClock, type WallClock } from '../wall-clock.ts';
import { localTimeIn, systemLocalTime } from './store/local-time.ts';
import { longTermHistory, type LongTermVersion } from './store/long-term-store.ts';
import type { FactEntry, FactWrite } from './facts/fact-entry.ts';
import { createFactStore } from './facts/fact-store.ts';
import {
  forgetFact,
  listFactHistory,
  listFacts,
  readLongTerm,
  rememberFact,
  undoDocument,
  updateFact,
  writeDocument,
  type RememberInput,
} from './facts/facts-service.ts';
import { nextQueued } from './facts/fact-extraction.ts';
import {
  checkRetryOptions,
  createExtractionWorker,
  extractionStatus,
  requeueDeadTx,
  type ExtractionRetryOptions,
  type ExtractionStatus,
  type ExtractionWorker,
} from './facts/extraction-worker.ts';
import { DEFAULT_LONG_TERM_TOKENS, rankFacts, type RankedFact, type RankOptions } from './facts/rank-facts.ts';
import type { DailyRow, MemoryRow } from './store/memory-row.ts';
import { commit, commitRemoval, openRecallDbs, type RecallEnvironment } from './store/recall-dbs.ts';
import { localNow, type FactsErrorHandler, type RecallDeps } from './recall-deps.ts';
import { assertSessionId, assertUserId, newSessionId, sessionConversationId } from './recall-ids.ts';
import { assertRoomForFork, assertRoomForSession, assertSearchTerms, resolveRecallLimits, type RecallLimits } from './recall-limits.ts';
import { eraseUserData, type EraseUserOptions, type ErasureReport } from './store/user-erasure.ts';
import { UserGate } from './user-gate.ts';
import { withSpan } from '../telemetry/tracing.ts';
import { withTurnSpan } from '../telemetry/gen-ai.ts';
import { tracedHits } from './search/traced-hits.ts';
import {
  dailyWindowRows,
  searchDailyRows,
  pageLimit,
  searchSessionRows,
  sessionRows,
  sessionRowsPage,
  type SessionRowsPage,
  type SessionRowsQuery,
  sessionWindowRows,
} from './search/recall-queries.ts';
import type { SearchPool } from './search/search-pool.ts';
import { DEFAULT_RANK_POOL_THRESHOLD, type SearchInput } from './search/ranked-search.ts';
import { rebuildUserIndex } from './search/rebuild.ts';
import { resolveEmbeddingsOptions, type EmbeddingsOptions } from './embeddings/embeddings-options.ts';
import { createEmbeddingsClient } from './embeddings/embeddings-client.ts';
import { createEmbeddingDrain, type EmbeddingDrain } from './embeddings/embed-drain.ts';
import { searchHybrid } from './embeddings/hybrid-search.ts';
import type { SearchResult } from './embeddings/search-result.ts';
import { factSemantic } from './embeddings/fact-semantic.ts';
import { VectorCache } from './embeddings/vector-cache.ts';
import { embeddingsStatus, type EmbeddingsStatus } from './embeddings/embeddings-status.ts';
import { openRawText } from './store/recall-dbs.ts';
import {
  cutShortSessions,
  listCutShortSessions,
  listSessions,
  listSessionsPage,
  registerSession,
  type SessionsPage,
  removeSession,
  sessionEntry,
  touchSession,
  type SessionSummary,
} from './store/sessions-index.ts';

/**
 * The layered memory of the Agent Memory Demo on Mnemo's storage: per-user sessions (titles,
 * `updated_at`), a daily view with per-day anchors, long-term memory with undo, a dialogue log,
 * keyword recall and anchor windows, the memory tools, and the chat turn (chat-service.ts).
 *
 * Every call names its user; ids follow recall-ids.ts (else `InvalidInputError`
 * `invalid_id`, nothing read or written), and every read and write is confined to that user's
 * keys: another user's session id finds nothing (fail closed: `[]`, `false`).
 *
 * Erasure: `eraseUser` removes everything of a user (store/user-erasure.ts); while it runs,
 * calls naming that user are refused with `user_erasing`, and the user's background jobs lose
 * their leases: nothing they write after it began is kept (user-gate.ts).
 *
 * Storage: session transcripts are conversations `session/{userId}/{sessionId}` of `memory`;
 * the rest lives in named databases of `env` (see recall-dbs.ts). The service owns neither:
 * `close()` refuses new calls and waits for the running ones; then close the pool, the
 * memory and the environment, in that order.
 */
export interface RecallOptions {
  /** Where session transcripts live (the runtime's `memory`, or `createLmdbStore`). */
  memory: MessageLog;
  /** The LMDB environment for the rest: `{root, path, guardFailedCommits?}`. */
  env: RecallEnvironment;
  /**
   * True when `memory` is the LMDB store of this same environment (records in its `messages`
   * db), so the pool's workers can scan sessions directly, and a turn's recall writes commit
   * with its session rows (two commits per offline turn). Default false: session scans run on
   * the main thread, through `memory`, and a turn's recall writes commit on their own.
   */
  memoryInEnv?: boolean;
  /** The model. Absent: offline, with the demo's fallback replies and titles. */
  llm?: LlmService;
  /** Wall clock, epoch ms. Default `Date.now`. */
  clock?: WallClock;
  /** IANA zone of the daily view and of row `ts`. Default: the system's. */
  timeZone?: string;
  /** Runs large keyword scans off the event loop. Default: none (every scan inline). */
  pool?: SearchPool;
  /** Rows in scope above which a scan goes to the pool. Default 20 000. */
  poolThreshold?: number;
  /** LLM calls allowed per turn. Default 10. */
  maxToolIterations?: number;
  /** Postings a ranked query reads above which it goes to the pool. Default 200 000. */
  rankPoolThreshold?: number;
  /**
   * The model that judges new facts against similar ones and extracts facts from finished
   * turns in the background (often the same service as `llm`). Default: none: keys and
   * duplicate detection alone, no extraction.
   */
  factsLlm?: LlmService;
  /**
   * Told of every failure of the facts model, as thrown, with where (`judge` or `extraction`):
   * the only place a model provider's own words go (a fact's `judgeError` and a job's
   * `last_error` keep the code and Mnemo's own sentence). Default: one `console.warn` line.
   * Whatever it throws is ignored.
   */
  onFactsError?: FactsErrorHandler;
  /**
   * Retries of a failed extraction job (facts/extraction-worker.ts): `maxAttempts` (default 5),
   * then it is dead-lettered; waits `backoffMs` (default 2000) doubling per failure, at most
   * `maxBackoffMs` (default 300 000).
   */
  extraction?: ExtractionRetryOptions;
  /** o200k tokens at most in a turn's `[LONG_TERM]` section. Default 300. */
  longTermTokens?: number;
  /**
   * Rolling summaries of the sessions (provider/summarizer.ts). Default off (the Demo's
   * context, unchanged). On: after each turn's reply is stored, a background check summarizes
   * the session's older part once it passes `maxTokens`, and each turn's context starts with
   * the latest summary as `[SUMMARY]` (before `[SESSION]`).
   */
  summary?: RecallSummaryOptions | false;
  /**
   * The language of the system prompt, the title prompt, offline titles and the offline
   * fallback's reply (language.ts). Default `'zh'`: the Agent Memory Demo's texts.
   */
  language?: Language;
  /**
   * Embeddings for hybrid recall (embeddings/embeddings-options.ts has every field and its
   * default). Default: none: `search` and the ranking of facts are BM25 alone (and say so),
   * nothing is queued. Set: every row written (and, at a user's first query, every row written
   * before) is queued in LMDB with its row and embedded in the background; `search` and the
   * facts' ranking fuse BM25 with vector similarity (RRF).
   */
  embeddings?: EmbeddingsOptions;
  /**
   * Who drains the embedding queue. Default: the service itself (a drain started with it,
   * stopped by `close`). The runtime passes its supervised drain (supervisors/recall.ts).
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

export interface RecallSummaryOptions {
  /** Whole turns never summarized; default 4. */
  keepLast?: number;
  /** Budget of the summarized part and the longest summary; default 2000. */
  maxTokens?: number;
  /** The model that writes summaries. Default: recall's `llm` (none: extractive). */
  llm?: LlmService;
}

export interface SearchSessionQuery {
  userId: string;
  sessionId: string;
  keyword: string;
  /** Default 20, clamped to 1..200. */
  limit?: number;
}

export interface SearchDailyQuery {
  userId: string;
  keyword: string;
  /** Default 20, clamped to 1..200. */
  limit?: number;
  /** `YYYY-MM-DD` to search one day; `''` (default) or an invalid day: every day. */
  day?: string;
}

export interface SessionWindowQuery {
  userId: string;
  sessionId: string;
  /** The anchor; an integer or a numeric string. */
  messageId: JsonValue;
  /** Rows before the anchor; default 0, negatives count as 0. */
  before?: number;
  after?: number;
}

export interface DailyWindowQuery {
  userId: string;
  messageId: JsonValue;
  before?: number;
  after?: number;
  /** Default `''`: today, in the configured zone. */
  day?: string;
}

export interface Recall {
  chat(input: ChatInput): Promise<ChatResult>;
  /** `chat`, streamed (chat-stream.ts): deltas, tool calls and results, then `done` with `chat`'s result. */
  chatStream(input: ChatInput): AsyncIterableIterator<ChatStreamEvent>;
  /** Stores a turn whose reply came from elsewhere (another framework's model call) where `chat` stores its own (chat/record-turn.ts). */
  recordTurn(input: RecordTurnInput): Promise<RecordTurnResult>;
  /** Listed sessions, newest `updated_at` first (ties in creation order); `[]` for an unknown user. */
  listSessions(userId: string): Promise<SessionSummary[]>;
  /** A fresh session id (12 lowercase hex). Nothing is stored until its first chat. */
  createSession(userId: string): Promise<string>;
  /** The session's rows, chronological; `[]` when unknown. */
  getSessionMessages(userId: string, sessionId: string): Promise<MemoryRow[]>;
  /**
   * `listSessions` a page at a time: at most `limit` (default 100, 1..500) after `cursor` (a
   * previous page's `nextCursor`, opaque; another string: `invalid_cursor`).
   */
  listSessionsPage(userId: string, page?: { limit?: number; cursor?: string }): Promise<SessionsPage>;
  /**
   * `getSessionMessages` a page at a time, by record id (recall-queries.ts): the rows after
   * `after`, or the last ones before `before` (neither: the newest), at most `limit` (default
   * 100, 1..500), chronological, with the first one's record id and whether more remain.
   */
  sessionRowsPage(userId: string, sessionId: string, query?: SessionRowsQuery): Promise<SessionRowsPage>;
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
   * still that (its clear is conditional, in the conversation's writer: conditional-clear.ts);
   * false, and nothing deleted, when it is not. Needs a memory with `clearIfLastId`
   * (`runtime.memory`, `createLmdbStore`, `createInMemoryStore`), else `invalid_option`.
   */
  deleteSession(userId: string, sessionId: string, options?: { ifLastId?: number }): Promise<boolean>;
  searchSession(query: SearchSessionQuery): Promise<MemoryRow[]>;
  searchDaily(query: SearchDailyQuery): Promise<DailyRow[]>;
  sessionWindow(query: SessionWindowQuery): Promise<MemoryRow[]>;
  /**
   * Ranked recall across every session, day and long-term memory of the user: BM25
   * (search/ranked-search.ts), or hybrid with embeddings (embeddings/hybrid-search.ts). The
   * hits say how they were ranked (`ranking`, `pendingEmbeddings`, `embeddingsError`:
   * embeddings/search-result.ts).
   */
  search(query: SearchInput): Promise<SearchResult>;
  /** The embedding queue and drain (or `{configured: false}`); with a user, that user's pending items too. */
  embeddingsStatus(userId?: string): Promise<EmbeddingsStatus>;
  /** Resolves when the embedding queue is empty (at once without embeddings). */
  embeddingsIdle(): Promise<void>;
  /** Rebuilds the user's ranked index from their rows; returns the rows indexed (search/rebuild.ts). */
  rebuildSearchIndex(userId: string): Promise<number>;
  dailyWindow(query: DailyWindowQuery): Promise<DailyRow[]>;
  /** One day's rows (default today), chronological. */
  dailyMessages(userId: string, day?: string): Promise<DailyRow[]>;
  /** The long-term document, `''` when none. */
  getLongTerm(userId: string): Promise<string>;
  /** Replaces the document; blank or unchanged: no-op, `null`. */
  setLongTerm(userId: string, document: string): Promise<LongTermVersion | null>;
  /** Drops the newest version; returns the document now current, `null` when there was none. */
  undoLongTerm(userId: string): Promise<string | null>;
  longTermHistory(userId: string): Promise<LongTermVersion[]>;
  /** Current long-term facts, or those valid at `asOf` (ISO 8601): what was believed then. */
  listMemory(userId: string, options?: { asOf?: string }): Promise<FactEntry[]>;
  /** Every entry, superseded and forgotten ones included, in creation order. */
  memoryHistory(userId: string): Promise<FactEntry[]>;
  /** Stores a fact (key: supersedes the key's current entry; a near-duplicate is not stored twice). */
  remember(userId: string, fact: RememberInput): Promise<FactWrite>;
  /** Changes a current entry; `version` must be its version (else `FactConflictError`, `memory_conflict`). */
  updateMemory(userId: string, id: string, change: { text: string; version: number }): Promise<FactWrite>;
  /** Ends a current entry's validity (it stays in the history). `FactNotFoundError` when none is current. */
  forgetMemory(userId: string, id: string, options?: { version?: number }): Promise<FactEntry>;
  /** The current entries most relevant to `query`, within a token budget (what a turn injects). */
  rankMemory(userId: string, query: string, options?: RankOptions): Promise<RankedFact[]>;
  /** Resolves when background fact extraction has nothing left to do (or waits on a failing model). */
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
  /** The six memory tools bound to one user and session (what a turn gives its agent). */
  memoryTools(userId: string, sessionId: string): Tool[];
  importDemoFolder(root: string, options?: ImportOptions): Promise<ImportReport>;
  exportDemoFolder(root: string, options?: ExportOptions): Promise<ExportReport>;
  /**
   * Erases everything of the user (user-erasure.ts): sessions and their summaries, daily rows,
   * long-term memory and its versions, the dialogue log, index and titles, and every other
   * db of recall's schema, in one LMDB transaction. Waits for the user's running calls; calls
   * naming the user meanwhile (and folder imports/exports) are refused with `user_erasing`.
   * The user's queued fact extractions and embeddings are erased with the rest; a running
   * extraction is aborted and an embedding batch in flight is not waited for: whenever either
   * answers, it writes nothing of the user (user-gate.ts, embeddings/embed-drain.ts).
   * `{ compact: true }`: then compact the environment (a runtime's recall only; see
   * `EraseUserOptions`).
   */
  eraseUser(userId: string, options?: EraseUserOptions): Promise<ErasureReport>;
  close(): Promise<void>;
}

export const DEFAULT_POOL_THRESHOLD = 20_000;

export function createRecall(options: RecallOptions): Recall {
  const localTime = options.timeZone === undefined ? systemLocalTime() : localTimeIn(options.timeZone);
  const maxToolIterations = options.maxToolIterations ?? 10;
  const poolThreshold = options.poolThreshold ?? DEFAULT_POOL_THRESHOLD;
  const longTermTokens = options.longTermTokens ?? DEFAULT_LONG_TERM_TOKENS;
  if (!Number.isSafeInteger(longTermTokens) || longTermTokens < 0) {
    throw new InvalidInputError('invalid_option', `longTermTokens must be an integer >= 0, got ${longTermTokens}`);
  }
  const dbs0 = openRecallDbs(options.env);
  if (!Number.isFinite(poolThreshold) || poolThreshold < 0) {
    throw new InvalidInputError('invalid_option', `poolThreshold must be a number >= 0, got ${poolThreshold}`);
  }
  const summary = options.summary === undefined || options.summary === false ? undefined : options.summary;
  const summaryLlm = summary?.llm ?? options.llm;
  const language = assertLanguage(options.language ?? DEFAULT_LANGUAGE, 'language');
  const summarizer =
    summary === undefined
      ? undefined
      : createSummarizer(options.memory, {
          ...(summary.keepLast === undefined ? {} : { keepLast: summary.keepLast }),
          ...(summary.maxTokens === undefined ? {} : { maxTokens: summary.maxTokens }),
          ...(summaryLlm === undefined ? {} : { llm: summaryLlm }),
          ...(options.clock === undefined ? {} : { clock: options.clock }),
          language,
        });
  const retry = checkRetryOptions(options.extraction);
  const limits = resolveRecallLimits(options.limits);
  const embeddingsOptions = options.embeddings === undefined ? undefined : resolveEmbeddingsOptions(options.embeddings);
  const deps: RecallDeps = {
    memory: options.memory,
    dbs: dbs0,
    llm: options.llm,
    clock: options.clock ?? systemWallClock,
    localTime,
    pool: options.pool,
    poolThreshold,
    sessionScan: options.memoryInEnv
      ? { json: options.env.root.openDB(MESSAGES_DB, { encoding: 'json' }), text: openRawText(options.env.root, MESSAGES_DB) }
      : undefined,
    journal: options.memoryInEnv ? options.env.ahead : undefined,
    sharedCommits: options.memoryInEnv ?? false,
    maxToolIterations,
    facts: createFactStore(dbs0),
    factsLlm: options.factsLlm,
    onFactsError: guardedHandler(options.onFactsError ?? warnFactsError),
    longTermTokens,
    kickExtraction: undefined,
    summarizer,
    language,
    embeddings: undefined,
    limits,
  };
  const { dbs } = deps;
  // Embeddings: writes queue themselves from now on; the drain is the runtime's or our own.
  let ownDrain: EmbeddingDrain | undefined;
  if (embeddingsOptions !== undefined) {
    const client = createEmbeddingsClient(embeddingsOptions);
    const drain = options.embeddingsDrain ?? (() => (ownDrain ??= createEmbeddingDrain({ env: options.env, embeddings: embeddingsOptions, client })));
    drain();
    deps.embeddings = { options: embeddingsOptions, client, drain, cache: new VectorCache() };
    dbs.embed.enabled = true;
    dbs.embed.onQueued = () => drain()?.kick();
    deps.facts.semantic = factSemantic(dbs, client, embeddingsOptions.queryTimeoutMs);
  }
  const rankPoolThreshold = options.rankPoolThreshold ?? DEFAULT_RANK_POOL_THRESHOLD;

  let closed = false;
  const running = new Set<Promise<unknown>>();
  const track = <T>(work: () => Promise<T>): Promise<T> => {
    if (closed) return Promise.reject(new RecallClosedError());
    const p = Promise.resolve().then(work);
    const tracked = p.then(
      () => undefined,
      () => undefined,
    );
    running.add(tracked);
    void tracked.then(() => running.delete(tracked));
    return p;
  };
  // A previous process may have died in a session's first turn (read now, before a turn of this
  // one can register a session): list those sessions. Best effort: a failure leaves the marks
  // for the next start.
  const cutShort = cutShortSessions(dbs);
  const repaired = cutShort.length === 0 ? undefined : track(() => listCutShortSessions(deps, cutShort)).catch(() => undefined);
  // It may also have died between a turn's session rows and their daily rows: mirror those
  // now, reading only the sessions marked as having rows in flight (daily-mirror.ts). Every
  // call waits for it, so no reader sees the gap and no turn races the repair. Best effort: a
  // failure leaves the marks, and the next turn of such a session catches up anyway.
  const lagging = laggingSessions(dbs);
  const mirrored = lagging.length === 0 ? undefined : track(() => repairLaggingSessions(deps, lagging)).catch(() => undefined);
  const guarded = <T>(work: () => Promise<T>): Promise<T> =>
    mirrored === undefined ? track(work) : track(async () => {
      await mirrored;
      return work();
    });
  // Every call naming a user runs under the gate, so an erasure can wait for them and refuse
  // new ones; background jobs of a user hold its leases, which the erasure revokes.
  const gate = new UserGate();

  // Fact extraction runs in the background; a previous process may have left turns queued.
  let extraction: ExtractionWorker | undefined;
  if (options.factsLlm !== undefined) {
    const worker = createExtractionWorker(deps, options.factsLlm, guarded, gate, retry);
    extraction = worker;
    deps.kickExtraction = () => worker.kick();
    if (nextQueued(dbs) !== undefined) worker.kick();
  }
  const user = <T>(userId: unknown, work: (u: string) => Promise<T>): Promise<T> =>
    guarded(async () => {
      const u = assertUserId(userId);
      return gate.forUser(u, () => work(u));
    });

  return {
    chat: (input) => withTurnSpan(input?.sessionId, () => user(input?.userId, () => chatTurn(deps, input))),

    recordTurn: (input) => user(input?.userId, () => recordTurn(deps, input)),

    chatStream: (input) => chatStream(deps, input, (work) => withTurnSpan(input?.sessionId, () => user(input?.userId, () => work()))),

    listSessions: (userId) =>
      user(userId, async (u) => {
        await repaired;
        return listSessions(dbs, u, localNow(deps).ts, deps.language);
      }),

    createSession: (userId) => user(userId, async () => newSessionId()),

    getSessionMessages: (userId, sessionId) =>
      user(userId, (u) => sessionRows(deps, u, assertSessionId(sessionId))),

    listSessionsPage: (userId, page = {}) =>
      user(userId, async (u) => {
        await repaired;
        if (page.cursor !== undefined && typeof page.cursor !== 'string') {
          throw new InvalidInputError('invalid_cursor', 'cursor must be a string', { field: 'cursor' });
        }
        return listSessionsPage(dbs, u, localNow(deps).ts, deps.language, pageLimit(page.limit), page.cursor);
      }),

    sessionRowsPage: (userId, sessionId, query = {}) => user(userId, (u) => sessionRowsPage(deps, u, assertSessionId(sessionId), query)),

    forkSession: (userId, sessionId, messageId, targetId) =>
      user(userId, async (u) => {
        const s = assertSessionId(sessionId);
        const target = targetId === undefined ? newSessionId() : assertSessionId(targetId);
        if (sessionEntry(dbs, u, target) !== undefined) {
          throw new ForkError('fork_target_exists', `session ${target} already exists`, { sessionId: target });
        }
        assertRoomForSession(dbs, u, limits.sessionsPerUser);
        assertRoomForFork(dbs, u, s, limits.forksPerSession);
        await deps.memory.fork(sessionConversationId(u, s), messageId, sessionConversationId(u, target));
        const now = localNow(deps).ts;
        await commit(dbs, () => {
          registerSession(dbs, u, target, now);
          // The prefix is the source's rows, already in the daily view: mirror only what comes after.
          startMirror(dbs, u, target, messageId);
          const entry = touchSession(dbs, u, target, sessionEntry(dbs, u, s)?.title || '新对话', now);
          dbs.sessions.put([u, target], { ...entry, fork: { session_id: s, message_id: messageId } });
        });
        return target;
      }),

    deleteSession: (userId, sessionId, deleteOptions) =>
      user(userId, async (u) => {
        const s = assertSessionId(sessionId);
        const ifLastId = deleteOptions?.ifLastId;
        const memory = deps.memory;
        const conditional = hasConditionalClear(memory) ? memory : undefined;
        if (ifLastId !== undefined && conditional === undefined) {
          throw new InvalidInputError('invalid_option', 'ifLastId needs a memory with clearIfLastId', { option: 'ifLastId' });
        }
        const conversationId = sessionConversationId(u, s);
        const existed = sessionEntry(dbs, u, s) !== undefined || (await memory.lastId(conversationId)) > 0;
        // The transcript first: if the index step fails, a retry finds the entry and finishes.
        await deps.summarizer?.settled(conversationId);
        if (ifLastId === undefined || conditional === undefined) await memory.clear(conversationId);
        else if (!(await conditional.clearIfLastId(conversationId, ifLastId))) return false;
        await deps.memory.clear(summaryConversationId(conversationId));
        const removedRows = await commitRemoval(dbs, () => {
          const entry = sessionEntry(dbs, u, s);
          if (entry !== undefined) removeSessionDocs(dbs, u, entry.order);
          const n = removeSessionDailyRows(dbs, u, s);
          forgetMirror(dbs, u, s);
          removeSessionLog(dbs, u, s);
          removeSessionTurnKeys(dbs, u, s);
          removeSession(dbs, u, s);
          return n;
        });
        return existed || removedRows > 0;
      }),

    searchSession: (q) =>
      user(q?.userId, (u) => searchSessionRows(deps, u, assertSessionId(q.sessionId), str(q.keyword), q.limit ?? 20)),

    searchDaily: (q) =>
      user(q?.userId, (u) => searchDailyRows(deps, u, str(q.keyword), q.limit ?? 20, str(q.day))),

    sessionWindow: (q) =>
      user(q?.userId, (u) => sessionWindowRows(deps, u, assertSessionId(q.sessionId), q.messageId, q.before ?? 0, q.after ?? 0)),

    search: (q) =>
      user(q?.userId, async () => {
        assertSearchTerms(q.query, limits.searchTerms);
        return withSpan('mnemo.search', {}, async (span) => tracedHits(span, await searchHybrid(deps, q, rankPoolThreshold)));
      }),

    embeddingsStatus: (userId) =>
      userId === undefined ? guarded(async () => embeddingsStatus(deps)) : user(userId, async (u) => embeddingsStatus(deps, u)),

    embeddingsIdle: () => track(async () => deps.embeddings?.drain()?.idle()),

    rebuildSearchIndex: (userId) => user(userId, (u) => rebuildUserIndex(deps, u)),

    dailyWindow: (q) =>
      user(q?.userId, (u) => dailyWindowRows(deps, u, q.messageId, q.before ?? 0, q.after ?? 0, str(q.day))),

    dailyMessages: (userId, day = '') =>
      user(userId, async (u) => {
        const d = day.trim() === '' ? localNow(deps).day : day.trim();
        return isCalendarDay(d) ? readDay(dbs, u, d) : [];
      }),

    getLongTerm: (userId) => user(userId, (u) => readLongTerm(deps, u)),

    setLongTerm: (userId, document) =>
      user(userId, async (u) => {
        if (typeof document !== 'string') {
          throw new InvalidInputError('invalid_message', 'the long-term document must be a string', { field: 'document' });
        }
        return writeDocument(deps, u, document, 'set');
      }),

    undoLongTerm: (userId) => user(userId, (u) => undoDocument(deps, u)),

    listMemory: (userId, listOptions) => user(userId, (u) => listFacts(deps, u, listOptions?.asOf)),

    memoryHistory: (userId) => user(userId, (u) => listFactHistory(deps, u)),

    remember: (userId, fact) => user(userId, (u) => rememberFact(deps, u, fact)),

    updateMemory: (userId, id, change) => user(userId, (u) => updateFact(deps, u, id, change)),

    forgetMemory: (userId, id, forgetOptions) => user(userId, (u) => forgetFact(deps, u, id, forgetOptions?.version)),

    rankMemory: (userId, query, rankOptions) =>
      user(userId, async (u) => rankFacts(deps.facts, u, str(query), { tokenBudget: longTermTokens, ...rankOptions })),

    extractionIdle: async () => {
      await extraction?.idle();
    },

    extractionStatus: () => guarded(async () => extractionStatus(dbs)),

    retryDeadExtractions: (userId) =>
      guarded(async () => {
        if (extraction === undefined) return 0;
        const u = userId === undefined ? undefined : assertUserId(userId);
        const moved = await commit(dbs, () => requeueDeadTx(dbs, u));
        if (moved > 0) extraction.kick();
        return moved;
      }),

    longTermHistory: (userId) => user(userId, async (u) => longTermHistory(dbs, u)),

    dialogueLog: (userId, sessionId) =>
      user(userId, async (u) => {
        const s = sessionId === undefined ? undefined : assertSessionId(sessionId);
        return readLog(dbs, u, s).map(toLogRow);
      }),

    memoryTools: (userId, sessionId) => {
      const u = assertUserId(userId);
      // Each tool call runs under the gate, like a call of the service (refused during an erasure).
      return turnTools(deps, u, assertSessionId(sessionId)).map((tool) => ({
        ...tool,
        execute: (args, context) => gate.forUser(u, () => tool.execute(args, context)),
      }));
    },

    importDemoFolder: (root, importOptions) => guarded(() => gate.forAll(() => importDemoFolder(deps, root, importOptions))),

    exportDemoFolder: (root, exportOptions) => guarded(() => gate.forAll(() => exportDemoFolder(deps, root, exportOptions))),

    eraseUser: (userId, eraseOptions) => {
      let u: string;
      try {
        u = assertUserId(userId);
        if (eraseOptions?.compact === true) {
          throw new InvalidInputError('invalid_option', 'compact needs a runtime (runtime.recall.eraseUser): a standalone recall does not own its LMDB environment; compact it with `mnemo compact --data-dir` once it is closed', { option: 'compact' });
        }
      } catch (error) {
        return Promise.reject(error);
      }
      if (closed) return Promise.reject(new RecallClosedError());
      // Claimed now, synchronously: calls of the user made after this one are refused, and the
      // user's running extraction job loses its lease (user-gate.ts).
      const erasure = gate.exclusive(u, async () => {
        // The start's repairs write the user's keys too: not after the erasure.
        await mirrored;
        await repaired;
        return eraseUserData(deps, u);
      });
      // The drain skipped the user's jobs meanwhile: any left (a failed erasure) go on.
      void erasure.then(
        () => extraction?.kick(),
        () => extraction?.kick(),
      );
      return track(() => erasure);
    },

    async close() {
      extraction?.close();
      closed = true;
      while (running.size > 0) await Promise.all(running);
      await summarizer?.idle();
      await ownDrain?.close();
    },
  };
}

function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function warnFactsError(error: unknown, task: 'judge' | 'extraction'): void {
  const code = error instanceof MnemoError ? ` (${error.code})` : '';
  console.warn(`mnemo: the facts model failed in ${task === 'judge' ? 'judging a fact' : 'an extraction'}${code}: ${error instanceof Error ? error.message : String(error)}`);
}

/** A handler whose own failure is swallowed: telling of an error must not fail the work. */
function guardedHandler(handler: FactsErrorHandler): FactsErrorHandler {
  return (error, task) => {
    try {
      handler(error, task);
    } catch {
      // Nothing to do: the failure it was told of is already recorded.
    }
  };
}
