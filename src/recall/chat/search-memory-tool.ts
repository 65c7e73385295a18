import { defineTool, type Tool } from '../../kernel/tool.ts';
import type { JsonObject, JsonValue } from '../../message.ts';
import { isCalendarDay } from '../rows/calendar-day.ts';
import type { SearchHit } from '../search/search-hit.ts';
import { DEFAULT_LANGUAGE, type Language } from '../../language.ts';
import { TOOL_TEXTS } from './tool-texts.ts';
import type { SearchResult } from '../queries/search-result.ts';

/**
 * `search_memory`, the model's ranked recall (beside the demo's six tools, which keep their
 * exact substring semantics): BM25 over every session, day and long-term memory of the turn's
 * user. Arguments are read as leniently as the six tools read theirs: `query` (required),
 * `limit` (default 10, 1..50), `day` / `from` / `to` (`YYYY-MM-DD`; anything else is ignored).
 *
 * One hit per line, best first:
 *   `[2026-04-08] session 3f2a9c01d4e5 #12 user (score 4.21): …the snippet…`
 * (a daily row without a session: `daily #45`; long-term memory: `long-term line 3`), so the
 * model can follow up with `get_session_window` (same session) or `get_daily_window`. The
 * description, the labels and the empty answer are in the server's language (tool-texts.ts:
 * `[2026-04-08] 会话 3f2a9c01d4e5 #12 user（相关度 4.21）：…` in Chinese).
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

export function createSearchMemoryTool(
  search: (args: SearchMemoryArgs) => Promise<SearchResult>,
  language: Language = DEFAULT_LANGUAGE,
): Tool {
  return defineTool({
    name: SEARCH_MEMORY_TOOL,
    description: TOOL_TEXTS[language].searchMemory,
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
      const result = await search(request);
      const hits = result.items;
      const body = hits.length > 0 ? hits.map((hit) => formatHit(hit, language)).join('\n') : TOOL_TEXTS[language].noMatchedMemory;
      return result.ranking === 'hybrid' || result.embeddingsError !== undefined ? `${body}\n${rankingNote(result)}` : body;
    },
  });
}

function rankingNote(meta: SearchResult): string {
  if (meta.embeddingsError !== undefined) return '(ranking: bm25; embeddings unavailable)';
  const pending = meta.pendingEmbeddings;
  return pending > 0 ? `(ranking: hybrid; ${pending} rows not yet embedded)` : '(ranking: hybrid)';
}

function day(v: JsonValue | undefined): string | undefined {
  return typeof v === 'string' && isCalendarDay(v.trim()) ? v.trim() : undefined;
}

export function formatHit(hit: SearchHit, language: Language = DEFAULT_LANGUAGE): string {
  const t = TOOL_TEXTS[language];
  const where =
    hit.source === 'session'
      ? t.hitSession(hit.sessionId ?? '', hit.messageId, hit.role)
      : hit.source === 'daily'
        ? t.hitDaily(hit.messageId, hit.role)
        : t.hitLongTerm(hit.messageId);
  return `[${hit.day}] ${where}${t.hitScore(hit.score.toFixed(2))}${hit.snippet}`;
}
