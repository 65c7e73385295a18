import type { DailyValue } from '../recall-dbs.ts';
import { appendPosting, appendRun, CHUNK_POSTINGS, chunkCount, chunkFirstDoc, chunkLastDoc, decodeChunk, encodeChunk, encodeRun, withPosting, type Posting, type PostingRun } from './posting-list.ts';
import { INDEX_FORMAT, MAX_DOC, PENDING, STATS, TAIL, type IndexStats, type SearchDbs } from './search-dbs.ts';
import { dailyDoc, longTermDoc, sessionDoc } from '../../../search/doc-numbers.ts';
import { dailyRowText, docTerms, longTermLines, type DocTerms, type TermArrays } from '../../../search/documents.ts';
import { appendRecord, forEachRecordTerm, withoutDoc } from './pending-log.ts';
import { noteIndexWrite, noteLiveRemoval, noteLiveWrite } from './rebuild-watch.ts';

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
 * transaction, and their postings with them: a deleted memory never matches. A session row no
 * daily row holds (an imported session without its daily files) is a session document of its
 * own (store/session-docs.ts), indexed in the import's transaction that stores it.
 *
 * Long-term memory is indexed one line per document (a line is one fact, and a hit names it),
 * reindexed whole in the transaction of every write or undo.
 *
 * A document's terms are not stored: removal tokenizes the row's text again (rows never
 * change, and the tokenizer is deterministic). Whether a document is indexed is read from its
 * pending record or its first term's postings, so removing one that never was (written before
 * the index) is a no-op.
 *
 * The pending log (why a write touches one small entry, not one per term): a new document is
 * appended as one record (its terms, pending-log.ts) to the log's current block
 * `[userId, PENDING, n]`, `PENDING_BLOCK` documents a block. When `PENDING_MAX` documents were
 * appended, the write that appends the last one merges the whole log into the posting lists
 * in its own transaction, grouped by term and in key order: one read and one write of a term's
 * tail for all of its new postings, and each B-tree page copied once for many documents
 * (per-document postings dirtied ~12 pages per document, each written at its commit). A merge
 * costs about one `get` and `put` per distinct term, so the longer the log, the less a row pays
 * (rows share terms: 8.5 distinct terms a row per 256 rows of the bench corpus, 6.3 per 1 024).
 * Queries read the log's blocks beside the chunks (`PENDING_MAX / PENDING_BLOCK` values, an
 * `indexOf` per term only in the blocks whose Bloom filter may hold it: pending-log.ts), so a
 * document is found from its own commit on. The rebuild merges its batches the same way,
 * without the log. A write reads and writes the user's totals once (`readStats`: one entry).
 */
/** Documents appended to the pending log before it is merged; and to one of its blocks. */
export const PENDING_MAX = 1024;
export const PENDING_BLOCK = 32;

/** The user's index totals (search-dbs.ts `IndexStats`): zeros before their first document. */
export function readStats(search: SearchDbs, userId: string): IndexStats {
  const v = search.meta.get([userId, STATS]);
  return Array.isArray(v) ? [v[0], v[1], v[2]] : [0, 0, 0];
}

function writeStats(search: SearchDbs, userId: string, stats: IndexStats): void {
  search.meta.put([userId, STATS], stats);
}

/** Adds `docs` documents of `length` tokens in all to the user's totals (their postings written straight to the lists). */
export function countDocuments(search: SearchDbs, userId: string, docs: number, length: number): void {
  if (docs === 0) return;
  const stats = readStats(search, userId);
  stats[0] += docs;
  stats[1] += length;
  writeStats(search, userId, stats);
}

/** Whether the user's writes index themselves, in this format (an older format's user is rebuilt). */
export function isLive(search: SearchDbs, userId: string): boolean {
  return search.meta.get([userId, 'live']) === INDEX_FORMAT;
}

export function setLive(search: SearchDbs, userId: string): void {
  search.meta.put([userId, 'live'], INDEX_FORMAT);
}

