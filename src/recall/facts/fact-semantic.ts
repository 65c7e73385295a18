import type { RecallStore } from '../storage/recall-store.ts';
import type { FactSemantic } from './rank-facts.ts';
import type { EmbeddingsClient } from '../embeddings/embeddings-client.ts';
import { unit } from '../search/vector-codec.ts';

/**
 * The vector half of ranking long-term facts (facts/rank-facts.ts): the query's embedding
 * against the stored vectors of the user's current entries (an entry that ended took its
 * vector with it), best first, at most `n`. An entry not yet embedded is simply absent (BM25
 * still ranks it); a user whose facts predate their queueing is backfilled first.
 * `undefined` when the query cannot be embedded.
 */
export function factSemantic(store: RecallStore, client: EmbeddingsClient, timeoutMs: number, n = 100): FactSemantic {
  return async (userId, query) => {
    await store.backfillEmbeddings(userId);
    let vector: Float32Array;
    try {
      vector = unit((await client.embed([query], AbortSignal.timeout(timeoutMs)))[0]!);
    } catch {
      return undefined;
    }
    return (await store.nearest(userId, { item: 'f', vector, filters: {}, limit: n })).map((d) => d.id);
  };
}
