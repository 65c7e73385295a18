import type { Database, RootDatabase } from 'lmdb';

/**
 * The named LMDB databases of the ranked index, in the recall environment. Every key starts
 * with the user id (erasing a user's key prefix erases their index too):
 *
 * | db                      | key                              | value                           |
 * |-------------------------|----------------------------------|---------------------------------|
 * | recall.search-postings  | [userId, term, firstDoc]         | full chunk (posting-list.ts)    |
 * |                         | [userId, term, TAIL]             | the chunk being appended to     |
 * | recall.search-docs      | [userId, doc]                    | DocRef                          |
 * | recall.search-rows      | [userId, day, dailyId]           | doc                             |
 * |                         | [userId, '~long-term', line]     | doc                             |
 * | recall.search-meta      | [userId, 'docs' / 'length' / 'seq' / 'live'] | number          |
 *
 * A term's postings are its full chunks in doc order, then its tail chunk (fewer than
 * `CHUNK_POSTINGS`): appending is one `get` and one `put` of the tail, no cursor; a full tail
 * moves to its `firstDoc` key. `doc` is a per-user number (1, 2, 3, ...: `seq`), so posting lists only ever grow at their
 * end. `docs` and `length` are BM25's N and total length. `live`: the user's writes index
 * themselves (set for a user with no rows yet, and by a rebuild); a user without it has rows
 * from before the index and needs `rebuildSearchIndex` (search does it on first use).
 */
export const SEARCH_DB_NAMES = {
  postings: 'recall.search-postings',
  docs: 'recall.search-docs',
  rows: 'recall.search-rows',
  meta: 'recall.search-meta',
} as const;

/** Sorts after every doc number and every line number. */
export const MAX_DOC = 2 ** 32;

/** The key of a term's tail chunk: after every doc number. */
export const TAIL = 2 ** 32 - 1;

export const LONG_TERM_ROWS = '~long-term';

/** A document: a daily row `[day, dailyId, length]`, or a line of long-term memory `['~long-term', line, length]`. */
export type DocRef = [string, number, number];

export interface SearchDbs {
  postings: Database<Buffer, [string, string, number]>;
  docs: Database<DocRef, [string, number]>;
  rows: Database<number, [string, string, number]>;
  meta: Database<number, [string, string]>;
}

export function openSearchDbs(env: RootDatabase): SearchDbs {
  return {
    postings: env.openDB(SEARCH_DB_NAMES.postings, { encoding: 'binary' }),
    docs: env.openDB(SEARCH_DB_NAMES.docs, { encoding: 'json' }),
    rows: env.openDB(SEARCH_DB_NAMES.rows, { encoding: 'json' }),
    meta: env.openDB(SEARCH_DB_NAMES.meta, { encoding: 'json' }),
  };
}
