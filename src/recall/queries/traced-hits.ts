import type { Span } from '@opentelemetry/api';
import type { SearchResult } from './search-result.ts';

/**
 * What a ranked search's span says of its answer (telemetry/tracing.ts): how many hits, how
 * they were ranked, how many rows still wait for their vector. Returns the result unchanged.
 */
export function tracedHits(span: Span, result: SearchResult): SearchResult {
  if (span.isRecording()) {
    span.setAttribute('mnemo.search.hits', result.items.length);
    span.setAttribute('mnemo.search.ranking', result.ranking);
    span.setAttribute('mnemo.search.pending_embeddings', result.pendingEmbeddings);
  }
  return result;
}
