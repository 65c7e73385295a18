import type { RecallDeps } from '../recall-deps.ts';
import { queryTerms, type RankedFilters, type SearchHit } from '../storage/lmdb/search/bm25-query.ts';
import { searchRanked, validateSearch, type SearchInput } from '../search/ranked-search.ts';
import { dailyDoc, longTermDoc, sessionDoc } from '../storage/lmdb/search/search-dbs.ts';
import { sessionEntry } from '../storage/lmdb/sessions-index.ts';
import { backfillUser, isEmbedLive, pendingOf } from '../storage/lmdb/embeddings/embed-backfill.ts';
import { hitOfDoc } from './doc-hits.ts';
import { reciprocalRankFusion } from './rrf.ts';
import { withMeta, type SearchResult } from './search-result.ts';
import { unit } from './vector-codec.ts';
import { vectorCount, vectorRanking } from '../storage/lmdb/embeddings/vector-query.ts';

/**
 * `recall.search` with or without embeddings.
 *
 * Without (`deps.embeddings` undefined): BM25 (search/ranked-search.ts), `ranking: 'bm25'`.
 *
 * With: the BM25 top `candidates` and the vector top `candidates` (cosine against the query's
 * embedding, vector-query.ts; on the search pool when the user has more than `poolThreshold`
 * vectors), both with the search's filters applied, fused by reciprocal rank fusion (rrf.ts,
 * k = 60), the first `limit` of the fusion returned with their fused score, `ranking:
 * 'hybrid'`. A user whose rows predate their queueing is backfilled first (embed-backfill.ts).
 * When the query cannot be embedded (endpoint down, no answer within `queryTimeoutMs`, a bad
 * answer) the answer is BM25's,
 * `ranking: 'bm25'` with `embeddingsError` saying why: a search never fails because the
 * embeddings endpoint does.
 */
export async function searchHybrid(deps: RecallDeps, input: SearchInput, rankPoolThreshold: number): Promise<SearchResult> {
  const embed = deps.embeddings;
  if (embed === undefined) return withMeta(await searchRanked(deps, input, rankPoolThreshold), { ranking: 'bm25', pendingEmbeddings: 0 });
  const q = validateSearch(input);
  const { dbs } = deps;
  if (!isEmbedLive(dbs, q.userId)) await backfillUser(dbs, q.userId);
  const pending = pendingOf(dbs, q.userId);
  const terms = queryTerms(q.query);
  if (terms.length === 0) return withMeta([], { ranking: 'hybrid', pendingEmbeddings: pending });
  const n = Math.max(q.limit, embed.options.candidates);
  const bm25Input: SearchInput = { ...input, limit: Math.min(n, 100) };
  const [bm25, queried] = await Promise.all([
    searchRanked(deps, bm25Input, rankPoolThreshold),
    embed.client.embed([q.query.slice(0, embed.options.maxChars)], AbortSignal.timeout(embed.options.queryTimeoutMs)).then(
      (v) => ({ ok: true as const, vector: unit(v[0]!) }),
      (error: unknown) => ({ ok: false as const, error: error instanceof Error ? error.message : String(error) }),
    ),
  ]);
  if (!queried.ok) return withMeta(bm25.slice(0, q.limit), { ranking: 'bm25', pendingEmbeddings: pending, embeddingsError: queried.error });
  const filters: RankedFilters = { ...q };
  const reader = { vectors: dbs.embed.vectors, daily: dbs.daily, longTerm: dbs.longTerm, sessionDocs: dbs.search.sessionDocs };
  const cached = embed.cache.matrix(dbs.embed.vectors, q.userId, dbs.counters.get([q.userId, 'embed-version']));
  const vectors =
    deps.pool && !deps.pool.closed && cached === undefined && vectorCount(dbs.embed.vectors, q.userId) > embed.options.poolThreshold
      ? await deps.pool.run({ kind: 'vector', path: dbs.path, userId: q.userId, query: [...queried.vector], filters: pick(q), n })
      : vectorRanking(reader, q.userId, queried.vector, filters, n, cached);
  const byDoc = new Map<number, SearchHit>();
  const bm25Docs: number[] = [];
  for (const hit of bm25) {
    const doc = docOfHit(deps, q.userId, hit);
    if (doc === null) continue;
    byDoc.set(doc, hit);
    bm25Docs.push(doc);
  }
  const fused = reciprocalRankFusion([bm25Docs, vectors.map(([doc]) => doc)]);
  const wanted = new Set(terms);
  const hitReader = { search: dbs.search, daily: dbs.daily, longTerm: dbs.longTerm };
  const hits: SearchHit[] = [];
  for (const [doc, score] of fused) {
    if (hits.length >= q.limit) break;
    const rounded = Math.round(score * 1e6) / 1e6;
    const known = byDoc.get(doc);
    const hit = known === undefined ? hitOfDoc(hitReader, q.userId, doc, rounded, wanted) : { ...known, score: rounded };
    if (hit !== undefined) hits.push(hit);
  }
  return withMeta(hits, { ranking: 'hybrid', pendingEmbeddings: pending });
}

/** The document a BM25 hit is (search-dbs.ts): a session document has no daily id, its session's order numbers it. */
function docOfHit(deps: RecallDeps, userId: string, hit: SearchHit): number | null {
  if (hit.source === 'long_term') return longTermDoc(hit.messageId);
  if (hit.dailyMessageId !== undefined) return dailyDoc(hit.day, hit.dailyMessageId);
  const entry = hit.sessionId === null ? undefined : sessionEntry(deps.dbs, userId, hit.sessionId);
  return entry === undefined ? null : sessionDoc(entry.order, hit.messageId);
}

function pick(q: RankedFilters): RankedFilters {
  const out: RankedFilters = {};
  for (const k of ['sessionId', 'day', 'from', 'to', 'roles', 'tool'] as const) if (q[k] !== undefined) (out as Record<string, unknown>)[k] = q[k];
  return out;
}
