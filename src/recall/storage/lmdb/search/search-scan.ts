import type { Database, Key, RootDatabase } from 'lmdb';
import type { JsonObject, Message, StoredMessage } from '../../../../message.ts';
import { clampLimit, normalizeKeyword } from '../../../search/keyword-search.ts';
import type { DailyRecord } from '../../../records/records.ts';
import { HIGH, type DailyValue } from '../recall-dbs.ts';
import { toDailyRecord } from '../record-codec.ts';
import { textContent } from '../../../rows/session-row.ts';

/**
 * The keyword scan over LMDB, newest first, shared by the inline path and the pool's workers.
 * It is a generator that pauses after every `chunk` rows: the inline driver yields the event
 * loop there, a worker just runs it through. Each chunk is its own range read restarted after
 * the last key seen, so no cursor or read snapshot lives across a pause. The scan stops at the
 * `limit`-th match; the matches come back ascending (see keyword-search.ts).
 *
 * At a pause the job yields its matches so far (newest first) and `position` says where it
 * would go on, so a caller can scan the newest chunk itself and hand the rest to the pool.
 */
export const SCAN_CHUNK = 2_000;

export type ScanJob<T> = Generator<readonly T[], T[], void>;

/** Where a paused scan goes on: newest first from `key`, exclusive once a row was seen. */
export interface ScanPosition<K extends Key> {
  key: K;
  exclusive: boolean;
}

/**
 * A JSON db as two handles: values decoded, and values as their raw JSON text (one char per
 * byte, latin1: no copy of the bytes, no decoding), which the prefilter reads.
 */
export interface ScanSource<K extends Key, V> {
  json: Database<V, K>;
  text: Database<string, K>;
}

/**
 * A test on a row's raw JSON text that passes every row whose content matches `key` (and some
 * that do not: the match is then checked on the decoded row). Rows it fails are skipped
 * without decoding, which is most of the cost of a scan. Undefined when no such test is safe.
 *
 * Why it never fails a match: for a key of printable ASCII without `"` or `\`, a pure-ASCII
 * row's content appears in its JSON text verbatim wherever the key can match (JSON escapes only
 * `"`, `\` and control characters), and lowercasing ASCII content is ASCII case folding, which
 * `/i` does too. A row with any other byte (non-ASCII text folds in other ways) or with list
 * content (text parts joined across JSON) always passes.
 */
export function rawPrefilter(key: string | null): RegExp | undefined {
  if (key === null || !/^[\x20-\x7e]+$/.test(key) || key.includes('"') || key.includes('\\')) return undefined;
  return new RegExp(`${key.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&')}|[^\\x00-\\x7f]|"content":\\[`, 'i');
}

const NON_ASCII = /[^\x00-\x7f]/;

function decodeText<V>(text: string): V {
  return JSON.parse(NON_ASCII.test(text) ? Buffer.from(text, 'latin1').toString('utf8') : text) as V;
}

function* scan<K extends Key, V, T>(
  source: ScanSource<K, V>,
  position: ScanPosition<Key>,
  end: Key,
  contentOf: (value: V) => string,
  toRow: (key: K, value: V) => T,
  keyword: string,
  limit: number,
  chunk: number,
): ScanJob<T> {
  const key = normalizeKeyword(keyword);
  const prefilter = rawPrefilter(key);
  const want = clampLimit(limit);
  const found: T[] = [];
  const consider = (rowKey: K, value: V): boolean => {
    if (key === null || contentOf(value).toLowerCase().includes(key)) found.push(toRow(rowKey, value));
    return found.length >= want;
  };
  for (;;) {
    let seen = 0;
    const range = { start: position.key, end, reverse: true, exclusiveStart: position.exclusive, limit: chunk };
    if (prefilter === undefined) {
      for (const entry of source.json.getRange(range)) {
        seen++;
        position.key = entry.key;
        position.exclusive = true;
        if (consider(entry.key, entry.value)) return found.reverse();
      }
    } else {
      for (const entry of source.text.getRange(range)) {
        seen++;
        position.key = entry.key;
        position.exclusive = true;
        if (prefilter.test(entry.value) && consider(entry.key, decodeText<V>(entry.value))) return found.reverse();
      }
    }
    if (seen < chunk) return found.reverse();
    yield found;
  }
}

/** Daily rows of one day, or of every day when `day` is null; after `position` if given (it
 * is updated as the scan goes). */
export function scanDaily(
  db: ScanSource<[string, string, number], DailyValue>,
  userId: string,
  day: string | null,
  keyword: string,
  limit: number,
  position: ScanPosition<Key> = { key: day === null ? [userId, HIGH] : [userId, day, HIGH], exclusive: false },
  chunk = SCAN_CHUNK,
): ScanJob<DailyRecord> {
  const end = day === null ? [userId] : [userId, day];
  return scan(db, position, end, (v) => v.content, (k, v) => toDailyRecord(k[1], k[2], v), keyword, limit, chunk);
}

/** The memory layer's LMDB record (`messages` db, JSON `{ts, meta, message}`). */
export interface RawSessionRecord {
  ts: string;
  meta: JsonObject;
  message: Message;
}

/** One session's rows with ids below `before`, read straight from the memory layer's `messages`
 * db; `position` (updated as the scan goes) says where it got to. */
export function scanSession(
  db: ScanSource<[string, number], RawSessionRecord>,
  conversationId: string,
  keyword: string,
  limit: number,
  before = Infinity,
  position: ScanPosition<Key> = { key: [conversationId, before], exclusive: true },
  chunk = SCAN_CHUNK,
): ScanJob<StoredMessage> {
  return scan(
    db,
    position,
    [conversationId],
    (v) => textContent(v.message),
    (k, v): StoredMessage => ({ message_id: k[1], ts: v.ts, meta: v.meta, message: v.message }),
    keyword,
    limit,
    chunk,
  );
}

/**
 * How a scan of `rows` rows runs: at once when small; yielding the event loop between chunks
 * when there is no pool or the scan is not large; otherwise its newest chunk here (a common
 * keyword is answered there, without a worker round trip) and the rest on the pool, which
 * `rest` asks for with the number of matches still wanted.
 */
export async function runScan<T>(
  job: ScanJob<T>,
  rows: number,
  offload: boolean,
  rest: (wanted: number) => Promise<T[]>,
  limit: number,
): Promise<T[]> {
  if (rows <= SCAN_CHUNK) return runThrough(job);
  if (!offload) return runYielding(job);
  const newest = job.next();
  if (newest.done) return newest.value;
  const found = newest.value.slice().reverse();
  return [...(await rest(clampLimit(limit) - found.length)), ...found];
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
