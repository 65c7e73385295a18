import type { Database } from 'lmdb';
import type { DailyValue, LongTermValue } from '../store/recall-dbs.ts';
import { chunkCount, forEachPosting } from './posting-list.ts';
import { docRef, MAX_DOC, PENDING, type SearchDbs } from './search-dbs.ts';
import { longTermLines, readStats } from './search-index.ts';
import { bloomProbes, forEachMatch, mayHold, termNeedle } from './pending-log.ts';
import { makeSnippet } from './snippet.ts';
import { docRow, type DocRow } from './doc-rows.ts';
import { tokenize } from './tokenizer.ts';
import { topK } from './top-k.ts';

/**
 * The read side of the ranked index: BM25 (k1 = 1.2, b = 0.75, Lucene's idf
 * `ln(1 + (N - df + 0.5) / (df + 0.5))`) over the query's distinct terms, read as range scans
 * of their packed posting chunks, then the best documents in score order (a bounded heap),
 * filtered, with a snippet from the row's text. Read only, with no state of its own: the main
 * thread and the pool's workers run the same code on their own handles.
 *
 * Filters are checked on the best-scored documents first and the walk goes down the ranking
 * until `limit` hits pass, so a selective filter costs more reads, never a wrong order.
 */
export interface SearchReader {
  search: SearchDbs;
  daily: Database<DailyValue, [string, string, number]>;
  longTerm: Database<LongTermValue, [string, number]>;
}

export interface RankedFilters {
  sessionId?: string;
  day?: string;
  /** Inclusive `YYYY-MM-DD` bounds. */
  from?: string;
  to?: string;
  roles?: string[];
  tool?: string;
}

export interface RankedQuery extends RankedFilters {
  userId: string;
  query: string;
  limit: number;
}

export interface SearchHit {
  /** The session the row belongs to; `null` for a daily row no session wrote, and for long-term memory. */
  sessionId: string | null;
  /** The anchor: the session row id (`sessionWindow`), else the daily id, or the long-term line (from 1). */
  messageId: number;
  day: string;
  score: number;
  snippet: string;
  /** `session`: a session row (through its daily entry, or its own document when it has none); `daily`: a daily row without a session; `long_term`: a line of long-term memory. */
  source: 'session' | 'daily' | 'long_term';
  /** The row's role; `memory` for long-term memory. */
  role: string;
  ts: string;
  /** The row's anchor in its day (`dailyWindow`); absent for long-term memory, and for a
   * session row no daily row holds (an imported session without its daily files). */
  dailyMessageId?: number;
}

const K1 = 1.2;
const B = 0.75;

/** The distinct terms of a query, in order. */
export function queryTerms(query: string): string[] {
  return [...new Set(tokenize(query))];
}

/** Postings the query would read (chunks × their counts are not read: keys only × the chunk cap). */
export function postingEstimate(search: SearchDbs, userId: string, terms: readonly string[]): number {
  let chunks = 0;
  for (const term of terms) {
    if (term === PENDING) continue;
    for (const _ of search.postings.getKeys({ start: [userId, term], end: [userId, term, MAX_DOC] })) chunks++;
  }
  return chunks * 128;
}

/** Document → BM25 score, for every document holding at least one term. */
export function scoreTerms(search: SearchDbs, userId: string, terms: readonly string[]): Map<number, number> {
  const scores = new Map<number, number>();
  const [n, length] = readStats(search, userId);
  if (n === 0) return scores;
  const avgdl = length / n || 1;
  const pending = pendingMatches(search, userId, terms);
  for (let t = 0; t < terms.length; t++) {
    const term = terms[t]!;
    const chunks: Buffer[] = [];
    const waiting = pending[t]!;
    let df = waiting.length / 3;
    for (const { value } of search.postings.getRange({ start: [userId, term], end: [userId, term, MAX_DOC] })) {
      chunks.push(value);
      df += chunkCount(value);
    }
    if (df === 0) continue;
    const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
    const norm = K1 * (1 - B);
    const perLength = (K1 * B) / avgdl;
    for (const value of chunks) {
      forEachPosting(value, (doc, tf, len) => {
        const s = (idf * tf * (K1 + 1)) / (tf + norm + perLength * len);
        scores.set(doc, (scores.get(doc) ?? 0) + s);
      });
    }
    for (let i = 0; i < waiting.length; i += 3) {
      const doc = waiting[i]!;
      const tf = waiting[i + 1]!;
      const s = (idf * tf * (K1 + 1)) / (tf + norm + perLength * waiting[i + 2]!);
      scores.set(doc, (scores.get(doc) ?? 0) + s);
    }
  }
  return scores;
}

/** Per query term, the pending log's documents holding it, as flat (doc, tf, length) triples. */
function pendingMatches(search: SearchDbs, userId: string, terms: readonly string[]): number[][] {
  const out = terms.map((): number[] => []);
  const needles = terms.map(termNeedle);
  const probes = terms.map(bloomProbes);
  for (const { value } of search.pendingText.getRange({ start: [userId, PENDING], end: [userId, PENDING, MAX_DOC] })) {
    for (let t = 0; t < terms.length; t++) {
      if (!mayHold(value, probes[t]!)) continue;
      const list = out[t]!;
      forEachMatch(value, needles[t]!, (doc, tf, length) => list.push(doc, tf, length));
    }
  }
  return out;
}

