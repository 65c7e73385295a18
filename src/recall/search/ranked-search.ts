import { InvalidInputError } from '../../errors.ts';
import { isCalendarDay } from '../rows/calendar-day.ts';
import { HIGH } from '../storage/lmdb/recall-dbs.ts';
import type { RecallDeps } from '../recall-deps.ts';
import { assertSessionId, assertUserId } from '../recall-ids.ts';
import { postingEstimate, queryTerms, rankedSearch, type RankedQuery, type SearchHit } from '../storage/lmdb/search/bm25-query.ts';
import { rebuildUserIndex } from '../storage/lmdb/search/rebuild.ts';
import { isLive } from '../storage/lmdb/search/search-index.ts';
import { hasSessionDocs } from '../storage/lmdb/search/doc-rows.ts';

/**
 * `recall.search`: ranked recall across all of a user's sessions, days and long-term memory.
 *
 * Input is checked before anything is read (`InvalidInputError`, nothing stored):
 * `userId`/`sessionId` are ids (`invalid_id`); `query` a string (`invalid_query`); `day`,
 * `from`, `to` calendar days `YYYY-MM-DD` (`invalid_day`); `roles` an array of strings and
 * `tool` a string (`invalid_filter`); `limit` an integer, default 10, clamped to 1..100.
 * A query with no terms (blank, or only stop words) finds nothing.
 *
 * A user whose rows predate the index is rebuilt first (rebuild.ts). A query whose terms hold
 * more than `rankPoolThreshold` postings (estimated from the chunk keys) runs on the search
 * pool; smaller ones inline (a worker round trip costs more than they do).
 */
export interface SearchInput {
  userId: string;
  query: string;
  sessionId?: string;
  day?: string;
  from?: string;
  to?: string;
  roles?: string[];
  tool?: string;
  limit?: number;
}

export const DEFAULT_SEARCH_LIMIT = 10;
export const MAX_SEARCH_LIMIT = 100;
export const DEFAULT_RANK_POOL_THRESHOLD = 200_000;

export function validateSearch(input: SearchInput): RankedQuery {
  const userId = assertUserId(input?.userId);
  if (typeof input.query !== 'string') throw new InvalidInputError('invalid_query', 'query must be a string', { field: 'query' });
  const q: RankedQuery = { userId, query: input.query, limit: DEFAULT_SEARCH_LIMIT };
  if (input.sessionId !== undefined) q.sessionId = assertSessionId(input.sessionId);
  for (const field of ['day', 'from', 'to'] as const) {
    const v = input[field];
    if (v === undefined) continue;
    if (typeof v !== 'string' || !isCalendarDay(v)) {
      throw new InvalidInputError('invalid_day', `${field} must be a day YYYY-MM-DD`, { field });
    }
    q[field] = v;
  }
  if (input.roles !== undefined) {
    if (!Array.isArray(input.roles) || input.roles.some((r) => typeof r !== 'string')) {
      throw new InvalidInputError('invalid_filter', 'roles must be an array of strings', { field: 'roles' });
    }
    q.roles = [...input.roles];
  }
  if (input.tool !== undefined) {
    if (typeof input.tool !== 'string') throw new InvalidInputError('invalid_filter', 'tool must be a string', { field: 'tool' });
    q.tool = input.tool;
  }
  if (input.limit !== undefined) {
    if (typeof input.limit !== 'number' || !Number.isInteger(input.limit)) {
      throw new InvalidInputError('invalid_filter', 'limit must be an integer', { field: 'limit' });
    }
    q.limit = Math.max(1, Math.min(input.limit, MAX_SEARCH_LIMIT));
  }
  return q;
}

export async function searchRanked(deps: RecallDeps, input: SearchInput, poolThreshold = DEFAULT_RANK_POOL_THRESHOLD): Promise<SearchHit[]> {
  const q = validateSearch(input);
  const terms = queryTerms(q.query);
  if (terms.length === 0) return [];
  const { dbs } = deps;
  if (!isLive(dbs.search, q.userId) && hasRows(deps, q.userId)) await rebuildUserIndex(deps, q.userId);
  if (deps.pool && !deps.pool.closed && postingEstimate(dbs.search, q.userId, terms) > poolThreshold) {
    return deps.pool.run({ kind: 'rank', path: dbs.path, query: q });
  }
  return rankedSearch(dbs, q);
}

function hasRows(deps: RecallDeps, userId: string): boolean {
  const { dbs } = deps;
  if ((dbs.counters.get([userId, 'daily-rows']) ?? 0) > 0 || hasSessionDocs(dbs, userId)) return true;
  for (const _ of dbs.longTerm.getKeys({ start: [userId], end: [userId, HIGH], limit: 1 })) return true;
  return false;
}
