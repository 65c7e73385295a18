import type { DailyValue } from '../recall-dbs.ts';
import { appendPosting, CHUNK_POSTINGS, chunkCount, chunkFirstDoc, decodeChunk, encodeChunk } from './posting-list.ts';
import { LONG_TERM_ROWS, MAX_DOC, TAIL, type DocRef, type SearchDbs } from './search-dbs.ts';
import { tokenize } from './tokenizer.ts';

/**
 * The write side of the ranked index. Every function here runs INSIDE the LMDB write
 * transaction that writes (or removes) the rows it indexes, so rows and index commit together:
 * a crash never leaves a row without its postings or postings without their row.
 *
 * Which transaction: session rows are indexed through their daily mirror entry. A session row
 * and its daily row hold the same text and tool calls, and the daily row names the session
 * and the session row id, so one document serves both views, and the daily row is written in
 * a recall transaction (`putDailyRow`), where the index can join it. The session row itself is
 * committed earlier by its conversation actor, in the MessageLog; the daily mirror's watermark
 * (daily-mirror.ts) already guarantees every session row gets its daily row, after a crash too,
 * so it guarantees the row's postings as well. Deleting a session removes its daily rows in one
 * transaction, and their postings with them: a deleted memory never matches.
 *
 * Long-term memory is indexed one line per document (a line is one fact, and a hit names it),
 * reindexed whole in the transaction of every write or undo.
 *
 * A document's terms are not stored: removal tokenizes the row's text again (rows never
 * change, and the tokenizer is deterministic), and the stored length checks it.
 */
export function dailyRowText(value: Pick<DailyValue, 'content' | 'tool_calls'>): string {
  if (!value.tool_calls || value.tool_calls.length === 0) return value.content;
  const parts = [value.content];
  for (const call of value.tool_calls) parts.push(call.name, call.input, call.output);
  return parts.join('\n');
}

/** Term → frequency, and the document's length in tokens. */
export interface DocTerms {
  terms: Map<string, number>;
  length: number;
}

export function docTerms(text: string): DocTerms {
  const tokens = tokenize(text);
  const terms = new Map<string, number>();
  for (const t of tokens) terms.set(t, (terms.get(t) ?? 0) + 1);
  return { terms, length: tokens.length };
}

function bump(search: SearchDbs, userId: string, name: 'docs' | 'length' | 'seq', by: number): number {
  const n = (search.meta.get([userId, name]) ?? 0) + by;
  search.meta.put([userId, name], n);
  return n;
}

export function isLive(search: SearchDbs, userId: string): boolean {
  return search.meta.get([userId, 'live']) === 1;
}

export function setLive(search: SearchDbs, userId: string): void {
  search.meta.put([userId, 'live'], 1);
}

/** Inside a write transaction: adds a document with `rowKey` (`[day, id]` or `['~long-term', line]`). */
export function addDocument(search: SearchDbs, userId: string, rowKey: [string, number], doc: DocTerms): void {
  if (doc.length === 0) return;
  const n = bump(search, userId, 'seq', 1);
  for (const [term, tf] of doc.terms) {
    const posting = { doc: n, tf, len: doc.length };
    const tail = search.postings.get([userId, term, TAIL]);
    if (tail === undefined) {
      search.postings.put([userId, term, TAIL], encodeChunk([posting]));
    } else if (chunkCount(tail) + 1 < CHUNK_POSTINGS) {
      search.postings.put([userId, term, TAIL], appendPosting(tail, posting));
    } else {
      // Full: the chunk takes its permanent key, and the tail starts empty again.
      search.postings.put([userId, term, chunkFirstDoc(tail)], appendPosting(tail, posting));
      search.postings.remove([userId, term, TAIL]);
    }
  }
  const ref: DocRef = [rowKey[0], rowKey[1], doc.length];
  search.docs.put([userId, n], ref);
  search.rows.put([userId, rowKey[0], rowKey[1]], n);
  bump(search, userId, 'docs', 1);
  bump(search, userId, 'length', doc.length);
}

/** Inside a write transaction: removes the document of `rowKey`, whose text was `text`. No-op when not indexed. */
export function removeDocument(search: SearchDbs, userId: string, rowKey: [string, number], text: string): void {
  const n = search.rows.get([userId, rowKey[0], rowKey[1]]);
  if (n === undefined) return;
  const ref = search.docs.get([userId, n]);
  const { terms } = docTerms(text);
  for (const term of terms.keys()) {
    // The tail when it holds `n`, else the full chunk with the greatest firstDoc <= n.
    let found: { key: [string, string, number]; value: Buffer } | undefined;
    const tail = search.postings.get([userId, term, TAIL]);
    if (tail !== undefined && chunkFirstDoc(tail) <= n) found = { key: [userId, term, TAIL], value: tail };
    else {
      for (const entry of search.postings.getRange({ start: [userId, term, n], end: [userId, term], reverse: true, limit: 1 })) found = entry;
    }
    if (found === undefined) continue;
    const postings = decodeChunk(found.value);
    const kept = postings.filter((p) => p.doc !== n);
    if (kept.length === postings.length) continue;
    if (kept.length === 0) search.postings.remove(found.key);
    else search.postings.put(found.key, encodeChunk(kept));
  }
  search.docs.remove([userId, n]);
  search.rows.remove([userId, rowKey[0], rowKey[1]]);
  bump(search, userId, 'docs', -1);
  bump(search, userId, 'length', -(ref?.[2] ?? 0));
}

/** Inside a write transaction: a daily row just stored as `[userId, day, id]`. */
export function indexDailyRow(search: SearchDbs, userId: string, day: string, id: number, value: DailyValue): void {
  addDocument(search, userId, [day, id], docTerms(dailyRowText(value)));
}

export function unindexDailyRow(search: SearchDbs, userId: string, day: string, id: number, value: DailyValue): void {
  removeDocument(search, userId, [day, id], dailyRowText(value));
}

/** The lines of a long-term document that become documents: non-blank, numbered from 1. */
export function longTermLines(document: string): { line: number; text: string }[] {
  return document
    .split('\n')
    .map((text, i) => ({ line: i + 1, text }))
    .filter((l) => l.text.trim() !== '');
}

/** Inside a write transaction: the long-term document changed from `before` to `after`. */
export function reindexLongTerm(search: SearchDbs, userId: string, before: string, after: string): void {
  for (const { line, text } of longTermLines(before)) removeDocument(search, userId, [LONG_TERM_ROWS, line], text);
  for (const { line, text } of longTermLines(after)) addDocument(search, userId, [LONG_TERM_ROWS, line], docTerms(text));
}

/** Inside a write transaction: drops every index key of the user (a rebuild starts here). */
export function dropUserIndex(search: SearchDbs, userId: string): void {
  const high = '\uffff';
  for (const key of [...search.postings.getKeys({ start: [userId], end: [userId, high] })]) search.postings.remove(key);
  for (const key of [...search.docs.getKeys({ start: [userId], end: [userId, MAX_DOC] })]) search.docs.remove(key);
  for (const key of [...search.rows.getKeys({ start: [userId], end: [userId, high] })]) search.rows.remove(key);
  for (const name of ['docs', 'length', 'seq', 'live'] as const) search.meta.remove([userId, name]);
}
