import { InvalidInputError } from '../errors.ts';
import { assertLanguage, DEFAULT_LANGUAGE, type Language } from '../language.ts';
import { RecallClosedError } from './recall-errors.ts';
import type { Tool } from '../kernel/tool.ts';
import type { LlmService } from '../llm/llm-service.ts';
import type { MessageLog } from '../memory/contract/message-log.ts';
import type { JsonValue } from '../message.ts';
import { MESSAGES_DB } from '../memory/lmdb/lmdb-table.ts';
import { isCalendarDay } from './store/calendar-day.ts';
import { chatTurn, turnTools, type ChatInput, type ChatResult } from './chat/chat-service.ts';
import { forgetMirror, laggingSessions, repairLaggingSessions } from './store/daily-mirror.ts';
import { readDay, removeSessionDailyRows } from './store/daily-store.ts';
import { exportDemoFolder, type ExportOptions, type ExportReport } from './demo-folder/demo-export.ts';
import { importDemoFolder, type ImportOptions, type ImportReport } from './demo-folder/demo-import.ts';
import { readLog, removeSessionLog, toLogRow, type DialogueLogRow } from './store/dialogue-log.ts';
import { systemWallClock, type WallClock } from '../wall-clock.ts';
import { localTimeIn, systemLocalTime } from './store/local-time.ts';
import {
  currentLongTerm,
  longTermHistory,
  undoLongTerm,
  writeLongTerm,
  type LongTermVersion,
} from './store/long-term-store.ts';
import type { DailyRow, MemoryRow } from './store/memory-row.ts';
import { commit, openRecallDbs, type RecallEnvironment } from './store/recall-dbs.ts';
import { localNow, type RecallDeps } from './recall-deps.ts';
import { assertSessionId, assertUserId, newSessionId, sessionConversationId } from './recall-ids.ts';
import {
  dailyWindowRows,
  searchDailyRows,
  searchSessionRows,
  sessionRows,
  sessionWindowRows,
} from './search/recall-queries.ts';
import type { SearchPool } from './search/search-pool.ts';
import { openRawText } from './store/recall-dbs.ts';
import {
  cutShortSessions,
  listCutShortSessions,
  listSessions,
  removeSession,
  sessionEntry,
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
   * db), so the pool's workers can scan sessions directly. Default false: session scans run
   * on the main thread, through `memory`.
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
  /**
   * The language of the system prompt, the title prompt, offline titles and the offline
   * fallback's reply (language.ts). Default `'zh'`: the Agent Memory Demo's texts.
   */
  language?: Language;
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
  /** Listed sessions, newest `updated_at` first (ties in creation order); `[]` for an unknown user. */
  listSessions(userId: string): Promise<SessionSummary[]>;
  /** A fresh session id (12 lowercase hex). Nothing is stored until its first chat. */
  createSession(userId: string): Promise<string>;
  /** The session's rows, chronological; `[]` when unknown. */
  getSessionMessages(userId: string, sessionId: string): Promise<MemoryRow[]>;
  /** Deletes the session, its daily rows, its log rows and its index entry. False when there was none. */
  deleteSession(userId: string, sessionId: string): Promise<boolean>;
  searchSession(query: SearchSessionQuery): Promise<MemoryRow[]>;
  searchDaily(query: SearchDailyQuery): Promise<DailyRow[]>;
  sessionWindow(query: SessionWindowQuery): Promise<MemoryRow[]>;
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
  /** The dialogue log, in turn order; one session's when `sessionId` is given. */
  dialogueLog(userId: string, sessionId?: string): Promise<DialogueLogRow[]>;
  /** The six memory tools bound to one user and session (what a turn gives its agent). */
  memoryTools(userId: string, sessionId: string): Tool[];
  importDemoFolder(root: string, options?: ImportOptions): Promise<ImportReport>;
  exportDemoFolder(root: string, options?: ExportOptions): Promise<ExportReport>;
  close(): Promise<void>;
}

export const DEFAULT_POOL_THRESHOLD = 20_000;

