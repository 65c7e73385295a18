/**
 * BM25 as Mnemo ranks with it, on every storage engine: k1 = 1.2, b = 0.75, Lucene's idf
 * `ln(1 + (N - df + 0.5) / (df + 0.5))`, over the query's distinct terms, with the user's own
 * statistics (N documents, their average length). A document's score is the sum over the query
 * terms it holds. Adapters that score inside the database (PostgreSQL) compute exactly this.
 */
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

/** Inverse document frequency of a term held by `df` of `n` documents. */
export function bm25Idf(n: number, df: number): number {
  return Math.log(1 + (n - df + 0.5) / (df + 0.5));
}

/** One term's contribution to a document of `length` tokens holding it `tf` times. */
export function bm25Term(idf: number, tf: number, length: number, averageLength: number): number {
  return (idf * tf * (BM25_K1 + 1)) / (tf + BM25_K1 * (1 - BM25_B) + ((BM25_K1 * BM25_B) / averageLength) * length);
}

/** The average document length BM25 normalizes by (1 for an empty index). */
export function averageLength(documents: number, totalLength: number): number {
  return totalLength / documents || 1;
}
