import type { DailyValue } from '../store/recall-dbs.ts';
import { appendPosting, CHUNK_POSTINGS, chunkCount, chunkFirstDoc, chunkLastDoc, decodeChunk, encodeChunk, withPosting, type Posting } from './posting-list.ts';
import { dailyDoc, longTermDoc, MAX_DOC, TAIL, type SearchDbs } from './search-dbs.ts';
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
 * change, and the tokenizer is deterministic). Whether a document is indexed is read from its
 * first term's postings, so removing one that never was (written before the index) is a no-op.
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

function bump(search: SearchDbs, userId: string, name: 'docs' | 'length', by: number): void {
  search.meta.put([userId, name], (search.meta.get([userId, name]) ?? 0) + by);
}

export function isLive(search: SearchDbs, userId: string): boolean {
  return search.meta.get([userId, 'live']) === 1;
}

export function setLive(search: SearchDbs, userId: string): void {
  search.meta.put([userId, 'live'], 1);
}

type ChunkEntry = { key: [string, string, number]; value: Buffer };

/** The chunk whose range covers `doc` (the tail, or the full chunk keyed at or below it), if any. */
function chunkCovering(search: SearchDbs, userId: string, term: string, doc: number): ChunkEntry | undefined {
  const tail = search.postings.get([userId, term, TAIL]);
  if (tail !== undefined && chunkFirstDoc(tail) <= doc) return { key: [userId, term, TAIL], value: tail };
  for (const entry of search.postings.getRange({ start: [userId, term, doc], end: [userId, term], reverse: true, limit: 1 })) return entry;
  return undefined;
}

/** Stores `postings` (ascending) as the chunk at `key`, re-keyed or split as its range requires. */
function putChunk(search: SearchDbs, key: [string, string, number], postings: Posting[]): void {
  const [userId, term, at] = key;
  if (postings.length === 0) {
    search.postings.remove(key);
    return;
  }
  if (at === TAIL) {
    if (postings.length < CHUNK_POSTINGS) search.postings.put(key, encodeChunk(postings));
    else {
      search.postings.remove(key);
      search.postings.put([userId, term, postings[0]!.doc], encodeChunk(postings));
    }
    return;
  }
  const first = postings[0]!.doc;
  if (first < at) search.postings.remove(key);
  if (postings.length <= CHUNK_POSTINGS) {
    search.postings.put(first < at ? [userId, term, first] : key, encodeChunk(postings));
    return;
  }
  const half = postings.length >> 1;
  search.postings.put(first < at ? [userId, term, first] : key, encodeChunk(postings.slice(0, half)));
  search.postings.put([userId, term, postings[half]!.doc], encodeChunk(postings.slice(half)));
}

function addPosting(search: SearchDbs, userId: string, term: string, p: Posting): void {
  const tailKey: [string, string, number] = [userId, term, TAIL];
  const tail = search.postings.get(tailKey);
  if (tail === undefined) {
    // No tail: a new term, or one whose last chunk just filled up (then `p` is newer than all).
    let covering: ChunkEntry | undefined;
    for (const entry of search.postings.getRange({ start: [userId, term, p.doc], end: [userId, term], reverse: true, limit: 1 })) covering = entry;
    const newest = covering === undefined ? firstChunk(search, userId, term) === undefined : chunkLastDoc(covering.value) < p.doc && nextChunk(search, covering.key) === undefined;
    if (newest) search.postings.put(tailKey, encodeChunk([p]));
    else insertInto(search, userId, term, p);
    return;
  }
  if (p.doc > chunkLastDoc(tail)) {
    // The common case: a newer document, appended to the tail.
    if (chunkCount(tail) + 1 < CHUNK_POSTINGS) search.postings.put(tailKey, appendPosting(tail, p));
    else {
      search.postings.put([userId, term, chunkFirstDoc(tail)], appendPosting(tail, p));
      search.postings.remove(tailKey);
    }
    return;
  }
  insertInto(search, userId, term, p);
}

