import { commit } from '../recall-dbs.ts';
import type { LmdbContext } from '../lmdb-context.ts';
import { joinPerUser, storedDocBatches, type DocBatch } from './backfill-walk.ts';
import { currentLongTerm } from '../long-term-store.ts';
import { rowTerms } from '../pool/rank-worker.ts';
import { dailyDoc } from '../../../search/doc-numbers.ts';
import { docTermArrays, type TermArrays } from '../../../search/documents.ts';
import { sessionDocKey } from './doc-rows.ts';
import { HeldPostings } from './held-postings.ts';
import { liveRemovals, othersIndexWrites, unwatchLiveWrites, watchLiveWrites } from './rebuild-watch.ts';
import { addDocuments, dropUserIndex, reindexLongTerm, setLive, storedRowText } from './search-index.ts';

/**
 * The ranked index's consumer of the backfill walk (backfill-walk.ts): rebuilds one user's
 * index from their rows, for data written before the index existed, or by an older Mnemo (an
 * index in an older format: search-dbs.ts `INDEX_FORMAT`), and at the end of a Demo folder
 * import, whose rows wait for it (index-hooks.ts `deferringIndex`).
 *
 * 1. One transaction drops the user's index, indexes the current long-term document and marks
 *    the user live: from then on every write indexes itself, as for a new user.
 * 2. The walk's batches of `REBUILD_BATCH` rows are read and tokenized (a daily batch on the
 *    search pool when there is one: the CPU half of a rebuild, the next batch tokenized while
 *    one is written; the few session documents on the main thread). Every `REBUILD_POSTINGS`
 *    postings, a transaction writes them, in one of two ways:
 *    - holding (held-postings.ts), while no other write touched the user's index since the
 *      rebuild began (rebuild-watch.ts): the postings are grouped by term as they come, and a
 *      transaction writes only the chunks that filled; the terms' tails are written by the
 *      last one. A term is then written about once for the whole rebuild, and no tail is read.
 *      When another write came (a live turn, a removal, an erasure, a long-term edit) or a row
 *      came out of doc order, the rebuild starts over, gathering;
 *    - gathering: the batches' documents are indexed in one transaction, grouped by term
 *      (search-index.ts `addDocuments`), skipping a row that a live write indexed meanwhile or
 *      that was deleted since it was read (a daily row is looked up only once some row of the
 *      user was removed since the rebuild began), so no row is indexed twice and no deleted
 *      row comes back. Gathering, because a write transaction costs about one `get` and `put`
 *      per distinct term it touches and the batches of a history share most of their terms
 *      (Zipf; docs/performance-history.md).
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

type Deps = Pick<LmdbContext, 'dbs' | 'pool'>;

/** A read row's document, and whether its row is still stored (checked inside the write). */
interface Tokenized {
  doc: number;
  terms: TermArrays;
  postings: number;
  stored: () => boolean;
}

const join = joinPerUser<number>();

export function rebuildUserIndex(deps: Deps, userId: string, sizes: RebuildSizes = {}): Promise<number> {
  const run = () => rebuild(deps, userId, sizes.rows ?? REBUILD_BATCH, sizes.postings ?? REBUILD_POSTINGS).finally(() => unwatchLiveWrites(userId));
  return join(userId, run);
}

async function rebuild(deps: Deps, userId: string, rowsAtOnce: number, postingsAtOnce: number): Promise<number> {
  return (await rebuildHolding(deps, userId, rowsAtOnce, postingsAtOnce)) ?? (await rebuildGathering(deps, userId, rowsAtOnce, postingsAtOnce));
}

/** Step 1: the user's index dropped, their long-term document indexed, the user live; the live writes watched from then on. */
async function start({ dbs }: Deps, userId: string): Promise<Set<number>> {
  let live = new Set<number>();
  await commit(dbs, () => {
    dropUserIndex(dbs.search, userId);
    setLive(dbs.search, userId);
    reindexLongTerm(dbs.search, userId, '', currentLongTerm(dbs, userId));
    // After the rebuild's own long-term documents: they are no other write.
    live = watchLiveWrites(userId);
  });
  return live;
}

