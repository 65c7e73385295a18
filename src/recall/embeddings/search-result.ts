import type { SearchHit } from '../storage/lmdb/search/bm25-query.ts';

/**
 * What `recall.search` answers: the hits (an array, as before embeddings existed) carrying,
 * as non-enumerable properties (so they stay out of `toEqual`, spreads and JSON), how they
 * were ranked:
 * - `ranking`: `'bm25'` (no embeddings configured, or the query's embedding failed) or
 *   `'hybrid'` (reciprocal rank fusion of BM25 and vector similarity; `score` is then the
 *   fused score);
 * - `pendingEmbeddings`: the user's rows still waiting for their vector (0 without embeddings);
 *   they are found by BM25 only until embedded;
 * - `embeddingsError`: set when embeddings are configured but the query could not be embedded
 *   (the endpoint down): the hits are BM25's alone.
 */
export type Ranking = 'bm25' | 'hybrid';

export interface SearchMeta {
  ranking: Ranking;
  pendingEmbeddings: number;
  embeddingsError?: string;
}

export type SearchResult = SearchHit[] & Readonly<SearchMeta>;

export function withMeta(hits: SearchHit[], meta: SearchMeta): SearchResult {
  const props: PropertyDescriptorMap = {
    ranking: { value: meta.ranking, enumerable: false },
    pendingEmbeddings: { value: meta.pendingEmbeddings, enumerable: false },
  };
  if (meta.embeddingsError !== undefined) props['embeddingsError'] = { value: meta.embeddingsError, enumerable: false };
  return Object.defineProperties(hits, props) as SearchResult;
}
