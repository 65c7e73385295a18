import type { Database, Key } from 'lmdb';
import type { JsonObject, Message } from '../memory/message.ts';
import { clampLimit, normalizeKeyword } from './keyword-search.ts';
import type { DailyRow, MemoryRow } from './memory-row.ts';
import { toDailyRow } from './daily-store.ts';
import { HIGH, type DailyValue } from './recall-dbs.ts';
import { textContent, toSessionRow } from './session-row.ts';

/**
 * The keyword scan over LMDB, newest first, shared by the inline path and the pool's workers.
 * It is a generator that pauses after every `chunk` rows: the inline driver yields the event
 * loop there, a worker just runs it through. Each chunk is its own range read restarted after
 * the last key seen, so no cursor or read snapshot lives across a pause. The scan stops at the
 * `limit`-th match; the matches come back ascending (see keyword-search.ts).
 */
export const SCAN_CHUNK = 2_000;

export type ScanJob<T> = Generator<undefined, T[], void>;

function* scan<K extends Key, V, T>(
  db: Database<V, K>,
  start: Key,
  end: Key,
  contentOf: (value: V) => string,
  toRow: (key: K, value: V) => T,
  keyword: string,
  limit: number,
  chunk: number,
): ScanJob<T> {
  const key = normalizeKeyword(keyword);
  const want = clampLimit(limit);
  const found: T[] = [];
  let from: Key = start;
  let exclusive = false;
  for (;;) {
    let seen = 0;
    for (const entry of db.getRange({ start: from, end, reverse: true, exclusiveStart: exclusive, limit: chunk })) {
      seen++;
      from = entry.key;
      if (key === null || contentOf(entry.value).toLowerCase().includes(key)) {
        found.push(toRow(entry.key, entry.value));
        if (found.length >= want) return found.reverse();
      }
    }
    if (seen < chunk) return found.reverse();
    exclusive = true;
    yield undefined;
  }
}

/** Daily rows of one day, or of every day when `day` is null. */
export function scanDaily(
  db: Database<DailyValue, [string, string, number]>,
  userId: string,
  day: string | null,
  keyword: string,
  limit: number,
  chunk = SCAN_CHUNK,
): ScanJob<DailyRow> {
  const [start, end] = day === null ? [[userId, HIGH], [userId]] : [[userId, day, HIGH], [userId, day]];
  return scan(db, start, end, (v) => v.content, toDailyRow, keyword, limit, chunk);
}

/** The memory layer's LMDB record (`messages` db, JSON `{ts, meta, message}`). */
export interface RawSessionRecord {
  ts: string;
  meta: JsonObject;
  message: Message;
}

/** One session's rows, read straight from the memory layer's `messages` db. */
export function scanSession(
  db: Database<RawSessionRecord, [string, number]>,
  conversationId: string,
  keyword: string,
  limit: number,
  chunk = SCAN_CHUNK,
): ScanJob<MemoryRow> {
  return scan(
    db,
    [conversationId, Infinity],
    [conversationId],
    (v) => textContent(v.message),
    (k, v) => toSessionRow({ message_id: k[1], ts: v.ts, meta: v.meta, message: v.message }),
    keyword,
    limit,
    chunk,
  );
}

/** Runs a scan on the calling thread, letting the event loop run between chunks. */
export async function runYielding<T>(job: ScanJob<T>): Promise<T[]> {
  for (;;) {
    const step = job.next();
    if (step.done) return step.value;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/** Runs a scan to the end without pausing (in a worker, or for a job known to be small). */
export function runThrough<T>(job: ScanJob<T>): T[] {
  for (;;) {
    const step = job.next();
    if (step.done) return step.value;
  }
}
