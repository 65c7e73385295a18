import { commit, HIGH } from '../recall-dbs.ts';
import type { LmdbContext } from '../lmdb-context.ts';
import type { RowTerms } from '../pool/rank-jobs.ts';
import { rowTerms } from '../pool/rank-worker.ts';
import type { SessionDocKey } from './search-dbs.ts';
import { dailyDoc, sessionDoc } from '../../../search/doc-numbers.ts';
import { unwatchLiveWrites, watchLiveWrites } from './rebuild-watch.ts';
import { addDocuments, dropUserIndex, reindexLongTerm, setLive, storedRowText } from './search-index.ts';
import { docTerms, type DocTerms } from '../../../search/documents.ts';
import { sessionDocKey } from './doc-rows.ts';
import { sessionDocsAfter } from '../session-docs.ts';

/**
 * Rebuilds one user's ranked index from their rows: for data written before the index
 * existed, or by an older Mnemo (an index in an older format: search-dbs.ts `INDEX_FORMAT`). (Imports into a user index as they write, like chat turns.)
 *
 * 1. One transaction drops the user's index, indexes the current long-term document and marks
 *    the user live: from then on every write indexes itself, as for a new user.
 * 2. The daily rows, in key order, in batches of `REBUILD_BATCH`: each batch is tokenized (on
 *    the search pool when there is one: the CPU half of a rebuild), then indexed in one
 *    transaction, grouped by term (one write per term per batch, search-index.ts
 *    `addDocuments`), skipping a row that a live write indexed meanwhile (rebuild-watch.ts) or that was deleted
 *    since it was read, so no row is indexed twice and no deleted row comes back.
 * 3. The session documents (store/session-docs.ts) the same way, tokenized on the main thread
 *    (an imported folder's rows that no daily file held: few next to the daily rows).
 *
 * A crash midway leaves a live user with part of the rows indexed; the next rebuild (asked
 * for, or the search that finds a user not live: never, once live) starts over, so call
 * `rebuildSearchIndex` again after a crash in a rebuild. One rebuild per user at a time in a
 * process (a second call joins the first).
 */
export const REBUILD_BATCH = 2_000;

const running = new Map<string, Promise<number>>();

export function rebuildUserIndex(deps: Pick<LmdbContext, 'dbs' | 'pool'>, userId: string): Promise<number> {
  let job = running.get(userId);
  if (!job) {
    job = rebuild(deps, userId).finally(() => {
      running.delete(userId);
      unwatchLiveWrites(userId);
    });
    running.set(userId, job);
  }
  return job;
}

async function rebuild(deps: Pick<LmdbContext, 'dbs' | 'pool'>, userId: string): Promise<number> {
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
  for (;;) {
    const batch: RowTerms[] = deps.pool
      ? await deps.pool.run({ kind: 'terms', path: dbs.path, userId, after, limit: REBUILD_BATCH })
      : rowTerms(dbs, userId, after, REBUILD_BATCH);
    if (batch.length === 0) break;
    indexed += await commit(dbs, () => {
      const docs: { doc: number; terms: DocTerms }[] = [];
      for (const [day, id, pairs, length] of batch) {
        const doc = dailyDoc(day, id);
        if (doc === null || length === 0 || !dbs.daily.doesExist([userId, day, id])) continue;
        const terms = { terms: new Map(pairs), length };
        if (live.has(doc)) continue;
        docs.push({ doc, terms });
      }
      addDocuments(dbs.search, userId, docs);
      return docs.length;
    });
    const last = batch[batch.length - 1]!;
    after = [last[0], last[1]];
    // Let the event loop breathe between batches.
    await new Promise((resolve) => setImmediate(resolve));
  }
  // Then the session documents (few: imported rows without daily files), tokenized here.
  for (let from: [number, number] | null = null; ; ) {
    const batch = sessionDocsAfter(dbs, userId, from, REBUILD_BATCH);
    if (batch.length === 0) return indexed;
    const docs: { key: SessionDocKey; doc: number; terms: DocTerms }[] = [];
    for (const { order, id, value } of batch) {
      const doc = sessionDoc(order, id);
      if (doc !== null) docs.push({ key: sessionDocKey(userId, order, id), doc, terms: docTerms(storedRowText(value)) });
    }
    indexed += await commit(dbs, () => {
      const kept = docs.filter(({ key, doc, terms }) => terms.length > 0 && !live.has(doc) && dbs.search.sessionDocs.doesExist(key));
      addDocuments(dbs.search, userId, kept);
      return kept.length;
    });
    const last = batch[batch.length - 1]!;
    from = [last.order, last.id];
    await new Promise((resolve) => setImmediate(resolve));
  }
}
