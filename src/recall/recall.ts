import { InvalidInputError, MnemoError } from '../errors.ts';
import { assertLanguageSetting, DEFAULT_LANGUAGE, languageOf } from '../language.ts';
import { createSummarizer } from '../provider/summarizer.ts';
import { listSummaries } from '../provider/summary-record.ts';
import { systemWallClock } from '../wall-clock.ts';
import { chatTurn } from './chat/chat-service.ts';
import { chatStream } from './chat/chat-stream.ts';
import { recordTurn } from './chat/record-turn.ts';
import { withLeafSpan } from '../telemetry/tracing.ts';
import { withTurnSpan } from '../telemetry/gen-ai.ts';
import { tracedHits } from './queries/traced-hits.ts';
import { turnTools } from './chat/turn-tools.ts';
import { createEmbeddingDrain, type EmbeddingDrain } from './jobs/embed-drain.ts';
import { createEmbeddingsClient } from './embeddings/embeddings-client.ts';
import { resolveEmbeddingsOptions } from './embeddings/embeddings-options.ts';
import { embeddingsStatus } from './queries/embeddings-status.ts';
import { factSemantic } from './facts/fact-semantic.ts';
import { searchHybrid } from './queries/hybrid-search.ts';
import { createExtractionWorker, extractionStatus } from './jobs/extraction-worker.ts';
import {
  ensureFactsConverted,
  forgetFact,
  listFactHistory,
  listFacts,
  readLongTerm,
  rememberFact,
  undoDocument,
  updateFact,
  writeDocument,
} from './facts/facts-service.ts';
import { FactsCache } from './facts/facts-view.ts';
import { DEFAULT_LONG_TERM_TOKENS, rankFacts } from './facts/rank-facts.ts';
import { resolveRetryOptions, type JobWorker } from './jobs/job-worker.ts';
import { createSummaryWorker } from './jobs/summary-worker.ts';
import { DEFAULT_SUMMARY_KEEP_LAST, DEFAULT_SUMMARY_TOKENS, DEPRECATED_RECALL_METHODS, type DialogueLogRow, type LongTermVersion, type Recall, type RecallOptions } from './recall-api.ts';
import { localNow, type FactsErrorHandler, type RecallDeps, type SummaryEngine } from './recall-deps.ts';
import { RecallClosedError } from './recall-errors.ts';
import { assertSessionId, assertUserId, newSessionId, sessionConversationId } from './recall-ids.ts';
import { assertRoomForFork, assertRoomForSession, assertSearchTerms, resolveRecallLimits } from './recall-limits.ts';
import { isCalendarDay } from './rows/calendar-day.ts';
import { toDailyRow } from './rows/daily-row.ts';
import { listSessions, listSessionsPage } from './rows/session-list.ts';
import { untitled } from './rows/session-title.ts';
import { localTimeIn, systemLocalTime } from './rows/local-time.ts';
import {
  dailyWindowRows,
  pageLimit,
  searchDailyRows,
  searchSessionRows,
  sessionRows,
  sessionRowsPage,
  sessionWindowRows,
} from './queries/recall-queries.ts';
import type { LogRecord, LongTermRecord } from './records/records.ts';
import { UserGate } from './user-gate.ts';

export type { Recall, RecallOptions } from './recall-api.ts';

/** What the call groups of the service share. */
interface Service {
  deps: RecallDeps;
  limits: ReturnType<typeof resolveRecallLimits>;
  gate: UserGate;
  /** Runs `work` as a call of the service (refused after `close`, waited for by it). */
  track<T>(work: () => Promise<T>): Promise<T>;
  /** `track`, under the gate of the user named (validated first). */
  user<T>(userId: unknown, work: (u: string) => Promise<T>): Promise<T>;
  extraction: JobWorker | undefined;
  summaries: JobWorker | undefined;
  drain: () => EmbeddingDrain | undefined;
}

