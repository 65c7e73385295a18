import type { RankedDoc } from '../../recall-store.ts';
import type { RankedQuery } from '../search/bm25-query.ts';

/**
 * The ranked index's work for the search pool's workers (search-worker.ts): large queries, and
 * the tokenizing half of a rebuild. Workers only read; the rebuild's writes stay on the main
 * thread, in its transactions.
 */
export type RankJob =
  | { kind: 'rank'; path: string; query: RankedQuery }
  /** The terms of up to `limit` daily rows of the user after `after` (exclusive), in key order. */
  | { kind: 'terms'; path: string; userId: string; after: [string, number] | null; limit: number };

/** A daily row's document, tokenized: `[day, id, terms, tfs, length]` (documents.ts `TermArrays`). */
export type RowTerms = [string, number, string[], number[], number];

export type RankJobResult<J extends RankJob> = J extends { kind: 'rank' } ? RankedDoc[] : RowTerms[];
