import { currentLongTerm, rowHit, snippetOf, type SearchHit, type SearchReader } from '../storage/lmdb/search/bm25-query.ts';
import { docRow } from '../storage/lmdb/search/doc-rows.ts';
import { docRef } from '../storage/lmdb/search/search-dbs.ts';
import { longTermLines } from '../storage/lmdb/search/search-index.ts';
import { makeSnippet } from '../search/snippet.ts';

/**
 * A search hit for a document found by its vector alone (no query term in it): the same shape
 * as a BM25 hit (bm25-query.ts), its snippet from the row's start (or around a query term when
 * one occurs after all). `undefined` when the row is gone.
 */
export function hitOfDoc(reader: SearchReader, userId: string, doc: number, score: number, wanted: ReadonlySet<string>): SearchHit | undefined {
  const ref = docRef(doc);
  if (ref.kind === 'long_term') {
    const lt = currentLongTerm(reader, userId);
    const line = lt === undefined ? undefined : longTermLines(lt.content).find((l) => l.line === ref.line);
    if (lt === undefined || line === undefined) return undefined;
    return { sessionId: null, messageId: ref.line, day: lt.day, score, snippet: makeSnippet(line.text, wanted), source: 'long_term', role: 'memory', ts: lt.ts };
  }
  const row = docRow({ daily: reader.daily, sessionDocs: reader.search.sessionDocs }, userId, ref);
  return row === undefined ? undefined : rowHit(row, score, snippetOf(row.value, wanted));
}