/**
 * The layered memory over a store (see `Recall` and `RecallOptions` for every call). Most
 * applications use `runtime.recall`, the same service made and supervised by `startRuntime`;
 * call this for a store of your own. It does not own the store: close the service, then the
 * store.
 *
 * @throws `InvalidInputError` `invalid_option` without a store, for a bad `longTermTokens`,
 * `limits` or `language`, or `embeddings` over a store opened without them.
 *
 * @example
 * ```ts
 * import { createLmdbRecallStore, createRecall, startRuntime } from 'mnemo';
 *
 * const runtime = await startRuntime({ dataDir: './data', recall: false });
 * if (runtime.storage.kind !== 'lmdb') throw new Error('needs LMDB');
 * const { root, path } = runtime.storage;
 * const store = createLmdbRecallStore({ env: { root, path }, transcripts: runtime.memory });
 * const recall = createRecall({ store, language: 'en' });
 *
 * await recall.chat({ userId: 'alice', sessionId: 's1', message: 'I live in Lyon.' });
 * console.log((await recall.search({ userId: 'alice', query: 'Lyon' })).items.length);
 * await recall.close();
 * await store.close();
 * await runtime.stop();
 * ```
 */
export function createRecall(options: RecallOptions): Recall {
  const deps = resolveDeps(options);
  const limits = resolveRecallLimits(options.limits);
  const retry = resolveRetryOptions(options.extraction);
  let closed = false;
  const running = new Set<Promise<unknown>>();
  const track = <T>(work: () => Promise<T>): Promise<T> => {
    if (closed) return Promise.reject(new RecallClosedError());
    const p = Promise.resolve().then(work);
    const settled = p.then(noop, noop);
    running.add(settled);
    void settled.then(() => running.delete(settled));
    return p;
  };
  // Every call naming a user runs under the gate, so an erasure can wait for them and refuse
  // new ones; background jobs of a user hold its leases, which the erasure revokes.
  const gate = new UserGate();
  const user = <T>(userId: unknown, work: (u: string) => Promise<T>): Promise<T> =>
    track(async () => {
      const u = assertUserId(userId);
      return gate.forUser(u, () => work(u));
    });
  const drain = embeddingDrain(deps, options);
  const extraction = options.factsLlm === undefined ? undefined : createExtractionWorker(deps, options.factsLlm, track, gate, retry);
  const summaries = deps.summary === undefined ? undefined : createSummaryWorker({ ...deps, summary: deps.summary }, track, gate);
  const service: Service = { deps, limits, gate, track, user, extraction, summaries, drain: drain.current };
  const recall = {
    ...sessionCalls(service),
    ...readCalls(service),
    ...factCalls(service),
    ...operationCalls(service),
    async close() {
      extraction?.close();
      summaries?.close();
      closed = true;
      while (running.size > 0) await Promise.all(running);
      await drain.closeOwn();
    },
  };
  return withDeprecatedNames(recall);
}

/** The options, checked and defaulted, as what the parts share. */
function resolveDeps(options: RecallOptions): RecallDeps {
  const { store } = options;
  if (store === undefined || typeof store.appendTurn !== 'function') {
    throw new InvalidInputError('invalid_option', 'createRecall needs a store (createLmdbRecallStore, createPostgresRecallStore)', { option: 'store' });
  }
  const longTermTokens = options.longTermTokens ?? DEFAULT_LONG_TERM_TOKENS;
  if (!Number.isSafeInteger(longTermTokens) || longTermTokens < 0) {
    throw new InvalidInputError('invalid_option', `longTermTokens must be an integer >= 0, got ${longTermTokens}`, { option: 'longTermTokens' });
  }
  const language = assertLanguageSetting(options.language ?? DEFAULT_LANGUAGE, 'language');
  const embeddingsOptions = options.embeddings === undefined ? undefined : resolveEmbeddingsOptions(options.embeddings);
  if (embeddingsOptions !== undefined && !store.embeddings) {
    throw new InvalidInputError('invalid_option', 'embeddings need a store opened with embeddings: true', { option: 'embeddings' });
  }
  const client = embeddingsOptions === undefined ? undefined : createEmbeddingsClient(embeddingsOptions);
  return {
    store,
    memory: store.transcripts,
    llm: options.llm,
    clock: options.clock ?? systemWallClock,
    localTime: options.timeZone === undefined ? systemLocalTime() : localTimeIn(options.timeZone),
    maxToolIterations: options.maxToolIterations ?? 10,
    facts: new FactsCache(),
    semantic: client === undefined || embeddingsOptions === undefined ? undefined : factSemantic(store, client, embeddingsOptions.queryTimeoutMs),
    factsLlm: options.factsLlm,
    onFactsError: guardedHandler(options.onFactsError ?? warnFactsError),
    longTermTokens,
    summary: summaryEngineOf(options, store.transcripts),
    language,
    embeddings:
      embeddingsOptions === undefined || client === undefined
        ? undefined
        : { options: embeddingsOptions, client, drain: () => options.embeddingsDrain?.() },
    limits: resolveRecallLimits(options.limits),
  };
}

