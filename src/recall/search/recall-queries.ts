import { InvalidInputError } from '../../errors.ts';
import type { JsonValue } from '../../message.ts';
import { isCalendarDay } from '../store/calendar-day.ts';
import { dailyRowBound, dailyWindow } from '../store/daily-store.ts';
import { clampLimit, normalizeKeyword } from './keyword-search.ts';
import type { DailyRow, MemoryRow } from '../store/memory-row.ts';
import { localNow, type RecallDeps } from '../recall-deps.ts';
import { sessionConversationId } from '../recall-ids.ts';
import { windowSpec } from '../store/row-window.ts';
import type { Key } from 'lmdb';
import { HIGH } from '../store/recall-dbs.ts';
import type { DailyKey } from './search-job.ts';
import { runScan, scanDaily, scanSession, SCAN_CHUNK, type ScanPosition } from './search-scan.ts';
import { textContent, toSessionRow } from '../store/session-row.ts';
import { sessionEntry, sessionIdShift } from '../store/sessions-index.ts';

/**
 * The read side of the layered memory: session rows, recall by keyword, windows around an
 * anchor. Ids are validated by the caller. Every read is confined to one user's keys (and the
 * session reads to one `session/{user}/{session}` conversation), so no call reaches another
 * user's rows.
 *
 * Keyword scans over more than `poolThreshold` rows run on the search pool when there is one;
 * smaller ones run inline (a worker round trip costs more than scanning a few thousand rows).
 * An inline scan of a large history without a pool yields the event loop every few thousand
 * rows. Session scans go to the pool only when the session transcripts live in the same LMDB
 * environment (the runtime's LMDB store), since workers read them straight from LMDB.
 */
export async function sessionRows(deps: RecallDeps, userId: string, sessionId: string): Promise<MemoryRow[]> {
  const shift = sessionIdShift(deps.dbs, userId, sessionId);
  return (await deps.memory.range(sessionConversationId(userId, sessionId))).map((r) => toSessionRow(r, shift));
}

/** Which rows `sessionRowsPage` reads: after a record id going up, else before one going down. */
export type SessionRowsQuery = { after: number; limit?: number } | { before?: number; limit?: number };

export interface SessionRowsPage {
  /** Chronological. */
  rows: MemoryRow[];
  /** The record id of `rows[0]` (ids are contiguous: `rows[i]` is `firstId + i`). */
  firstId: number;
  /** Whether rows remain beyond these, in the direction read. */
  more: boolean;
}

export const MAX_PAGE_ROWS = 500;
export const DEFAULT_PAGE_ROWS = 100;

/**
 * At most `limit` (default 100, 1..500) of the session's rows by record id (1-based,
 * contiguous, the MessageLog's ids): those after `after`, or the last ones before `before`
 * (none: the newest), in chronological order. A range read: costs what it returns.
 */
export async function sessionRowsPage(deps: RecallDeps, userId: string, sessionId: string, query: SessionRowsQuery): Promise<SessionRowsPage> {
  const limit = pageLimit(query.limit);
  const bound = 'after' in query ? query.after : query.before;
  if (bound !== undefined && (!Number.isSafeInteger(bound) || bound < 0)) {
    throw new InvalidInputError('invalid_cursor', 'a row position must be an integer >= 0', { field: 'after' in query ? 'after' : 'before' });
  }
  const conversationId = sessionConversationId(userId, sessionId);
  const last = await deps.memory.lastId(conversationId);
  let from: number;
  let to: number;
  if ('after' in query) {
    from = query.after + 1;
    to = Math.min(last, query.after + limit);
  } else {
    to = Math.min(last, (query.before ?? last + 1) - 1);
    from = Math.max(1, to - limit + 1);
  }
  if (from > to) return { rows: [], firstId: from, more: false };
  const shift = sessionIdShift(deps.dbs, userId, sessionId);
  const rows = (await deps.memory.range(conversationId, { from, to })).map((r) => toSessionRow(r, shift));
  return { rows, firstId: from, more: 'after' in query ? to < last : from > 1 };
}

/** A page size: default 100, clamped to 1..500; not an integer: `invalid_option`. */
export function pageLimit(limit: number | undefined): number {
  if (limit === undefined) return DEFAULT_PAGE_ROWS;
  if (!Number.isSafeInteger(limit)) throw new InvalidInputError('invalid_option', 'limit must be an integer', { field: 'limit' });
  return Math.max(1, Math.min(limit, MAX_PAGE_ROWS));
}

/** The last `max(1, rounds) * 2` rows (a round is about one user message and its reply). */
export async function recentSessionRows(deps: RecallDeps, userId: string, sessionId: string, rounds: number): Promise<MemoryRow[]> {
  const n = Math.max(1, Math.trunc(Number.isFinite(rounds) ? rounds : 3)) * 2;
  const shift = sessionIdShift(deps.dbs, userId, sessionId);
  return (await deps.memory.tail(sessionConversationId(userId, sessionId), n)).map((r) => toSessionRow(r, shift));
}