export function createRecall(options: RecallOptions): Recall {
  const localTime = options.timeZone === undefined ? systemLocalTime() : localTimeIn(options.timeZone);
  const maxToolIterations = options.maxToolIterations ?? 10;
  const poolThreshold = options.poolThreshold ?? DEFAULT_POOL_THRESHOLD;
  if (!Number.isFinite(poolThreshold) || poolThreshold < 0) {
    throw new InvalidInputError('invalid_option', `poolThreshold must be a number >= 0, got ${poolThreshold}`);
  }
  const language = assertLanguage(options.language ?? DEFAULT_LANGUAGE, 'language');
  const deps: RecallDeps = {
    memory: options.memory,
    dbs: openRecallDbs(options.env),
    llm: options.llm,
    clock: options.clock ?? systemWallClock,
    localTime,
    pool: options.pool,
    poolThreshold,
    sessionScan: options.memoryInEnv
      ? { json: options.env.root.openDB(MESSAGES_DB, { encoding: 'json' }), text: openRawText(options.env.root, MESSAGES_DB) }
      : undefined,
    maxToolIterations,
    language,
  };
  const { dbs } = deps;

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

  return {
    chat: (input) => guarded(() => chatTurn(deps, input)),

    listSessions: (userId) =>
      guarded(async () => {
        const u = assertUserId(userId);
        await repaired;
        return listSessions(dbs, u, localNow(deps).ts);
      }),

    createSession: (userId) =>
      guarded(async () => {
        assertUserId(userId);
        return newSessionId();
      }),

    getSessionMessages: (userId, sessionId) =>
      guarded(() => sessionRows(deps, assertUserId(userId), assertSessionId(sessionId))),

    deleteSession: (userId, sessionId) =>
      guarded(async () => {
        const u = assertUserId(userId);
        const s = assertSessionId(sessionId);
        const conversationId = sessionConversationId(u, s);
        const existed = sessionEntry(dbs, u, s) !== undefined || (await deps.memory.lastId(conversationId)) > 0;
        // The transcript first: if the index step fails, a retry finds the entry and finishes.
        await deps.memory.clear(conversationId);
        const removedRows = await commit(dbs, () => {
          const n = removeSessionDailyRows(dbs, u, s);
          forgetMirror(dbs, u, s);
          removeSessionLog(dbs, u, s);
          removeSession(dbs, u, s);
          return n;
        });
        return existed || removedRows > 0;
      }),

    searchSession: (q) =>
      guarded(() =>
        searchSessionRows(deps, assertUserId(q.userId), assertSessionId(q.sessionId), str(q.keyword), q.limit ?? 20),
      ),

    searchDaily: (q) =>
      guarded(() => searchDailyRows(deps, assertUserId(q.userId), str(q.keyword), q.limit ?? 20, str(q.day))),

    sessionWindow: (q) =>
      guarded(() =>
        sessionWindowRows(deps, assertUserId(q.userId), assertSessionId(q.sessionId), q.messageId, q.before ?? 0, q.after ?? 0),
      ),

    dailyWindow: (q) =>
      guarded(() => dailyWindowRows(deps, assertUserId(q.userId), q.messageId, q.before ?? 0, q.after ?? 0, str(q.day))),

    dailyMessages: (userId, day = '') =>
      guarded(async () => {
        const u = assertUserId(userId);
        const d = day.trim() === '' ? localNow(deps).day : day.trim();
        return isCalendarDay(d) ? readDay(dbs, u, d) : [];
      }),

    getLongTerm: (userId) => guarded(async () => currentLongTerm(dbs, assertUserId(userId))),

    setLongTerm: (userId, document) =>
      guarded(async () => {
        const u = assertUserId(userId);
        if (typeof document !== 'string') {
          throw new InvalidInputError('invalid_message', 'the long-term document must be a string', { field: 'document' });
        }
        return commit(dbs, () => writeLongTerm(dbs, u, document, 'set', localNow(deps).ts));
      }),

    undoLongTerm: (userId) =>
      guarded(async () => {
        const u = assertUserId(userId);
        return commit(dbs, () => undoLongTerm(dbs, u));
      }),

    longTermHistory: (userId) => guarded(async () => longTermHistory(dbs, assertUserId(userId))),

    dialogueLog: (userId, sessionId) =>
      guarded(async () => {
        const u = assertUserId(userId);
        const s = sessionId === undefined ? undefined : assertSessionId(sessionId);
        return readLog(dbs, u, s).map(toLogRow);
      }),

    memoryTools: (userId, sessionId) => turnTools(deps, assertUserId(userId), assertSessionId(sessionId)),

    importDemoFolder: (root, importOptions) => guarded(() => importDemoFolder(deps, root, importOptions)),

    exportDemoFolder: (root, exportOptions) => guarded(() => exportDemoFolder(deps, root, exportOptions)),

    async close() {
      closed = true;
      while (running.size > 0) await Promise.all(running);
    },
  };
}

function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}