/** Recall's rolling summaries (on unless `summary: false`), its options checked here. */
function summaryEngineOf(options: RecallOptions, memory: RecallDeps['memory']): SummaryEngine | undefined {
  if (options.summary === false) return undefined;
  const summary = options.summary ?? {};
  if (typeof summary !== 'object' || summary === null) {
    throw new InvalidInputError('invalid_option', 'summary must be an object or false', { option: 'summary' });
  }
  const keepLast = summary.keepLast ?? DEFAULT_SUMMARY_KEEP_LAST;
  const maxTokens = summary.maxTokens ?? DEFAULT_SUMMARY_TOKENS;
  const llm = summary.llm ?? options.llm;
  // Checks every option (InvalidMemoryConfigError) as the jobs' summarizers will take them.
  const reader = createSummarizer(memory, { keepLast, maxTokens, ...(llm === undefined ? {} : { llm }) });
  return { keepLast, maxTokens, llm, clock: options.clock, reader };
}


/** The embedding drain: the runtime's supervised one, or one of the service's own. */
function embeddingDrain(deps: RecallDeps, options: RecallOptions): { current: () => EmbeddingDrain | undefined; closeOwn: () => Promise<void> } {
  const embed = deps.embeddings;
  if (embed === undefined) return { current: () => undefined, closeOwn: async () => {} };
  if (options.embeddingsDrain !== undefined) return { current: options.embeddingsDrain, closeOwn: async () => {} };
  const own = createEmbeddingDrain({ store: deps.store, embeddings: embed.options, client: embed.client });
  embed.drain = () => own;
  return { current: () => own, closeOwn: () => own.close() };
}

function sessionCalls(s: Service) {
  const { deps, user } = s;
  return {
    chat: ((input) => withTurnSpan(input?.sessionId, (trace) => user(input?.userId, () => chatTurn(deps, input, undefined, trace)))) satisfies Recall['chat'],
    chatStream: ((input) => chatStream(deps, input, (work) => withTurnSpan(input?.sessionId, (trace) => user(input?.userId, () => work(trace))))) satisfies Recall['chatStream'],
    recordTurn: ((input) => user(input?.userId, () => recordTurn(deps, input))) satisfies Recall['recordTurn'],
    listSessions: ((userId) => user(userId, async (u) => listSessions(await deps.store.sessions(u), localNow(deps).ts, languageOf(deps.language, '')))) satisfies Recall['listSessions'],
    listSessionsPage: ((userId, page = {}) =>
      user(userId, async (u) => {
        if (page.cursor !== undefined && typeof page.cursor !== 'string') {
          throw new InvalidInputError('invalid_cursor', 'cursor must be a string', { field: 'cursor' });
        }
        return listSessionsPage(await deps.store.sessions(u), localNow(deps).ts, languageOf(deps.language, ''), pageLimit(page.limit), page.cursor);
      })) satisfies Recall['listSessionsPage'],
    createSession: ((userId) => user(userId, async () => newSessionId())) satisfies Recall['createSession'],
    sessionMessages: ((userId, sessionId) => user(userId, (u) => sessionRows(deps, u, assertSessionId(sessionId)))) satisfies Recall['sessionMessages'],
    sessionMessagesPage: ((userId, sessionId, query = {}) => user(userId, (u) => sessionRowsPage(deps, u, assertSessionId(sessionId), query))) satisfies Recall['sessionMessagesPage'],
    forkSession: ((userId, sessionId, messageId, targetId) =>
      user(userId, async (u) => {
        const source = assertSessionId(sessionId);
        const target = targetId === undefined ? newSessionId() : assertSessionId(targetId);
        const sessions = await deps.store.sessions(u);
        assertRoomForSession(sessions, s.limits.sessionsPerUser);
        assertRoomForFork(sessions, source, s.limits.forksPerSession);
        const title = sessions.find((e) => e.sessionId === source)?.title || untitled(languageOf(deps.language, ''));
        await deps.store.forkSession(u, { sourceId: source, messageId, targetId: target, title, now: localNow(deps).ts });
        return target;
      })) satisfies Recall['forkSession'],
    deleteSession: ((userId, sessionId, deleteOptions) =>
      user(userId, async (u) => {
        const ses = assertSessionId(sessionId);
        const ifLastId = deleteOptions?.ifLastId;
        if (ifLastId !== undefined && (!Number.isSafeInteger(ifLastId) || ifLastId < 0)) {
          throw new InvalidInputError('invalid_option', 'ifLastId must be an integer >= 0', { option: 'ifLastId' });
        }
        return (await deps.store.deleteSession(u, ses, ifLastId === undefined ? {} : { ifLastId })) === 'deleted';
      })) satisfies Recall['deleteSession'],
  };
}

