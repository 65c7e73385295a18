import type { Database } from 'lmdb';
import { isCalendarDay } from '../../../rows/calendar-day.ts';
import type { NewDailyRecord } from '../../../records/records.ts';
import type { DailyValue } from '../recall-dbs.ts';
import { toDailyRecord } from '../record-codec.ts';
import type { DocRef } from '../../../search/doc-numbers.ts';
import { SESSION_DOC, type SessionDocKey } from './search-dbs.ts';

/**
 * The row a document of the ranked index stands for (search-dbs.ts numbers them), read the
 * same way by BM25 hits, vector hits, their filters and the embedding drain, on the main
 * thread or a pool worker (read only):
 *
 * - a daily row: its value in `recall.daily`, its day the key's, `dailyId` its id;
 * - a session document: its value under `[userId, SESSION_DOC, order, id]`, its day the one
 *   its `ts` starts with (`''` when the `ts` names none: every day filter then refuses it),
 *   no `dailyId` (no daily row holds it).
 *
 * `undefined` when the row is gone (deleted since it was indexed).
 */
export interface DocRow {
  value: DailyValue;
  day: string;
  dailyId?: number;
}

export interface RowReader {
  daily: Database<DailyValue, [string, string, number]>;
  sessionDocs: Database<DailyValue, SessionDocKey>;
}

export function docRow(reader: RowReader, userId: string, ref: Exclude<DocRef, { kind: 'long_term' }>): DocRow | undefined {
  if (ref.kind === 'daily') {
    const value = reader.daily.get([userId, ref.day, ref.id]);
    return value === undefined ? undefined : { value, day: ref.day, dailyId: ref.id };
  }
  const value = reader.sessionDocs.get(sessionDocKey(userId, ref.order, ref.id));
  return value === undefined ? undefined : { value, day: dayOfTs(value.ts) };
}

/** Whether the user has a session document (counts as a row: index-hooks.ts, ranked-search.ts). */
export function hasSessionDocs(dbs: { search: { sessionDocs: RowReader['sessionDocs'] } }, userId: string): boolean {
  for (const _ of dbs.search.sessionDocs.getKeys({ start: [userId, SESSION_DOC, 0], end: [userId, SESSION_DOC, Infinity], limit: 1 })) return true;
  return false;
}

export function sessionDocKey(userId: string, order: number, id: number): SessionDocKey {
  return [userId, SESSION_DOC, order, id];
}

/** The calendar day a demo `ts` (`YYYY-MM-DDTHH:MM:SS`) starts with, else `''`. */
export function dayOfTs(ts: string): string {
  const day = ts.slice(0, 10);
  return isCalendarDay(day) ? day : '';
}

/** The row as the port's record: a daily row with its id, a session document without one. */
export function docRecord(row: DocRow): NewDailyRecord {
  const record = toDailyRecord(row.day, row.dailyId ?? 0, row.value);
  if (row.dailyId !== undefined) return record;
  const { id: _id, ...rest } = record;
  return rest;
}
