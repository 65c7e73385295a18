/**
 * Reciprocal rank fusion (Cormack, Clarke, Büttcher 2009): a document's fused score is
 * Σ 1 / (k + rank) over the rankings that hold it, rank from 1. `k = 60`, the paper's value
 * (and Elasticsearch's and OpenSearch's default): it damps the head of each list so that a
 * document ranked well by both beats one ranked first by only one. Scores of the inputs are
 * not compared, only ranks, so BM25 and cosine need no normalization.
 */
export const RRF_K = 60;

/** Fused `[id, score]`, best first; ties keep the order of first appearance (list by list). */
export function reciprocalRankFusion<T>(rankings: readonly (readonly T[])[], k = RRF_K): [T, number][] {
  const fused = new Map<T, number>();
  for (const list of rankings) {
    list.forEach((id, i) => fused.set(id, (fused.get(id) ?? 0) + 1 / (k + i + 1)));
  }
  return [...fused].sort((a, b) => b[1] - a[1]);
}