/** The user's tokenized batches, each read while the one before is written (a batch's rows are tokenized ahead). */
async function* tokenizedBatches(deps: Deps, userId: string, rowsAtOnce: number): AsyncGenerator<Tokenized[]> {
  const batches = storedDocBatches(deps.dbs, userId, rowsAtOnce);
  const tokenizeNext = (): Promise<Tokenized[]> | undefined => {
    const step = batches.next();
    if (step.done === true) return undefined;
    const docs = tokenize(deps, userId, step.value);
    // Tokenized ahead and left behind by a failed write is no unhandled rejection.
    docs.catch(() => undefined);
    return docs;
  };
  for (let next = tokenizeNext(); next !== undefined; ) {
    const docs = await next;
    next = tokenizeNext();
    yield docs;
    // Let the event loop breathe between batches.
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/**
 * The rebuild while no other write touches the user's index (search/held-postings.ts: the
 * terms' tails held in memory across transactions). `undefined` when one did, or a row came
 * out of doc order: the caller starts over, gathering (what it wrote is dropped then).
 */
async function rebuildHolding(deps: Deps, userId: string, rowsAtOnce: number, postingsAtOnce: number): Promise<number | undefined> {
  const { dbs } = deps;
  await start(deps, userId);
  const held = new HeldPostings();
  const write = (last: boolean): Promise<boolean> =>
    commit(dbs, () => {
      // An erasure removes the user's rows and index keys directly (user-erasure.ts): a removal.
      if (othersIndexWrites(userId) > 0 || liveRemovals(userId) > 0) return false;
      if (last) held.writeAll(dbs.search, userId);
      else held.writeFull(dbs.search, userId);
      return true;
    });
  let indexed = 0;
  let postings = 0;
  for await (const docs of tokenizedBatches(deps, userId, rowsAtOnce)) {
    for (const d of docs) {
      if (!held.add(d.doc, d.terms)) return undefined;
      if (d.terms.length > 0) indexed++;
      postings += d.postings;
    }
    if (postings >= postingsAtOnce) {
      if (!(await write(false))) return undefined;
      postings = 0;
    }
  }
  return (await write(true)) ? indexed : undefined;
}

/**
 * The rebuild that shares the index with other writes: batches gathered up to
 * `postingsAtOnce` postings, each gathering merged into the lists by `addDocuments`.
 */
async function rebuildGathering(deps: Deps, userId: string, rowsAtOnce: number, postingsAtOnce: number): Promise<number> {
  const { dbs } = deps;
  const live = await start(deps, userId);
  let indexed = 0;
  const write = async (docs: Tokenized[]): Promise<void> => {
    indexed += await commit(dbs, () => {
      const kept = docs.filter((d) => d.terms.length > 0 && !live.has(d.doc) && d.stored());
      addDocuments(dbs.search, userId, kept);
      return kept.length;
    });
  };
  let gathered: Tokenized[] = [];
  let postings = 0;
  for await (const docs of tokenizedBatches(deps, userId, rowsAtOnce)) {
    for (const d of docs) {
      gathered.push(d);
      postings += d.postings;
    }
    if (postings >= postingsAtOnce) {
      await write(gathered);
      gathered = [];
      postings = 0;
    }
  }
  if (gathered.length > 0) await write(gathered);
  return indexed;
}

async function tokenize({ dbs, pool }: Deps, userId: string, batch: DocBatch): Promise<Tokenized[]> {
  if (batch.kind === 'session') {
    const out: Tokenized[] = [];
    for (const { doc, order, id } of batch.rows) {
      const key = sessionDocKey(userId, order, id);
      const value = dbs.search.sessionDocs.get(key);
      if (value === undefined) continue;
      const terms = docTermArrays(storedRowText(value));
      out.push({ doc, terms, postings: terms.terms.length, stored: () => dbs.search.sessionDocs.doesExist(key) });
    }
    return out;
  }
  const rows = batch.rows.map(({ day, id }): [string, number] => [day, id]);
  const tokenized = pool ? await pool.run({ kind: 'terms', path: dbs.path, userId, rows }) : rowTerms(dbs, userId, rows);
  return tokenized.map(([day, id, terms, tfs, length]) => ({
    doc: dailyDoc(day, id)!,
    terms: { terms, tfs, length },
    postings: terms.length,
    stored: () => liveRemovals(userId) === 0 || dbs.daily.doesExist([userId, day, id]),
  }));
}
