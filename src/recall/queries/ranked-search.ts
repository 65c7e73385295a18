import { InvalidInputError } from '../../errors.ts';
import { isCalendarDay } from '../rows/calendar-day.ts';
import type { RecallDeps } from '../recall-deps.ts';
import { assertSessionId, assertUserId } from '../recall-ids.ts';
import { loadFacts } from '../facts/facts-view.ts';
import type { RankedFilters } from '../search/rank-filters.ts';
import { hitOf, type SearchHit } from '../search/search-hit.ts';
import { queryTerms } from '../search/documents.ts';

export { queryTerms };

/**
 * `recall.search`: ranked recall across all of a user's sessions, days and long-term memory.
 *
 * Input is checked before anything is read (`InvalidInputError`, nothing stored):
 * `userId`/`sessionId` are ids (`invalid_id`); `query` a string (`invalid_query`); `day`,
 * `from`, `to` calendar days `YYYY-MM-DD` (`invalid_day`); `roles` an array of strings and
 * `tool` a string (`invalid_filter`); `limit` an integer, default 10, clamped to 1..100.
 * A query with no terms (blank, or only stop words) finds nothing.
 *
 * Scoring is BM25 over the query's distinct terms (search/bm25.ts), in the store (`rank`); the
 * hits are built here, with their snippets and scores rounded to 4 decimals.
 */
export interface SearchInput {
  /** Whose memory to search. */
  userId: string;
  /** The words to look for (`invalid_query` when not a string). */
  query: string;
  /** Only rows of this session. */
  sessionId?: string;
  /** Only this day (`YYYY-MM-DD`; `invalid_day` otherwise). */
  day?: string;
  /** From this day on, inclusive. */
  from?: string;
  /** Up to this day, inclusive. */
  to?: string;
  /** Only these roles (`'user'`, `'assistant'`; `'memory'` for long-term lines). */
  roles?: string[];
  /** Only rows whose turn called this tool. */
  tool?: string;
  /** Hits at most: default 10, clamped to 1..100. */
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

/** A validated query: the user, the filters, the limit. */
export interface RankedQuery extends RankedFilters {
  userId: string;
  query: string;
  limit: number;
}

export function filtersOf(q: RankedFilters): RankedFilters {
  const out: RankedFilters = {};
  for (const k of ['sessionId', 'day', 'from', 'to', 'roles', 'tool'] as const) if (q[k] !== undefined) (out as Record<string, unknown>)[k] = q[k];
  return out;
}

export async function searchRanked(deps: RecallDeps, input: SearchInput): Promise<SearchHit[]> {
  const q = validateSearch(input);
  const terms = queryTerms(q.query);
  if (terms.length === 0) return [];
  const ranked = await deps.store.rank(q.userId, { terms, filters: filtersOf(q), limit: q.limit });
  const longTerm = ranked.some((r) => r.row === undefined) ? (await loadFacts(deps.store, deps.facts, q.userId)).longTerm : undefined;
  const wanted = new Set(terms);
  const hits: SearchHit[] = [];
  for (const r of ranked) {
    const hit = hitOf(r.doc, Math.round(r.score * 10_000) / 10_000, r.row, longTerm, wanted);
    if (hit !== undefined) hits.push(hit);
  }
  return hits;
}
