import type { DailyRecord } from '../../records/records.ts';
import { toDailyRecord } from './record-codec.ts';
import { HIGH, type DailyValue, type RecallDbs } from './recall-dbs.ts';
import { onDailyRowPut, onDailyRowRemove } from './search/index-hooks.ts';

/**
 * The daily view: per user and local day, rows numbered 1, 2, 3, ... within that day (each
 * day restarts at 1, like the demo's `daily/YYYY-MM-DD.jsonl`). Every row names the session
 * that wrote it, and `recall.daily-by-session` lists a session's rows so deleting the session
 * takes them along.
 *
 * An id is assigned inside the LMDB write transaction that stores the row (read the day's last
 * key, put the next one), so parallel appends never share or skip an id, in this process or
 * another. Deleting a session leaves holes in a day's ids; windows count rows, so holes are
 * harmless, and later rows keep their anchors. An id is never reused: when a deletion removes
 * a day's last rows, the day's high-water mark is kept (`daily-high` counter) and numbering
 * continues above it, so an anchor quoted earlier (in the log, or by the model) cannot come
 * to name a different row.
 */
export interface NewDailyRow extends DailyValue {
  day: string;
}

/**
 * Inside a write transaction: stores the row, returns its id: `id` when given (an import keeps
 * the demo's ids; the caller makes them unique), else the next one.
 */
export function putDailyRow(dbs: RecallDbs, userId: string, row: NewDailyRow, id?: number): number {
  const { day, ...value } = row;
  id ??= Math.max(lastDailyId(dbs, userId, day), dbs.counters.get([userId, 'daily-high', day]) ?? 0) + 1;
  dbs.daily.put([userId, day, id], value);
  if (value.session_id !== null) dbs.dailyBySession.put([userId, value.session_id, day, id], true);
  onDailyRowPut(dbs, userId, day, id, value);
  dbs.counters.put([userId, 'daily-rows'], (dbs.counters.get([userId, 'daily-rows']) ?? 0) + 1);
  return id;
}

/** The highest id used on that day, 0 when none (ids only grow, holes aside). */
export function lastDailyId(dbs: RecallDbs, userId: string, day: string): number {
  for (const key of dbs.daily.getKeys({ start: [userId, day, HIGH], end: [userId, day], reverse: true, limit: 1 })) {
    return key[2];
  }
  return 0;
}

/** The user's days with rows, ascending, by seeking from day to day (cost grows with days, not rows). */
export function listDays(dbs: RecallDbs, userId: string): string[] {
  const days: string[] = [];
  let from: [string, string] = [userId, ''];
  for (;;) {
    let next: string | undefined;
    for (const key of dbs.daily.getKeys({ start: from, end: [userId, HIGH], limit: 1 })) next = key[1];
    if (next === undefined) return days;
    days.push(next);
    from = [userId, `${next}${HIGH}`];
  }
}

/**
 * The rows in scope, to pick inline or pooled search: the user's row count (kept beside the
 * rows, in the same transactions), or for one day its last id (an upper bound: holes count).
 */
export function dailyRowBound(dbs: RecallDbs, userId: string, day: string | null): number {
  return day === null ? (dbs.counters.get([userId, 'daily-rows']) ?? 0) : lastDailyId(dbs, userId, day);
}

export function readDay(dbs: RecallDbs, userId: string, day: string): DailyRecord[] {
  const rows: DailyRecord[] = [];
  for (const { key, value } of dbs.daily.getRange({ start: [userId, day], end: [userId, day, HIGH] })) {
    rows.push(toDailyRecord(key[1], key[2], value));
  }
  return rows;
}

/** The rows around an anchor of one day: two short range scans from the anchor's key. */
export function dailyWindow(dbs: RecallDbs, userId: string, day: string, spec: { anchor: number; before: number; after: number }): DailyRecord[] {
  const anchor = dbs.daily.get([userId, day, spec.anchor]);
  if (anchor === undefined) return [];
  const before: DailyRecord[] = [];
  if (spec.before > 0) {
    for (const { key, value } of dbs.daily.getRange({
      start: [userId, day, spec.anchor],
      end: [userId, day],
      reverse: true,
      exclusiveStart: true,
      limit: spec.before,
    })) {
      before.push(toDailyRecord(key[1], key[2], value));
    }
  }
  const after: DailyRecord[] = [];
  if (spec.after > 0) {
    for (const { key, value } of dbs.daily.getRange({
      start: [userId, day, spec.anchor],
      end: [userId, day, HIGH],
      exclusiveStart: true,
      limit: spec.after,
    })) {
      after.push(toDailyRecord(key[1], key[2], value));
    }
  }
  return [...before.reverse(), toDailyRecord(day, spec.anchor, anchor), ...after];
}

/** Inside a write transaction: removes every daily row the session wrote. */
export function removeSessionDailyRows(dbs: RecallDbs, userId: string, sessionId: string): number {
  const keys = [...dbs.dailyBySession.getKeys({ start: [userId, sessionId], end: [userId, sessionId, HIGH] })];
  for (const day of new Set(keys.map((k) => k[2]))) {
    const high = Math.max(lastDailyId(dbs, userId, day), dbs.counters.get([userId, 'daily-high', day]) ?? 0);
    dbs.counters.put([userId, 'daily-high', day], high);
  }
  for (const key of keys) {
    const [, , day, id] = key;
    onDailyRowRemove(dbs, userId, day, id);
    dbs.daily.remove([userId, day, id]);
    dbs.dailyBySession.remove(key);
  }
  if (keys.length > 0) {
    dbs.counters.put([userId, 'daily-rows'], Math.max(0, (dbs.counters.get([userId, 'daily-rows']) ?? 0) - keys.length));
  }
  return keys.length;
}