function readCalls(s: Service) {
  const { deps, user } = s;
  return {
    searchSession: ((q) => user(q?.userId, (u) => searchSessionRows(deps, u, assertSessionId(q.sessionId), str(q.keyword), q.limit ?? 20))) satisfies Recall['searchSession'],
    searchDaily: ((q) => user(q?.userId, (u) => searchDailyRows(deps, u, str(q.keyword), q.limit ?? 20, str(q.day)))) satisfies Recall['searchDaily'],
    sessionWindow: ((q) =>
      user(q?.userId, (u) => sessionWindowRows(deps, u, assertSessionId(q.sessionId), q.messageId, q.before ?? 0, q.after ?? 0))) satisfies Recall['sessionWindow'],
    dailyWindow: ((q) => user(q?.userId, (u) => dailyWindowRows(deps, u, q.messageId, q.before ?? 0, q.after ?? 0, str(q.day)))) satisfies Recall['dailyWindow'],
    dailyMessages: ((userId, day = '') =>
      user(userId, async (u) => {
        const d = day.trim() === '' ? localNow(deps).day : day.trim();
        return isCalendarDay(d) ? (await deps.store.dailyDay(u, d)).map(toDailyRow) : [];
      })) satisfies Recall['dailyMessages'],
    search: ((q) =>
      user(q?.userId, async () => {
        assertSearchTerms(q.query, s.limits.searchTerms);
        return withLeafSpan('mnemo.search', {}, async (span) => tracedHits(span, await searchHybrid(deps, q)));
      })) satisfies Recall['search'],
    rebuildSearchIndex: ((userId) => user(userId, (u) => deps.store.rebuildIndex(u))) satisfies Recall['rebuildSearchIndex'],
    summaries: ((userId, sessionId) => user(userId, (u) => listSummaries(deps.memory, sessionConversationId(u, assertSessionId(sessionId))))) satisfies Recall['summaries'],
    dialogueLog: ((userId, sessionId) =>
      user(userId, async (u) => {
        const ses = sessionId === undefined ? undefined : assertSessionId(sessionId);
        return (await deps.store.dialogueLog(u, ses)).map(toLogRow);
      })) satisfies Recall['dialogueLog'],
    memoryTools: ((userId, sessionId) => {
      const u = assertUserId(userId);
      // Each tool call runs under the gate, like a call of the service (refused during an erasure).
      return turnTools(deps, u, assertSessionId(sessionId)).map((tool) => ({ ...tool, execute: (args, context) => s.gate.forUser(u, () => tool.execute(args, context)) }));
    }) satisfies Recall['memoryTools'],
  };
}

function factCalls(s: Service) {
  const { deps, user } = s;
  return {
    getLongTerm: ((userId) => user(userId, (u) => readLongTerm(deps, u))) satisfies Recall['getLongTerm'],
    setLongTerm: ((userId, document) =>
      user(userId, async (u) => {
        if (typeof document !== 'string') throw new InvalidInputError('invalid_message', 'the long-term document must be a string', { field: 'document' });
        const version = await writeDocument(deps, u, document, 'set');
        return version === null ? null : toVersion(version);
      })) satisfies Recall['setLongTerm'],
    undoLongTerm: ((userId) => user(userId, (u) => undoDocument(deps, u))) satisfies Recall['undoLongTerm'],
    longTermHistory: ((userId) => user(userId, async (u) => (await deps.store.longTermVersions(u)).map(toVersion))) satisfies Recall['longTermHistory'],
    listFacts: ((userId, listOptions) => user(userId, (u) => listFacts(deps, u, listOptions?.asOf))) satisfies Recall['listFacts'],
    factHistory: ((userId) => user(userId, (u) => listFactHistory(deps, u))) satisfies Recall['factHistory'],
    remember: ((userId, fact) => user(userId, (u) => rememberFact(deps, u, fact))) satisfies Recall['remember'],
    updateFact: ((userId, id, change) => user(userId, (u) => updateFact(deps, u, id, change))) satisfies Recall['updateFact'],
    forgetFact: ((userId, id, forgetOptions) => user(userId, (u) => forgetFact(deps, u, id, forgetOptions?.version))) satisfies Recall['forgetFact'],
    rankFacts: ((userId, query, rankOptions) =>
      user(userId, async (u) => rankFacts(deps, await ensureFactsConverted(deps, u), str(query), { tokenBudget: deps.longTermTokens, ...rankOptions }))) satisfies Recall['rankFacts'],
  };
}

