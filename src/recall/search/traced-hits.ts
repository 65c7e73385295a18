import type { Span } from '@opentelemetry/api';
import type { SearchResult } from '../embeddings/search-result.ts';

/**
 * What a ranked search's span says of its answer (telemetry/tracing.ts): how many hits, how
 * they were ranked, how many rows still wait for their vector. Returns the hits unchanged.
 */
export function tracedHits(span: Span, hits: SearchResult): SearchResult {
  if (span.isRecording()) {
    span.setAttribute('mnemo.search.hits', hits.length);
    span.setAttribute('mnemo.search.ranking', hits.ranking);
    span.setAttribute('mnemo.search.pending_embeddings', hits.pendingEmbeddings);
  }
  return hits;
}