type ChunkEntry = { key: [string, string, number]; value: Buffer };

/** The chunk whose range covers `doc` (the tail, or the full chunk keyed at or below it), if any. */
function chunkCovering(search: SearchDbs, userId: string, term: string, doc: number): ChunkEntry | undefined {
  const tail = search.postings.get([userId, term, TAIL]);
  if (tail !== undefined && chunkFirstDoc(tail) <= doc) return { key: [userId, term, TAIL], value: tail };
  for (const entry of search.postings.getRange({ start: [userId, term, doc], end: [userId, term], reverse: true, limit: 1 })) return entry;
  return undefined;
}

/**
 * Stores `postings` (ascending) as the chunk at `key`, re-keyed or split as its range requires.
 * A term with postings always has its tail (so a missing tail means a new term, with no range
 * read): a tail that overflows keeps its newest postings, and an emptied tail takes over the
 * last full chunk.
 */
function putChunk(search: SearchDbs, key: [string, string, number], postings: Posting[]): void {
  const [userId, term, at] = key;
  if (at === TAIL) {
    if (postings.length === 0) {
      search.postings.remove(key);
      for (const last of search.postings.getRange({ start: key, end: [userId, term], reverse: true, limit: 1 })) {
        search.postings.remove(last.key);
        search.postings.put(key, last.value);
      }
    } else if (postings.length <= CHUNK_POSTINGS) search.postings.put(key, encodeChunk(postings));
    else {
      search.postings.put([userId, term, postings[0]!.doc], encodeChunk(postings.slice(0, CHUNK_POSTINGS)));
      search.postings.put(key, encodeChunk(postings.slice(CHUNK_POSTINGS)));
    }
    return;
  }
  if (postings.length === 0) {
    search.postings.remove(key);
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
    // No tail: a new term.
    search.postings.put(tailKey, encodeChunk([p]));
    return;
  }
  if (p.doc > chunkLastDoc(tail)) {
    // The common case: a newer document, appended to the tail.
    if (chunkCount(tail) < CHUNK_POSTINGS) search.postings.put(tailKey, appendPosting(tail, p));
    else {
      search.postings.put([userId, term, chunkFirstDoc(tail)], tail);
      search.postings.put(tailKey, encodeChunk([p]));
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

/** Stores the ascending run's postings from `from` on as new chunks after all of the term's: full ones at their first doc, the rest (at least one) as the tail. */
export function putNewChunks(search: SearchDbs, userId: string, term: string, run: PostingRun, from = 0): void {
  const n = run.length / 3;
  let at = from;
  while (n - at > CHUNK_POSTINGS) {
    search.postings.put([userId, term, run[at * 3]!], encodeRun(run, at, at + CHUNK_POSTINGS));
    at += CHUNK_POSTINGS;
  }
  search.postings.put([userId, term, TAIL], encodeRun(run, at, n));
}

/** Adds a term's ascending run of postings: one read and one write of the tail when they are all newer. */
function addPostings(search: SearchDbs, userId: string, term: string, run: PostingRun): void {
  const tailKey: [string, string, number] = [userId, term, TAIL];
  const tail = search.postings.get(tailKey);
  if (tail === undefined) {
    putNewChunks(search, userId, term, run); // a new term
    return;
  }
  const n = run.length / 3;
  if (run[0]! > chunkLastDoc(tail)) {
    const room = CHUNK_POSTINGS - chunkCount(tail);
    if (n <= room) search.postings.put(tailKey, appendRun(tail, run));
    else {
      search.postings.put([userId, term, chunkFirstDoc(tail)], room > 0 ? appendRun(tail, run, 0, room) : tail);
      putNewChunks(search, userId, term, run, room);
    }
    return;
  }
  // Older documents among them: one by one, into the chunks that cover them.
  for (let i = 0; i < run.length; i += 3) addPosting(search, userId, term, { doc: run[i]!, tf: run[i + 1]!, len: run[i + 2]! });
}

/**
 * Inside a write transaction: indexes `docs` (no doc indexed already) straight into the
 * posting lists, grouped by term (the rebuild's path).
 */
export function addDocuments(search: SearchDbs, userId: string, docs: readonly { doc: number; terms: TermArrays }[]): void {
  const byTerm = new Map<string, PostingRun>();
  let length = 0;
  let n = 0;
  // The rebuild's come in key order, which is doc order: sorted only when they are not.
  let sorted = true;
  for (let i = 1; i < docs.length && sorted; i++) sorted = docs[i - 1]!.doc < docs[i]!.doc;
  for (const { doc, terms: d } of sorted ? docs : [...docs].sort((a, b) => a.doc - b.doc)) {
    if (d.length === 0) continue;
    n++;
    length += d.length;
    const { terms, tfs } = d;
    for (let i = 0; i < terms.length; i++) {
      const term = terms[i]!;
      const run = byTerm.get(term);
      if (run) run.push(doc, tfs[i]!, d.length);
      else byTerm.set(term, [doc, tfs[i]!, d.length]);
    }
  }
  mergePostings(search, userId, byTerm);
  countDocuments(search, userId, n, length);
}

function mergePostings(search: SearchDbs, userId: string, byTerm: Map<string, PostingRun>): void {
  // In key order: neighbouring tails share pages.
  for (const term of [...byTerm.keys()].sort()) addPostings(search, userId, term, byTerm.get(term)!);
}

/** Inside a write transaction: moves every document of the pending log into the posting lists. */
export function mergePending(search: SearchDbs, userId: string): void {
  noteIndexWrite(userId);
  mergePendingLog(search, userId);
  const stats = readStats(search, userId);
  stats[2] = 0;
  writeStats(search, userId, stats);
}

/** `mergePending` but for the stats' pending count (the caller's to reset). */
function mergePendingLog(search: SearchDbs, userId: string): void {
  const byTerm = new Map<string, PostingRun>();
  const keys: [string, string, number][] = [];
  // Per term, its postings in log order: ascending unless a document older than one before it
  // was indexed (an import, a repaired row), sorted then.
  let ordered = true;
  const visit = (term: string, doc: number, tf: number, len: number): void => {
    const run = byTerm.get(term);
    if (run === undefined) byTerm.set(term, [doc, tf, len]);
    else {
      if (doc < run[run.length - 3]!) ordered = false;
      run.push(doc, tf, len);
    }
  };
  for (const { key, value } of search.postings.getRange({ start: [userId, PENDING], end: [userId, PENDING, MAX_DOC] })) {
    keys.push(key);
    forEachRecordTerm(value, visit);
  }
  if (!ordered) for (const [term, run] of byTerm) byTerm.set(term, sortedRun(run));
  mergePostings(search, userId, byTerm);
  for (const key of keys) search.postings.remove(key);
}

/** The run in doc order (the merge of a log that took an older document: rare). */
function sortedRun(run: PostingRun): PostingRun {
  const order = Array.from({ length: run.length / 3 }, (_, i) => i).sort((a, b) => run[a * 3]! - run[b * 3]!);
  return order.flatMap((i) => [run[i * 3]!, run[i * 3 + 1]!, run[i * 3 + 2]!]);
}

/** Inside a write transaction: adds document `doc` (see search-dbs.ts for numbering), through the pending log. */
export function addDocument(search: SearchDbs, userId: string, doc: number, terms: DocTerms): void {
  if (terms.length === 0) return;
  noteIndexWrite(userId);
  // One read and one write of the totals, one of the log's block.
  const stats = readStats(search, userId);
  const key: [string, string, number] = [userId, PENDING, Math.floor(stats[2] / PENDING_BLOCK)];
  search.postings.put(key, appendRecord(search.postings.get(key), doc, terms.length, terms.terms));
  stats[0] += 1;
  stats[1] += terms.length;
  stats[2] += 1;
  if (stats[2] >= PENDING_MAX) {
    mergePendingLog(search, userId);
    stats[2] = 0;
  }
  writeStats(search, userId, stats);
}

/** Removes `doc`'s record from the pending log; whether it held one. */
function removePending(search: SearchDbs, userId: string, doc: number): boolean {
  for (const { key, value } of search.postings.getRange({ start: [userId, PENDING], end: [userId, PENDING, MAX_DOC] })) {
    const rest = withoutDoc(value, doc);
    if (rest === null) continue;
    if (rest === undefined) search.postings.remove(key);
    else search.postings.put(key, rest);
    return true;
  }
  return false;
}

/** Whether `doc` is in the posting lists (its first term holds it); the pending log is not read (merge it first). */
export function isIndexed(search: SearchDbs, userId: string, doc: number, terms: DocTerms): boolean {
  const first = terms.terms.keys().next();
  if (first.done) return false;
  const chunk = chunkCovering(search, userId, first.value, doc);
  return chunk !== undefined && decodeChunk(chunk.value).some((p) => p.doc === doc);
}

/** Inside a write transaction: removes document `doc`, whose text was `text`. No-op when not indexed. */
export function removeDocument(search: SearchDbs, userId: string, doc: number, text: string): void {
  noteIndexWrite(userId);
  const terms = docTerms(text);
  if (!removePending(search, userId, doc)) {
    if (!isIndexed(search, userId, doc, terms)) return;
    removePostings(search, userId, doc, terms);
  }
  const stats = readStats(search, userId);
  stats[0] -= 1;
  stats[1] -= terms.length;
  writeStats(search, userId, stats);
}

function removePostings(search: SearchDbs, userId: string, doc: number, terms: DocTerms): void {
  for (const term of terms.terms.keys()) {
    const chunk = chunkCovering(search, userId, term, doc);
    if (chunk === undefined) continue;
    const postings = decodeChunk(chunk.value);
    const kept = postings.filter((p) => p.doc !== doc);
    if (kept.length !== postings.length) putChunk(search, chunk.key, kept);
  }
}

/** Inside a write transaction: a daily row just stored as `[userId, day, id]`. */
export function indexDailyRow(search: SearchDbs, userId: string, day: string, id: number, value: DailyValue): void {
  const doc = dailyDoc(day, id);
  if (doc === null) return;
  addDocument(search, userId, doc, docTerms(storedRowText(value)));
  noteLiveWrite(userId, doc);
}

export function unindexDailyRow(search: SearchDbs, userId: string, day: string, id: number, value: DailyValue): void {
  noteLiveRemoval(userId);
  const doc = dailyDoc(day, id);
  if (doc !== null) removeDocument(search, userId, doc, storedRowText(value));
}

/** Inside a write transaction: a session document `[order, id]` (session-docs.ts) just stored. */
export function indexSessionDoc(search: SearchDbs, userId: string, order: number, id: number, value: DailyValue): void {
  const doc = sessionDoc(order, id);
  if (doc === null) return;
  addDocument(search, userId, doc, docTerms(storedRowText(value)));
  noteLiveWrite(userId, doc);
}

export function unindexSessionDoc(search: SearchDbs, userId: string, order: number, id: number, value: DailyValue): void {
  const doc = sessionDoc(order, id);
  if (doc !== null) removeDocument(search, userId, doc, storedRowText(value));
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
  // With format 2's separate totals ('docs', 'length', 'pending').
  for (const name of [STATS, 'live', 'docs', 'length', 'pending']) search.meta.remove([userId, name]);
}

/** A stored daily value's document text (search/documents.ts). */
export function storedRowText(value: Pick<DailyValue, 'content' | 'tool_calls'>): string {
  return dailyRowText({ content: value.content, ...(value.tool_calls === undefined ? {} : { toolCalls: value.tool_calls }) });
}

export type { DocTerms };
