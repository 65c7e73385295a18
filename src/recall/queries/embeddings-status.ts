import type { RecallDeps } from '../recall-deps.ts';

/**
 * `recall.embeddingsStatus()`: whether embeddings are configured, the queue (all users, and
 * the named user's share), the dead letters (items given up after `maxAttempts`: their rows are
 * found by BM25 only; a new write of the row queues it again), and the drain's counters since
 * it started. The server's `/metrics` shows the same numbers.
 */
export type EmbeddingsStatus =
  | {
      /** No embeddings configured. */
      configured: false;
    }
  | {
      /** Embeddings are configured. */
      configured: true;
      /** The embedding model. */
      model: string;
      /** Items waiting, all users. */
      pending: number;
      /** The named user's items waiting (when a user was named). */
      userPending?: number;
      /** Items given up after `maxAttempts` (found by BM25 only). */
      dead: number;
      /** The drain's requests since it started (0 while it is down). */
      requests: number;
      /** Of those, the failed ones. */
      failures: number;
      /** Vectors stored since it started. */
      embedded: number;
      /** Whether a drain is running now (the runtime's restarts it after a crash). */
      draining: boolean;
    };

export async function embeddingsStatus(deps: RecallDeps, userId?: string): Promise<EmbeddingsStatus> {
  const embed = deps.embeddings;
  if (embed === undefined) return { configured: false };
  const drain = embed.drain();
  const counts = drain?.status() ?? { requests: 0, failures: 0, embedded: 0 };
  const all = await deps.store.jobs.counts('embed');
  return {
    configured: true,
    model: embed.options.model,
    pending: all.pending,
    ...(userId === undefined ? {} : { userPending: (await deps.store.jobs.counts('embed', userId)).pending }),
    dead: all.dead,
    requests: counts.requests,
    failures: counts.failures,
    embedded: counts.embedded,
    draining: drain !== undefined,
  };
}
