import { defineTool, type Tool } from '../../kernel/tool.ts';
import type { JsonObject, JsonValue } from '../../message.ts';
import { isCalendarDay } from '../store/calendar-day.ts';
import type { SearchHit } from './bm25-query.ts';
import type { SearchMeta } from '../embeddings/search-result.ts';

/**
 * `search_memory`, the model's ranked recall (beside the demo's six tools, which keep their
 * exact substring semantics): BM25 over every session, day and long-term memory of the turn's
 * user. Arguments are read as leniently as the six tools read theirs: `query` (required),
 * `limit` (default 10, 1..50), `day` / `from` / `to` (`YYYY-MM-DD`; anything else is ignored).
 *
 * One hit per line, best first:
 *   `[2026-04-08] session 3f2a9c01d4e5 #12 user (score 4.21): …the snippet…`
 * (a daily row without a session: `daily #45`; long-term memory: `long-term line 3`), so the
 * model can follow up with `get_session_window` (same session) or `get_daily_window`.
 * With embeddings configured, a last line says how the hits were ranked:
 * `(ranking: hybrid; 3 rows not yet embedded)`, or `(ranking: bm25; embeddings unavailable)`.
 */
export const SEARCH_MEMORY_TOOL = 'search_memory';

export interface SearchMemoryArgs {
  query: string;
  limit: number;
  day?: string;
  from?: string;
  to?: string;
}

export function createSearchMemoryTool(search: (args: SearchMemoryArgs) => Promise<SearchHit[] & Partial<SearchMeta>>): Tool {
  return defineTool({
    name: SEARCH_MEMORY_TOOL,
    description:
      'Ranked search over ALL past sessions, days and long-term memory of this user, by relevance. ' +
      'Use a natural-language query or keywords; returns dated hits with message_id anchors.',
    parameters: {
      type: 'object',
      properties: {
        query: { type: 'string' },
        limit: { type: 'integer', default: 10 },
        day: { type: 'string', default: '' },
        from: { type: 'string', default: '' },
        to: { type: 'string', default: '' },
      },
      required: ['query'],
    },
    async execute(args: JsonObject) {
      const query = typeof args['query'] === 'string' ? args['query'] : '';
      const limitArg = args['limit'];
      const n = typeof limitArg === 'number' ? limitArg : typeof limitArg === 'string' && /^\s*\d+\s*$/.test(limitArg) ? Number(limitArg) : 10;
      const request: SearchMemoryArgs = { query, limit: Math.max(1, Math.min(Math.trunc(n), 50)) };
      for (const f of ['day', 'from', 'to'] as const) {
        const d = day(args[f]);
        if (d !== undefined) request[f] = d;
      }
      const hits = await search(request);
      const body = hits.length > 0 ? hits.map(formatHit).join('\n') : 'no matched memory';
      return hits.ranking === 'hybrid' || hits.embeddingsError !== undefined ? `${body}\n${rankingNote(hits)}` : body;
    },
  });
}

function rankingNote(meta: Partial<SearchMeta>): string {
  if (meta.embeddingsError !== undefined) return '(ranking: bm25; embeddings unavailable)';
  const pending = meta.pendingEmbeddings ?? 0;
  return pending > 0 ? `(ranking: hybrid; ${pending} rows not yet embedded)` : '(ranking: hybrid)';
}

function day(v: JsonValue | undefined): string | undefined {
  return typeof v === 'string' && isCalendarDay(v.trim()) ? v.trim() : undefined;
}

export function formatHit(hit: SearchHit): string {
  const where =
    hit.source === 'session'
      ? `session ${hit.sessionId} #${hit.messageId} ${hit.role}`
      : hit.source === 'daily'
        ? `daily #${hit.messageId} ${hit.role}`
        : `long-term line ${hit.messageId}`;
  return `[${hit.day}] ${where} (score ${hit.score.toFixed(2)}): ${hit.snippet}`;
}
