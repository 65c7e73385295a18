import { HIGH, type RecallDbs } from '../storage/lmdb/recall-dbs.ts';
import { backfillUser, isEmbedLive } from '../storage/lmdb/embeddings/embed-backfill.ts';
import type { ItemKey } from '../storage/lmdb/embeddings/embed-dbs.ts';
import type { EmbeddingsClient } from './embeddings-client.ts';
import { cosineWith, unit } from './vector-codec.ts';

/**
 * The vector half of ranking long-term facts (facts/rank-facts.ts): the query's embedding
 * against every stored vector of the user's current entries (`[userId, 'f', seq]`; an entry
 * that ended took its vector with it), best first, at most `n`. An entry not yet embedded is
 * simply absent (BM25 still ranks it); a user whose facts predate their queueing is backfilled
 * first (embed-backfill.ts). `undefined` when the query cannot be embedded.
 */
export function factSemantic(dbs: RecallDbs & { guard(): void }, client: EmbeddingsClient, timeoutMs: number, n = 100): (userId: string, query: string) => Promise<number[] | undefined> {
  return async (userId, query) => {
    if (!isEmbedLive(dbs, userId)) await backfillUser(dbs, userId);
    let q: Float32Array;
    try {
      q = unit((await client.embed([query], AbortSignal.timeout(timeoutMs)))[0]!);
    } catch {
      return undefined;
    }
    const scored: [number, number][] = [];
    for (const { key, value } of dbs.embed.vectors.getRange({ start: [userId, 'f'], end: [userId, 'f', HIGH] as unknown as ItemKey })) {
      scored.push([key[2], cosineWith(value, q)]);
    }
    scored.sort((a, b) => b[1] - a[1] || b[0] - a[0]);
    return scored.slice(0, n).map(([seq]) => seq);
  };
}