export async function searchSessionRows(
  deps: RecallDeps,
  userId: string,
  sessionId: string,
  keyword: string,
  limit: number,
): Promise<MemoryRow[]> {
  const conversationId = sessionConversationId(userId, sessionId);
  const last = await deps.memory.lastId(conversationId);
  if (last === 0) return [];
  const shift = sessionIdShift(deps.dbs, userId, sessionId);
  const { sessionScan: source, pool } = deps;
  // A branched session's prefix lives in its source's rows: only the MessageLog stitches them.
  if (source !== undefined && deps.dbs.sessions.get([userId, sessionId])?.fork === undefined) {
    await deps.journal?.settle(); // appends acknowledged but not yet in LMDB
    const position: ScanPosition<Key> = { key: [conversationId, Infinity], exclusive: true };
    const job = scanSession(source, conversationId, keyword, limit, Infinity, position, undefined, shift);
    return runScan(job, last, pool !== undefined && last > deps.poolThreshold, (wanted) =>
      pool!.run({ kind: 'session', path: deps.dbs.path, conversationId, keyword, limit: wanted, before: (position.key as [string, number])[1], shift }),
      limit,
    );
  }
  // Another store: newest chunk first through the MessageLog (ids are contiguous: a chunk is an
  // id range). A range read materializes its rows, so chunks start small (a common keyword is
  // answered by the newest rows) and double up to SCAN_CHUNK; the event loop turns between them.
  const key = normalizeKeyword(keyword);
  const want = clampLimit(limit);
  const found: MemoryRow[] = [];
  let size = Math.min(SCAN_CHUNK, want * 4);
  let unyielded = 0;
  for (let to = last; to >= 1 && found.length < want; to -= size, size = Math.min(SCAN_CHUNK, size * 2)) {
    if (unyielded >= SCAN_CHUNK) {
      // A store's reads may resolve without a macrotask in between: yield so timers and I/O run.
      await new Promise<void>((resolve) => setImmediate(resolve));
      unyielded = 0;
    }
    const chunk = await deps.memory.range(conversationId, { from: Math.max(1, to - size + 1), to });
    unyielded += chunk.length;
    for (let i = chunk.length - 1; i >= 0 && found.length < want; i--) {
      const record = chunk[i]!;
      if (key === null || textContent(record.message).toLowerCase().includes(key)) found.push(toSessionRow(record, shift));
    }
  }
  return found.reverse();
}

/**
 * Rows around an anchor; record ids are contiguous and one per row, so the window is one
 * record-id range. In an imported session that kept its demo ids (`demoIds`), an anchor up to
 * the highest imported id is looked up among the imported rows (the first row with that id);
 * a later one is `record id + shift`.
 */
export async function sessionWindowRows(
  deps: RecallDeps,
  userId: string,
  sessionId: string,
  messageId: JsonValue | undefined,
  before: number,
  after: number,
): Promise<MemoryRow[]> {
  const spec = windowSpec(messageId, before, after);
  if (spec === null) return [];
  const conversationId = sessionConversationId(userId, sessionId);
  const demoIds = sessionEntry(deps.dbs, userId, sessionId)?.demoIds;
  const shift = demoIds?.shift ?? 0;
  let at = spec.anchor - shift;
  if (demoIds !== undefined && spec.anchor <= demoIds.rows + shift) {
    const imported = await deps.memory.range(conversationId, { from: 1, to: demoIds.rows });
    at = imported.find((r) => r.meta['message_id'] === spec.anchor)?.message_id ?? 0;
  }
  if (at < 1 || at > (await deps.memory.lastId(conversationId))) return [];
  const records = await deps.memory.range(conversationId, {
    from: Math.max(1, at - spec.before),
    to: at + spec.after,
  });
  return records.map((r) => toSessionRow(r, shift));
}

/**
 * A `YYYY-MM-DD` that names a real date searches that day only (nothing when it has no rows);
 * an empty or invalid day searches every day. Hits say which day they are from.
 */
export async function searchDailyRows(
  deps: RecallDeps,
  userId: string,
  keyword: string,
  limit: number,
  day: string,
): Promise<DailyRow[]> {
  const trimmed = day.trim();
  const only = isCalendarDay(trimmed) ? trimmed : null;
  const bound = dailyRowBound(deps.dbs, userId, only);
  if (bound === 0) return [];
  const position: ScanPosition<Key> = { key: only === null ? [userId, HIGH] : [userId, only, HIGH], exclusive: false };
  const job = scanDaily({ json: deps.dbs.daily, text: deps.dbs.dailyText }, userId, only, keyword, limit, position);
  const { pool } = deps;
  return runScan(job, bound, pool !== undefined && bound > deps.poolThreshold, (wanted) =>
    // A chunk was seen before the pool is asked: the position is a row's key.
    pool!.run({ kind: 'daily', path: deps.dbs.path, userId, day: only, keyword, limit: wanted, after: position.key as DailyKey }),
    limit,
  );
}

/** Rows around an anchor of one day; an empty day means today, an invalid one matches nothing. */
export async function dailyWindowRows(
  deps: RecallDeps,
  userId: string,
  messageId: JsonValue | undefined,
  before: number,
  after: number,
  day: string,
): Promise<DailyRow[]> {
  const spec = windowSpec(messageId, before, after);
  if (spec === null) return [];
  const trimmed = day.trim();
  const target = trimmed === '' ? localNow(deps).day : trimmed;
  if (!isCalendarDay(target)) return [];
  return dailyWindow(deps.dbs, userId, target, spec);
}
