import { InvalidInputError } from '../../errors.ts';
import type { JsonValue } from '../../message.ts';
import { isCalendarDay } from '../rows/calendar-day.ts';
import type { DailyRow, SessionRow } from '../rows/row-types.ts';
import { windowSpec } from '../rows/row-window.ts';
import { toDailyRow } from '../rows/daily-row.ts';
import { toSessionRow } from '../rows/session-row.ts';
import { localNow, type RecallDeps } from '../recall-deps.ts';
import { sessionConversationId } from '../recall-ids.ts';

/**
 * The read side of the layered memory: session rows, recall by keyword (the Demo's rule:
 * search/keyword-search.ts; the store scans, newest first), windows around an anchor. Ids are
 * validated by the caller. Every read is confined to one user's keys (and the session reads to
 * one `session/{user}/{session}` conversation), so no call reaches another user's rows.
 *
 * An imported session whose Demo ids were not 1..n (`demoIds` of its entry) keeps them: its
 * first rows carry their Demo id, later rows are numbered `record id + shift`.
 */
async function shiftOf(deps: RecallDeps, userId: string, sessionId: string): Promise<number> {
  return (await deps.store.session(userId, sessionId))?.demoIds?.shift ?? 0;
}

export async function sessionRows(deps: RecallDeps, userId: string, sessionId: string): Promise<SessionRow[]> {
  const shift = await shiftOf(deps, userId, sessionId);
  return (await deps.memory.range(sessionConversationId(userId, sessionId))).map((r) => toSessionRow(r, shift));
}

/** Which rows `sessionRowsPage` reads: after a record id going up, else before one going down. */
export type SessionRowsQuery =
  | {
      /** The rows after this record id, going up. */
      after: number;
      /** Rows at most: default 100, clamped to 1..500. */
      limit?: number;
    }
  | {
      /** The last rows before this record id (none: the newest). */
      before?: number;
      /** Rows at most: default 100, clamped to 1..500. */
      limit?: number;
    };

/** One page of a session's rows (`recall.sessionRowsPage`). */
export interface SessionRowsPage {
  /** Chronological. */
  rows: SessionRow[];
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
  const shift = await shiftOf(deps, userId, sessionId);
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
export async function recentSessionRows(deps: RecallDeps, userId: string, sessionId: string, rounds: number): Promise<SessionRow[]> {
  const n = Math.max(1, Math.trunc(Number.isFinite(rounds) ? rounds : 3)) * 2;
  const shift = await shiftOf(deps, userId, sessionId);
  return (await deps.memory.tail(sessionConversationId(userId, sessionId), n)).map((r) => toSessionRow(r, shift));
}

export async function searchSessionRows(deps: RecallDeps, userId: string, sessionId: string, keyword: string, limit: number): Promise<SessionRow[]> {
  const shift = await shiftOf(deps, userId, sessionId);
  return (await deps.store.scanSession(userId, sessionId, { keyword, limit })).map((r) => toSessionRow(r, shift));
}

/**
 * Rows around an anchor; record ids are contiguous and one per row, so the window is one
 * record-id range. In an imported session that kept its Demo ids (`demoIds`), an anchor up to
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
): Promise<SessionRow[]> {
  const spec = windowSpec(messageId, before, after);
  if (spec === null) return [];
  const conversationId = sessionConversationId(userId, sessionId);
  const demoIds = (await deps.store.session(userId, sessionId))?.demoIds;
  const shift = demoIds?.shift ?? 0;
  let at = spec.anchor - shift;
  if (demoIds !== undefined && spec.anchor <= demoIds.rows + shift) {
    const imported = await deps.memory.range(conversationId, { from: 1, to: demoIds.rows });
    at = imported.find((r) => r.meta['message_id'] === spec.anchor)?.message_id ?? 0;
  }
  if (at < 1 || at > (await deps.memory.lastId(conversationId))) return [];
  const records = await deps.memory.range(conversationId, { from: Math.max(1, at - spec.before), to: at + spec.after });
  return records.map((r) => toSessionRow(r, shift));
}

/**
 * A `YYYY-MM-DD` that names a real date searches that day only (nothing when it has no rows);
 * an empty or invalid day searches every day. Hits say which day they are from.
 */
export async function searchDailyRows(deps: RecallDeps, userId: string, keyword: string, limit: number, day: string): Promise<DailyRow[]> {
  const trimmed = day.trim();
  const only = isCalendarDay(trimmed) ? trimmed : null;
  return (await deps.store.scanDaily(userId, { day: only, keyword, limit })).map(toDailyRow);
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
  return (await deps.store.dailyWindow(userId, target, spec.anchor, spec.before, spec.after)).map(toDailyRow);
}
