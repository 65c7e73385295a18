/**
 * The demo's keyword recall (reference §3.3): case-insensitive substring match on `content`
 * only, the MOST RECENT `limit` matches returned in ascending (chronological) order, `limit`
 * clamped to 1..200, and an empty or blank keyword returning the last `limit` rows unfiltered.
 *
 * Rows are consumed newest first and the scan stops at the `limit`-th match, so a search whose
 * answer lies near the end of a long history reads only that end.
 */
export const MAX_SEARCH_LIMIT = 200;

export function clampLimit(limit: unknown, max = MAX_SEARCH_LIMIT): number {
  const n = typeof limit === 'number' && Number.isFinite(limit) ? Math.trunc(limit) : max;
  return Math.max(1, Math.min(n, max));
}

/** `null` means "no filter": the keyword was empty after trimming. */
export function normalizeKeyword(keyword: string): string | null {
  const key = keyword.trim().toLowerCase();
  return key === '' ? null : key;
}

export function collectNewestMatches<T>(
  newestFirst: Iterable<T>,
  contentOf: (row: T) => string,
  keyword: string,
  limit: number,
): T[] {
  const key = normalizeKeyword(keyword);
  const want = clampLimit(limit);
  const found: T[] = [];
  for (const row of newestFirst) {
    if (key === null || contentOf(row).toLowerCase().includes(key)) {
      found.push(row);
      if (found.length >= want) break;
    }
  }
  return found.reverse();
}