function operationCalls(s: Service) {
  const { deps, user, track, gate, extraction } = s;
  return {
    embeddingsStatus: ((userId) => (userId === undefined ? track(() => embeddingsStatus(deps)) : user(userId, (u) => embeddingsStatus(deps, u)))) satisfies Recall['embeddingsStatus'],
    embeddingsIdle: (() => track(async () => s.drain()?.idle())) satisfies Recall['embeddingsIdle'],
    extractionIdle: (async () => {
      await extraction?.idle();
    }) satisfies Recall['extractionIdle'],
    summaryIdle: (async () => {
      await s.summaries?.idle();
    }) satisfies Recall['summaryIdle'],
    extractionStatus: (() => track(() => extractionStatus(deps))) satisfies Recall['extractionStatus'],
    retryDeadExtractions: ((userId) =>
      track(async () => {
        if (extraction === undefined) return 0;
        const moved = await deps.store.jobs.requeueDead('extract', userId === undefined ? undefined : assertUserId(userId));
        if (moved > 0) extraction.kick();
        return moved;
      })) satisfies Recall['retryDeadExtractions'],
    // The Demo folder's code loads on the first import or export (importing `mnemo` skips it).
    importDemoFolder: ((root, importOptions) =>
      track(() => gate.forAll(async () => (await import('./demo-folder/demo-import.ts')).importDemoFolder(deps, root, importOptions)))) satisfies Recall['importDemoFolder'],
    exportDemoFolder: ((root, exportOptions) =>
      track(() => gate.forAll(async () => (await import('./demo-folder/demo-export.ts')).exportDemoFolder(deps, root, exportOptions)))) satisfies Recall['exportDemoFolder'],
    eraseUser: ((userId, eraseOptions) => {
      let u: string;
      try {
        u = assertUserId(userId);
        if (eraseOptions?.compact === true) {
          throw new InvalidInputError('invalid_option', 'compact needs a runtime (runtime.recall.eraseUser): a standalone recall does not own its LMDB environment; compact it with `mnemo compact --data-dir` once it is closed', { option: 'compact' });
        }
      } catch (error) {
        return Promise.reject(error);
      }
      // Claimed now, synchronously: calls of the user made after this one are refused, and the
      // user's running background job loses its lease (user-gate.ts).
      const erasure = gate.exclusive(u, async () => {
        const report = await deps.store.eraseUser(u);
        deps.facts.delete(u);
        return report;
      });
      return track(() => erasure);
    }) satisfies Recall['eraseUser'],
  };
}

/** The service with the deprecated names beside the current ones (recall-api.ts). */
function withDeprecatedNames(recall: Omit<Recall, keyof typeof DEPRECATED_RECALL_METHODS>): Recall {
  const out = recall as Recall;
  for (const [old, current] of Object.entries(DEPRECATED_RECALL_METHODS)) {
    (out as unknown as Record<string, unknown>)[old] = (out as unknown as Record<string, unknown>)[current];
  }
  return out;
}

function toVersion(v: LongTermRecord): LongTermVersion {
  return { version: v.version, content: v.content, ts: v.ts, source: v.source };
}

function toLogRow(r: LogRecord): DialogueLogRow {
  return {
    ts: r.ts,
    sessionId: r.sessionId,
    userMessage: r.userMessage,
    assistantReply: r.assistantReply,
    memoryContext: r.memoryContext,
    toolCalls: r.toolCalls,
    ...(r.error === undefined ? {} : { error: r.error }),
  };
}

function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

const noop = () => undefined;

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
