import { commit, HIGH } from '../recall-dbs.ts';
import type { LmdbContext } from '../lmdb-context.ts';
import type { RowTerms } from '../pool/rank-jobs.ts';
import { rowTerms } from '../pool/rank-worker.ts';
import type { SessionDocKey } from './search-dbs.ts';
import { dailyDoc, sessionDoc } from '../../../search/doc-numbers.ts';
import { liveRemovals, unwatchLiveWrites, watchLiveWrites } from './rebuild-watch.ts';
import { addDocuments, dropUserIndex, reindexLongTerm, setLive, storedRowText } from './search-index.ts';
import { docTermArrays, type TermArrays } from '../../../search/documents.ts';
import { sessionDocKey } from './doc-rows.ts';
import { sessionDocsAfter } from '../session-docs.ts';

/**
 * Rebuilds one user's ranked index from their rows: for data written before the index
 * existed, or by an older Mnemo (an index in an older format: search-dbs.ts `INDEX_FORMAT`),
 * and at the end of a Demo folder import, whose rows wait for it (index-hooks.ts `deferringIndex`).
 *
 * 1. One transaction drops the user's index, indexes the current long-term document and marks
 *    the user live: from then on every write indexes itself, as for a new user.
 * 2. The daily rows, in key order, read and tokenized in batches of `REBUILD_BATCH` (on the
 *    search pool when there is one: the CPU half of a rebuild, the next batch read while one
 *    is written). Batches gather until they hold `REBUILD_POSTINGS` postings (or the rows
 *    end); then they are indexed in one transaction,
 *    grouped by term (one read and one write of a term's tail per transaction, full chunks
 *    written once: search-index.ts `addDocuments`), skipping a row that a live write indexed
 *    meanwhile (rebuild-watch.ts) or that was deleted since it was read, so no row is indexed
 *    twice and no deleted row comes back. Why gather: a write transaction costs about one
 *    `get` and `put` per distinct term it touches, and the batches of a history share most of
 *    their terms (Zipf): 2 000 rows a transaction wrote each common term's tail 100 times for
 *    200 000 rows; ~80 000 rows a transaction, 3 (docs/performance-history.md).
 * 3. The session documents (store/session-docs.ts) the same way, tokenized on the main thread
 *    (an imported folder's rows that no daily file held: few next to the daily rows).
 *
 * A crash midway leaves a live user with part of the rows indexed; the next rebuild (asked
 * for, or the search that finds a user not live: never, once live) starts over, so call
 * `rebuildSearchIndex` again after a crash in a rebuild. One rebuild per user at a time in a
 * process (a second call joins the first).
 */
export const REBUILD_BATCH = 2_000;
/**
 * Postings gathered before a write transaction (~80 000 rows of ~12 terms; ~25 MB of term and
 * tf arrays at most). The transaction runs on the event loop, ~0.3-0.5 s at this size: a
 * rebuild is rare, and live writes wait for it no longer than for a large import's batch.
 */
export const REBUILD_POSTINGS = 1_000_000;

/** A rebuild's batch sizes: rows read a batch (`REBUILD_BATCH`), postings a transaction (`REBUILD_POSTINGS`). Tests make them small. */
export interface RebuildSizes {
  rows?: number;
  postings?: number;
}

const running = new Map<string, Promise<number>>();

export function rebuildUserIndex(deps: Pick<LmdbContext, 'dbs' | 'pool'>, userId: string, sizes: RebuildSizes = {}): Promise<number> {
  let job = running.get(userId);
  if (!job) {
    job = rebuild(deps, userId, sizes.rows ?? REBUILD_BATCH, sizes.postings ?? REBUILD_POSTINGS).finally(() => {
      running.delete(userId);
      unwatchLiveWrites(userId);
    });
    running.set(userId, job);
  }
  return job;
}

