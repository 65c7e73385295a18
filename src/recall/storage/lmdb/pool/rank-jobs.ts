import type { RankedDoc } from '../../recall-store.ts';
import type { RankedQuery } from '../search/bm25-query.ts';

/**
 * The ranked index's work for the search pool's workers (search-worker.ts): large queries, and
 * the tokenizing half of a rebuild. Workers only read; the rebuild's writes stay on the main
 * thread, in its transactions.
 */
export type RankJob =
  | { kind: 'rank'; path: string; query: RankedQuery }
  /** The terms of the user's daily rows `[day, id]` (a batch of the backfill walk), those still stored. */
  | { kind: 'terms'; path: string; userId: string; rows: [string, number][] };

/** A daily row's document, tokenized: `[day, id, terms, tfs, length]` (documents.ts `TermArrays`). */
export type RowTerms = [string, number, string[], number[], number];

export type RankJobResult<J extends RankJob> = J extends { kind: 'rank' } ? RankedDoc[] : RowTerms[];
