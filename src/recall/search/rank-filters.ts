import type { DailyRecord } from '../records/records.ts';

/**
 * The filters of ranked recall (`recall.search`), as every storage engine applies them: a
 * document passes when it meets every filter given. Long-term lines belong to no session and
 * call no tool, have the role `memory`, and are dated by the document version that holds them.
 */
export interface RankedFilters {
  /** Only documents of this session. */
  sessionId?: string;
  /** Only this day (`YYYY-MM-DD`). */
  day?: string;
  /** Inclusive `YYYY-MM-DD` bounds. */
  from?: string;
  /** Upper bound of `from`..`to`. */
  to?: string;
  /** Only these roles. */
  roles?: readonly string[];
  /** Only rows that called this tool. */
  tool?: string;
}

export function hasFilters(q: RankedFilters): boolean {
  return q.sessionId !== undefined || q.day !== undefined || q.from !== undefined || q.to !== undefined || q.roles !== undefined || q.tool !== undefined;
}

export function dayPasses(q: RankedFilters, day: string): boolean {
  if (q.day !== undefined && day !== q.day) return false;
  if (q.from !== undefined && day < q.from) return false;
  if (q.to !== undefined && day > q.to) return false;
  return true;
}

export function longTermPasses(q: RankedFilters, day: string): boolean {
  if (q.sessionId !== undefined || q.tool !== undefined) return false;
  if (q.roles !== undefined && !q.roles.includes('memory')) return false;
  return dayPasses(q, day);
}

export function rowPasses(q: RankedFilters, row: Pick<DailyRecord, 'sessionId' | 'role' | 'toolCalls'>): boolean {
  if (q.sessionId !== undefined && row.sessionId !== q.sessionId) return false;
  if (q.roles !== undefined && !q.roles.includes(row.role)) return false;
  if (q.tool !== undefined && !(row.toolCalls ?? []).some((c) => c.name === q.tool)) return false;
  return true;
}