/** An older document: into the chunk covering it, or the first chunk when it precedes them all. */
function insertInto(search: SearchDbs, userId: string, term: string, p: Posting): void {
  const target = chunkCovering(search, userId, term, p.doc) ?? firstChunk(search, userId, term);
  if (target === undefined) {
    search.postings.put([userId, term, TAIL], encodeChunk([p]));
    return;
  }
  putChunk(search, target.key, withPosting(decodeChunk(target.value), p));
}

function firstChunk(search: SearchDbs, userId: string, term: string): ChunkEntry | undefined {
  for (const entry of search.postings.getRange({ start: [userId, term], end: [userId, term, MAX_DOC], limit: 1 })) return entry;
  return undefined;
}

function nextChunk(search: SearchDbs, key: [string, string, number]): ChunkEntry | undefined {
  for (const entry of search.postings.getRange({ start: key, end: [key[0], key[1], MAX_DOC], exclusiveStart: true, limit: 1 })) return entry;
  return undefined;
}

/** Inside a write transaction: adds document `doc` (see search-dbs.ts for numbering). */
export function addDocument(search: SearchDbs, userId: string, doc: number, terms: DocTerms): void {
  if (terms.length === 0) return;
  for (const [term, tf] of terms.terms) addPosting(search, userId, term, { doc, tf, len: terms.length });
  bump(search, userId, 'docs', 1);
  bump(search, userId, 'length', terms.length);
}

/** Whether `doc` is indexed (its first term holds it). */
export function isIndexed(search: SearchDbs, userId: string, doc: number, terms: DocTerms): boolean {
  const first = terms.terms.keys().next();
  if (first.done) return false;
  const chunk = chunkCovering(search, userId, first.value, doc);
  return chunk !== undefined && decodeChunk(chunk.value).some((p) => p.doc === doc);
}

/** Inside a write transaction: removes document `doc`, whose text was `text`. No-op when not indexed. */
export function removeDocument(search: SearchDbs, userId: string, doc: number, text: string): void {
  const terms = docTerms(text);
  if (!isIndexed(search, userId, doc, terms)) return;
  for (const term of terms.terms.keys()) {
    const chunk = chunkCovering(search, userId, term, doc);
    if (chunk === undefined) continue;
    const postings = decodeChunk(chunk.value);
    const kept = postings.filter((p) => p.doc !== doc);
    if (kept.length !== postings.length) putChunk(search, chunk.key, kept);
  }
  bump(search, userId, 'docs', -1);
  bump(search, userId, 'length', -terms.length);
}

/** Inside a write transaction: a daily row just stored as `[userId, day, id]`. */
export function indexDailyRow(search: SearchDbs, userId: string, day: string, id: number, value: DailyValue): void {
  const doc = dailyDoc(day, id);
  if (doc !== null) addDocument(search, userId, doc, docTerms(dailyRowText(value)));
}

export function unindexDailyRow(search: SearchDbs, userId: string, day: string, id: number, value: DailyValue): void {
  const doc = dailyDoc(day, id);
  if (doc !== null) removeDocument(search, userId, doc, dailyRowText(value));
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
  for (const { line, text } of longTermLines(before)) {
    const doc = longTermDoc(line);
    if (doc !== null) removeDocument(search, userId, doc, text);
  }
  for (const { line, text } of longTermLines(after)) {
    const doc = longTermDoc(line);
    if (doc !== null) addDocument(search, userId, doc, docTerms(text));
  }
}

/** Inside a write transaction: drops every index key of the user (a rebuild starts here). */
export function dropUserIndex(search: SearchDbs, userId: string): void {
  const high = '\uffff';
  for (const key of [...search.postings.getKeys({ start: [userId], end: [userId, high] })]) search.postings.remove(key);
  for (const name of ['docs', 'length', 'live'] as const) search.meta.remove([userId, name]);
}
