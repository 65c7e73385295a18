import { errorRecord } from '../../errors.ts';
import { loadFacts } from '../facts/facts-view.ts';
import type { RecallDeps } from '../recall-deps.ts';
import { dailyDoc, longTermDoc, sessionDoc } from '../search/doc-numbers.ts';
import { filtersOf, queryTerms, searchRanked, validateSearch, type SearchInput } from './ranked-search.ts';
import { hitOf, type SearchHit } from '../search/search-hit.ts';
import { reciprocalRankFusion } from '../search/rrf.ts';
import type { SearchResult } from './search-result.ts';
import { unit } from '../search/vector-codec.ts';

/**
 * `recall.search` with or without embeddings.
 *
 * Without (`deps.embeddings` undefined): BM25 (search/ranked-search.ts), `ranking: 'bm25'`.
 *
 * With: the BM25 top `candidates` and the vector top `candidates` (the store's `nearest`:
 * cosine against the query's embedding), both with the search's filters applied, fused by
 * reciprocal rank fusion (rrf.ts, k = 60), the first `limit` of the fusion returned with their
 * fused score, `ranking: 'hybrid'`. A user whose rows predate their queueing is backfilled
 * first. When the query cannot be embedded (endpoint down, no answer within `queryTimeoutMs`,
 * a bad answer) the answer is BM25's, `ranking: 'bm25'` with `embeddingsError` saying why: a
 * search never fails because the embeddings endpoint does.
 */
export async function searchHybrid(deps: RecallDeps, input: SearchInput): Promise<SearchResult> {
  const embed = deps.embeddings;
  if (embed === undefined) return { items: await searchRanked(deps, input), ranking: 'bm25', pendingEmbeddings: 0 };
  const q = validateSearch(input);
  await deps.store.backfillEmbeddings(q.userId);
  const pending = (await deps.store.jobs.counts('embed', q.userId)).pending;
  const terms = queryTerms(q.query);
  if (terms.length === 0) return { items: [], ranking: 'hybrid', pendingEmbeddings: pending };
  const n = Math.max(q.limit, embed.options.candidates);
  const [bm25, queried] = await Promise.all([
    searchRanked(deps, { ...input, limit: Math.min(n, 100) }),
    embed.client.embed([q.query.slice(0, embed.options.maxChars)], AbortSignal.timeout(embed.options.queryTimeoutMs)).then(
      (v) => ({ ok: true as const, vector: unit(v[0]!) }),
      (error: unknown) => ({ ok: false as const, error: errorRecord(error, 'embeddings_failed').message }),
    ),
  ]);
  if (!queried.ok) return { items: bm25.slice(0, q.limit), ranking: 'bm25', pendingEmbeddings: pending, embeddingsError: queried.error };
  const near = await deps.store.nearest(q.userId, { item: 'd', vector: queried.vector, filters: filtersOf(q), limit: n });
  const byDoc = new Map<number, SearchHit>();
  const bm25Docs: number[] = [];
  const sessions = new Map((await deps.store.sessions(q.userId)).map((e) => [e.sessionId, e.order]));
  for (const hit of bm25) {
    const doc = docOfHit(hit, sessions);
    if (doc === null) continue;
    byDoc.set(doc, hit);
    bm25Docs.push(doc);
  }
  const fused = reciprocalRankFusion([bm25Docs, near.map((d) => d.id)]);
  const rows = new Map(near.map((d) => [d.id, d.row]));
  const longTerm = near.some((d) => d.row === undefined) ? (await loadFacts(deps.store, deps.facts, q.userId)).longTerm : undefined;
  const wanted = new Set(terms);
  const items: SearchHit[] = [];
  for (const [doc, score] of fused) {
    if (items.length >= q.limit) break;
    const rounded = Math.round(score * 1e6) / 1e6;
    const known = byDoc.get(doc);
    const hit = known === undefined ? hitOf(doc, rounded, rows.get(doc), longTerm, wanted) : { ...known, score: rounded };
    if (hit !== undefined) items.push(hit);
  }
  return { items, ranking: 'hybrid', pendingEmbeddings: pending };
}

/** The document a BM25 hit is (search/doc-numbers.ts): a session document has no daily id, its session's order numbers it. */
function docOfHit(hit: SearchHit, orders: ReadonlyMap<string, number>): number | null {
  if (hit.source === 'long_term') return longTermDoc(hit.messageId);
  if (hit.dailyMessageId !== undefined) return dailyDoc(hit.day, hit.dailyMessageId);
  const order = hit.sessionId === null ? undefined : orders.get(hit.sessionId);
  return order === undefined ? null : sessionDoc(order, hit.messageId);
}
