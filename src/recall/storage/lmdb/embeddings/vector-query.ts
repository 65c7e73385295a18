import type { Database } from 'lmdb';
import { currentLongTerm } from '../search/bm25-query.ts';
import { docRef, MAX_DOC } from '../../../search/doc-numbers.ts';
import { longTermLines } from '../../../search/documents.ts';
import { dayPasses, hasFilters, longTermPasses, rowPasses, type RankedFilters } from '../../../search/rank-filters.ts';
import { topK } from '../../../search/top-k.ts';
import type { LongTermValue } from '../recall-dbs.ts';
import { docRecord, docRow, type RowReader } from '../search/doc-rows.ts';
import type { ItemKey } from './embed-dbs.ts';
import { cosineWith, textHash, vectorHash } from '../../../search/vector-codec.ts';
import { matrixScores, type UserMatrix } from './vector-cache.ts';

/**
 * The vector side of hybrid recall: cosine similarity of the query's vector with every vector
 * of the user's documents (brute force: one range scan of `recall.embed-vectors`, a dot product
 * per row, the best in a bounded heap), the search's filters applied to the best first, walking
 * down until `n` pass (like the BM25 side). A long-term line's vector counts only while its
 * text is the one embedded (the stored hash). Read only: the main thread and the pool's
 * workers run it on their own handles; the main thread passes its cached matrix of the
 * user's vectors (vector-cache.ts) instead of the range scan.
 */
export interface VectorReader extends RowReader {
  vectors: Database<Buffer, ItemKey>;
  longTerm: Database<LongTermValue, [string, number]>;
}

/** The best `n` documents passing `filters`: `[doc, cosine]`, best first. */
export function vectorRanking(reader: VectorReader, userId: string, query: Float32Array, filters: RankedFilters, n: number, cached?: UserMatrix): [number, number][] {
  let scores: Map<number, number>;
  if (cached !== undefined) scores = matrixScores(cached, query);
  else {
    scores = new Map();
    for (const { key, value } of reader.vectors.getRange({ start: [userId, 'd'], end: [userId, 'd', MAX_DOC] })) {
      scores.set(key[2], cosineWith(value, query));
    }
  }
  if (scores.size === 0 || n <= 0) return [];
  const filtered = hasFilters(filters);
  let lines: Map<number, string> | null = null;
  let longTermDay = '';
  const out: [number, number][] = [];
  let k = filtered ? Math.max(n * 4, 64) : n + 8;
  let seen = 0;
  for (;;) {
    const ranked = topK(scores, k);
    for (let i = seen; i < ranked.length && out.length < n; i++) {
      const [doc, score] = ranked[i]!;
      const ref = docRef(doc);
      if (ref.kind === 'long_term') {
        if (lines === null) {
          const lt = currentLongTerm(reader, userId);
          longTermDay = lt?.day ?? '';
          lines = new Map(lt === undefined ? [] : longTermLines(lt.content).map((l) => [l.line, l.text]));
        }
        const text = lines.get(ref.line);
        const stored = reader.vectors.get([userId, 'd', doc]);
        if (text === undefined || stored === undefined || vectorHash(stored) !== textHash(text)) continue;
        if (filtered && !longTermPasses(filters, longTermDay)) continue;
        out.push([doc, score]);
        continue;
      }
      if (filtered) {
        if (ref.kind === 'daily' && !dayPasses(filters, ref.day)) continue;
        const row = docRow(reader, userId, ref);
        if (row === undefined || !dayPasses(filters, row.day) || !rowPasses(filters, docRecord(row))) continue;
      }
      out.push([doc, score]);
    }
    if (out.length >= n || ranked.length < k || k >= scores.size) return out;
    seen = ranked.length;
    k *= 4;
  }
}

/** Vectors of the user's documents (what decides inline or pool). */
export function vectorCount(vectors: Database<Buffer, ItemKey>, userId: string): number {
  return vectors.getCount({ start: [userId, 'd'], end: [userId, 'd', MAX_DOC] });
}
