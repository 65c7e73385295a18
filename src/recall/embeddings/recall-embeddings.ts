import type { EmbeddingDrain } from './embed-drain.ts';
import type { EmbeddingsClient } from './embeddings-client.ts';
import type { ResolvedEmbeddingsOptions } from './embeddings-options.ts';

/** What the recall service holds of its embeddings (RecallDeps.embeddings): absent when not configured. */
export interface RecallEmbeddings {
  options: ResolvedEmbeddingsOptions;
  /** Embeds queries (the same endpoint and model as the drain). */
  client: EmbeddingsClient;
  /** The drain running now, if any (the runtime's supervised one, or the service's own). */
  drain: () => EmbeddingDrain | undefined;
}
