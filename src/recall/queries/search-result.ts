import type { SearchHit } from '../search/search-hit.ts';

/**
 * What `recall.search` answers: the hits, and how they were ranked:
 * - `ranking`: `'bm25'` (no embeddings configured, or the query's embedding failed) or
 *   `'hybrid'` (reciprocal rank fusion of BM25 and vector similarity; `score` is then the
 *   fused score);
 * - `pendingEmbeddings`: the user's items still waiting for their vector (0 without
 *   embeddings); they are found by BM25 only until embedded;
 * - `embeddingsError`: set when embeddings are configured but the query could not be embedded
 *   (the endpoint down): the hits are BM25's alone. Mnemo's own sentence, never the endpoint's.
 */
export type Ranking = 'bm25' | 'hybrid';

/** What `recall.search` answers (see `Ranking` above). */
export interface SearchResult {
  /** The hits, best first. */
  items: SearchHit[];
  /** How they were ranked. */
  ranking: Ranking;
  /** The user's items still waiting for their vector (0 without embeddings). */
  pendingEmbeddings: number;
  /** Set when the query could not be embedded: the hits are BM25's alone. */
  embeddingsError?: string;
}