async function rebuild(deps: Pick<LmdbContext, 'dbs' | 'pool'>, userId: string, rowsAtOnce: number, postingsAtOnce: number): Promise<number> {
  const { dbs } = deps;
  let live = new Set<number>();
  await commit(dbs, () => {
    live = watchLiveWrites(userId);
    dropUserIndex(dbs.search, userId);
    setLive(dbs.search, userId);
    let current = '';
    for (const { value } of dbs.longTerm.getRange({ start: [userId, HIGH], end: [userId], reverse: true, limit: 1 })) current = value.content;
    reindexLongTerm(dbs.search, userId, '', current);
  });
  let after: [string, number] | null = null;
  let indexed = 0;
  // Read batches gathered for the next transaction, and their postings.
  let gathered: RowTerms[] = [];
  let postings = 0;
  const writeDaily = async (rows: RowTerms[]): Promise<void> => {
    indexed += await commit(dbs, () => {
      const docs: { doc: number; terms: TermArrays }[] = [];
      // Rows are checked for existence only once a row was removed since the rebuild began.
      const removed = liveRemovals(userId) > 0;
      for (const [day, id, terms, tfs, length] of rows) {
        const doc = dailyDoc(day, id);
        if (doc === null || length === 0 || live.has(doc) || (removed && !dbs.daily.doesExist([userId, day, id]))) continue;
        docs.push({ doc, terms: { terms, tfs, length } });
      }
      addDocuments(dbs.search, userId, docs);
      return docs.length;
    });
  };
  const read = (from: [string, number] | null): Promise<RowTerms[]> => {
    const rows = deps.pool ? deps.pool.run({ kind: 'terms', path: dbs.path, userId, after: from, limit: rowsAtOnce }) : Promise.resolve(rowTerms(dbs, userId, from, rowsAtOnce));
    // A read started ahead and left behind by a failed write is no unhandled rejection.
    rows.catch(() => undefined);
    return rows;
  };
  let next = read(after);
  for (;;) {
    const batch = await next;
    if (batch.length === 0) break;
    const last = batch[batch.length - 1]!;
    after = [last[0], last[1]];
    // On the pool, the next batch is read and tokenized while this one is written.
    if (deps.pool) next = read(after);
    for (const row of batch) {
      gathered.push(row);
      postings += row[2].length;
    }
    if (!deps.pool) next = read(after);
    if (postings >= postingsAtOnce) {
      await writeDaily(gathered);
      gathered = [];
      postings = 0;
    }
    // Let the event loop breathe between batches.
    await new Promise((resolve) => setImmediate(resolve));
  }
  if (gathered.length > 0) await writeDaily(gathered);
  // Then the session documents (few: imported rows without daily files), tokenized here.
  let docs: { key: SessionDocKey; doc: number; terms: TermArrays }[] = [];
  postings = 0;
  const writeSessionDocs = async (batchDocs: typeof docs): Promise<void> => {
    indexed += await commit(dbs, () => {
      const kept = batchDocs.filter(({ key, doc, terms }) => terms.length > 0 && !live.has(doc) && dbs.search.sessionDocs.doesExist(key));
      addDocuments(dbs.search, userId, kept);
      return kept.length;
    });
  };
  for (let from: [number, number] | null = null; ; ) {
    const batch = sessionDocsAfter(dbs, userId, from, rowsAtOnce);
    if (batch.length === 0) break;
    for (const { order, id, value } of batch) {
      const doc = sessionDoc(order, id);
      if (doc === null) continue;
      const terms = docTermArrays(storedRowText(value));
      docs.push({ key: sessionDocKey(userId, order, id), doc, terms });
      postings += terms.terms.length;
    }
    const last = batch[batch.length - 1]!;
    from = [last.order, last.id];
    if (postings >= postingsAtOnce) {
      await writeSessionDocs(docs);
      docs = [];
      postings = 0;
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  if (docs.length > 0) await writeSessionDocs(docs);
  return indexed;
}
