import type { Database } from 'lmdb';
import type { DailyValue, LongTermValue } from '../recall-dbs.ts';
import { chunkCount, forEachPosting } from './posting-list.ts';
import { MAX_DOC, PENDING, type SearchDbs } from './search-dbs.ts';
import { readStats } from './search-index.ts';
import { bloomProbes, forEachMatch, mayHold, termNeedle } from './pending-log.ts';
import { averageLength, bm25Idf, bm25Term } from '../../../search/bm25.ts';
import { docRef } from '../../../search/doc-numbers.ts';
import { longTermLines } from '../../../search/documents.ts';
import { dayPasses, hasFilters, longTermPasses, rowPasses, type RankedFilters } from '../../../search/rank-filters.ts';
import { topK } from '../../../search/top-k.ts';
import type { RankedDoc } from '../../recall-store.ts';
import { docRecord, docRow } from './doc-rows.ts';

/**
 * The read side of the ranked index in LMDB: BM25 as search/bm25.ts defines it, over the
 * query's distinct terms, read as range scans of their packed posting chunks and the pending
 * log, then the best documents in score order (a bounded heap; ties: lower document first),
 * filtered as search/rank-filters.ts defines it. Read only, with no state of its own: the main
 * thread and the pool's workers run the same code on their own handles.
 *
 * Filters are checked on the best-scored documents first and the walk goes down the ranking
 * until `limit` pass, so a selective filter costs more reads, never a wrong order.
 */
export interface SearchReader {
  search: SearchDbs;
  daily: Database<DailyValue, [string, string, number]>;
  longTerm: Database<LongTermValue, [string, number]>;
}

export interface RankedQuery {
  userId: string;
  terms: readonly string[];
  filters: RankedFilters;
  limit: number;
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
  const avgdl = averageLength(n, length);
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
    const idf = bm25Idf(n, df);
    for (const value of chunks) {
      forEachPosting(value, (doc, tf, len) => scores.set(doc, (scores.get(doc) ?? 0) + bm25Term(idf, tf, len, avgdl)));
    }
    for (let i = 0; i < waiting.length; i += 3) {
      const doc = waiting[i]!;
      scores.set(doc, (scores.get(doc) ?? 0) + bm25Term(idf, waiting[i + 1]!, waiting[i + 2]!, avgdl));
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

/** The best `limit` documents passing the filters, best first, daily ones with their row. */
export function rankedDocs(reader: SearchReader, q: RankedQuery): RankedDoc[] {
  if (q.terms.length === 0 || q.limit <= 0) return [];
  const scores = scoreTerms(reader.search, q.userId, q.terms);
  if (scores.size === 0) return [];
  const filtered = hasFilters(q.filters);
  const rowReader = { daily: reader.daily, sessionDocs: reader.search.sessionDocs };
  const out: RankedDoc[] = [];
  let longTerm: { content: string; day: string } | undefined | null = null;
  // Unfiltered, the top `limit` suffice (a few spare for a document removed in between);
  // filtered, widen the heap until enough pass or every candidate was seen.
  let k = filtered ? Math.max(q.limit * 8, 64) : q.limit + 4;
  let seen = 0;
  for (;;) {
    const ranked = topK(scores, k);
    for (let i = seen; i < ranked.length && out.length < q.limit; i++) {
      const [doc, score] = ranked[i]!;
      const ref = docRef(doc);
      if (ref.kind === 'long_term') {
        if (longTerm === null) longTerm = currentLongTerm(reader, q.userId);
        if (longTerm === undefined || !longTermPasses(q.filters, longTerm.day)) continue;
        if (!longTermLines(longTerm.content).some((l) => l.line === ref.line)) continue;
        out.push({ doc, score });
        continue;
      }
      if (ref.kind === 'daily' && !dayPasses(q.filters, ref.day)) continue;
      const found = docRow(rowReader, q.userId, ref);
      if (found === undefined || !dayPasses(q.filters, found.day)) continue;
      const row = docRecord(found);
      if (!rowPasses(q.filters, row)) continue;
      out.push({ doc, score, row });
    }
    if (out.length >= q.limit || ranked.length < k || k >= scores.size) return out;
    seen = ranked.length;
    k *= 4;
  }
}

export function currentLongTerm(reader: Pick<SearchReader, 'longTerm'>, userId: string): { content: string; day: string; ts: string } | undefined {
  for (const { value } of reader.longTerm.getRange({ start: [userId, MAX_DOC], end: [userId], reverse: true, limit: 1 })) {
    return { content: value.content, day: value.ts.slice(0, 10), ts: value.ts };
  }
  return undefined;
}
