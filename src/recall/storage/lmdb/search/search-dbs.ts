import type { Database, RootDatabase } from 'lmdb';
import type { DailyValue } from '../stored-values.ts';

/**
 * The named LMDB databases of the ranked index, in the recall environment. Every key starts
 * with the user id (erasing a user's key prefix erases their index too):
 *
 * | db                      | key                              | value                          |
 * |-------------------------|----------------------------------|--------------------------------|
 * | recall.search-postings  | [userId, term, firstDoc]         | full chunk (posting-list.ts)   |
 * |                         | [userId, term, TAIL]             | the chunk being appended to    |
 * |                         | [userId, PENDING, doc]           | a document not merged yet      |
 * | recall.search-meta      | [userId, 'stats']                | [docs, length, pending]        |
 * |                         | [userId, 'live']                 | number                         |
 * |                         | [userId, SESSION_DOC, order, id] | DailyValue: a session document |
 *
 * A term's postings are its full chunks in doc order, then its tail chunk: appending a newer
 * document is one `get` and one `put` of the tail, no cursor; a full tail moves to its
 * `firstDoc` key. An older document (an import, a row a crash left unmirrored) is inserted in
 * the chunk that covers it, which splits when it overflows.
 *
 * A document's number IS its row's key, so the index stores no map from documents to rows:
 * a daily row `[day, id]` is `(days since 1900-01-01 + 1) × 2^22 + id`, a long-term line `n` is
 * `n` (below 2^22). Daily ids from 2^22 up (four million rows in one day) are not indexed.
 * A session document (a session row no daily row holds: an imported session without its daily
 * files, store/session-docs.ts) is `(SESSION_SLOT + order) × 2^22 + id`, `order` its session's
 * creation order (sessions-index.ts, below 2^25) and `id` the row's anchor (below 2^22); its
 * row, with its session and anchor, is kept under `[userId, SESSION_DOC, order, id]` in the meta
 * db, since no other db holds it in a form the index can read (the pool's workers too).
 * `SESSION_SLOT` (2^25) is past every calendar day's slot (year 9999 is ~2^21.5), and every
 * number stays below 2^48, what a posting chunk holds (posting-list.ts).
 * `stats` holds BM25's N (`docs`) and total length, and the documents appended to the pending
 * log since its last merge (search-index.ts), in one entry: a write reads and writes it once.
 * `live` is `INDEX_FORMAT` when the user's writes index themselves (set for a user with no rows
 * yet, and by a rebuild). A user without it has rows from before the index, or an index in an
 * older format, and is rebuilt (rebuild.ts) at their first search; until then their writes are
 * not indexed and their old postings are never read. Older formats: 1 (`live` 1, plain doc
 * deltas, no pending log, and a tokenizer without the final-`i` rule) and 2 (`live` 2, the
 * totals in three entries `docs`, `length`, `pending`).
 */
export const INDEX_FORMAT = 3;

/** The meta key of a user's totals. */
export const STATS = 'stats';

/** `[docs, length, pending]`: BM25's N and total document length, the pending log's appended count. */
export type IndexStats = [docs: number, length: number, pending: number];

/** The pending log's "term": the tokenizer never makes an empty term. */
export const PENDING = '';

export const SEARCH_DB_NAMES = {
  postings: 'recall.search-postings',
  meta: 'recall.search-meta',
} as const;

/** The key of a term's tail chunk: after every doc number. */
export const TAIL = 2 ** 53 - 1;

export { MAX_DOC } from '../../../search/doc-numbers.ts';

/** The meta key part of a session document: `[userId, SESSION_DOC, order, id]`. */
export const SESSION_DOC = 'session-doc';
export type SessionDocKey = [string, typeof SESSION_DOC, number, number];

export interface SearchDbs {
  postings: Database<Buffer, [string, string, number]>;
  /** `live` (a number) and `stats` (`IndexStats`). */
  meta: Database<number | IndexStats, [string, string]>;
  /** The session documents' rows (in `meta`, under their own keys). */
  sessionDocs: Database<DailyValue, SessionDocKey>;
  /** `postings` read as Latin-1 text, for the pending log's blocks (pending-log.ts `forEachMatch`). Read only. */
  pendingText: Database<string, [string, string, number]>;
}

/** A value as Latin-1 text, decoded at once from lmdb-js's shared read buffer (no copy first). */
const LATIN1 = {
  encode: () => {
    throw new Error(`${SEARCH_DB_NAMES.postings}: the Latin-1 handle is read only`);
  },
  // `get` passes its options, not the size: the shared buffer's `length` is the value's then
  // (Node 24's toString reads past it without an end).
    decode: (bytes: Buffer, size: unknown) => bytes.toString('latin1', 0, typeof size === 'number' ? size : bytes.length),
};

export function openSearchDbs(env: RootDatabase): SearchDbs {
  return {
    postings: env.openDB(SEARCH_DB_NAMES.postings, { encoding: 'binary' }),
    meta: env.openDB(SEARCH_DB_NAMES.meta, { encoding: 'json' }),
    sessionDocs: env.openDB(SEARCH_DB_NAMES.meta, { encoding: 'json' }),
    pendingText: env.openDB<string, [string, string, number]>(SEARCH_DB_NAMES.postings, { encoding: 'binary', encoder: LATIN1 } as never),
  };
}