export function rankedSearch(reader: SearchReader, q: RankedQuery): SearchHit[] {
  const terms = queryTerms(q.query);
  if (terms.length === 0 || q.limit <= 0) return [];
  const scores = scoreTerms(reader.search, q.userId, terms);
  if (scores.size === 0) return [];
  const wanted = new Set(terms);
  const filtered = hasFilters(q);
  const rowReader = { daily: reader.daily, sessionDocs: reader.search.sessionDocs };
  const hits: SearchHit[] = [];
  let longTerm: { content: string; day: string; ts: string } | undefined | null = null;
  // Unfiltered, the top `limit` suffice (a few spare for a document removed in between);
  // filtered, widen the heap until enough pass or every candidate was seen.
  let k = filtered ? Math.max(q.limit * 8, 64) : q.limit + 4;
  let seen = 0;
  for (;;) {
    const ranked = topK(scores, k);
    for (let i = seen; i < ranked.length && hits.length < q.limit; i++) {
      const [doc, score] = ranked[i]!;
      const ref = docRef(doc);
      if (ref.kind === 'long_term') {
        if (longTerm === null) longTerm = currentLongTerm(reader, q.userId);
        if (longTerm === undefined || !longTermPasses(q, longTerm.day)) continue;
        const line = longTermLines(longTerm.content).find((l) => l.line === ref.line);
        if (!line) continue;
        hits.push({
          sessionId: null,
          messageId: ref.line,
          day: longTerm.day,
          score: round(score),
          snippet: makeSnippet(line.text, wanted),
          source: 'long_term',
          role: 'memory',
          ts: longTerm.ts,
        });
        continue;
      }
      if (ref.kind === 'daily' && !dayPasses(q, ref.day)) continue;
      const row = docRow(rowReader, q.userId, ref);
      if (row === undefined || !dayPasses(q, row.day) || !rowPasses(q, row.value)) continue;
      hits.push(rowHit(row, round(score), snippetOf(row.value, wanted)));
    }
    if (hits.length >= q.limit || ranked.length < k || k >= scores.size) return hits;
    seen = ranked.length;
    k *= 4;
  }
}

/** The hit of a daily row or session document (doc-rows.ts). */
export function rowHit(row: DocRow, score: number, snippet: string): SearchHit {
  const { value, day, dailyId } = row;
  const inSession = value.session_id !== null && value.session_message_id !== null;
  return {
    sessionId: value.session_id,
    messageId: inSession ? value.session_message_id! : dailyId!,
    day,
    score,
    snippet,
    source: inSession ? 'session' : 'daily',
    role: value.role,
    ts: value.ts,
    ...(dailyId === undefined ? {} : { dailyMessageId: dailyId }),
  };
}

export function hasFilters(q: RankedFilters): boolean {
  return (
    q.sessionId !== undefined ||
    q.day !== undefined ||
    q.from !== undefined ||
    q.to !== undefined ||
    q.roles !== undefined ||
    q.tool !== undefined
  );
}

export function dayPasses(q: RankedFilters, day: string): boolean {
  if (q.day !== undefined && day !== q.day) return false;
  if (q.from !== undefined && day < q.from) return false;
  if (q.to !== undefined && day > q.to) return false;
  return true;
}

export function longTermPasses(q: RankedFilters, day: string): boolean {
  if (q.sessionId !== undefined || q.tool !== undefined) return false;
  if (q.roles !== undefined && !q.roles.includes('memory')) return false;
  return dayPasses(q, day);
}

export function rowPasses(q: RankedFilters, value: DailyValue): boolean {
  if (q.sessionId !== undefined && value.session_id !== q.sessionId) return false;
  if (q.roles !== undefined && !q.roles.includes(value.role)) return false;
  if (q.tool !== undefined && !(value.tool_calls ?? []).some((c) => c.name === q.tool)) return false;
  return true;
}

export function snippetOf(value: DailyValue, wanted: ReadonlySet<string>): string {
  const fromContent = makeSnippet(value.content, wanted, true);
  if (fromContent !== '' || !value.tool_calls?.length) return fromContent || makeSnippet(value.content, wanted);
  for (const call of value.tool_calls) {
    for (const part of [call.input, call.output]) {
      const s = makeSnippet(part, wanted, true);
      if (s !== '') return `${call.name}: ${s}`;
    }
  }
  return makeSnippet(value.content, wanted);
}

export function currentLongTerm(reader: Pick<SearchReader, 'longTerm'>, userId: string): { content: string; day: string; ts: string } | undefined {
  for (const { value } of reader.longTerm.getRange({ start: [userId, MAX_DOC], end: [userId], reverse: true, limit: 1 })) {
    return { content: value.content, day: value.ts.slice(0, 10), ts: value.ts };
  }
  return undefined;
}

function round(score: number): number {
  return Math.round(score * 10_000) / 10_000;
}
