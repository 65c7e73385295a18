/**
 * The tool-call timeline of one user: every tool call of every session, newest turn first
 * (calls of one turn in the order they were made), each with what links it to its turn: the
 * session, the session's title and the `message_id` of the assistant row that carries it (the
 * same anchor as in `/messages` items), plus the user message that started the turn.
 *
 * Read from the session rows (not the dialogue log, whose rows carry no `message_id`), so a
 * deleted session's calls are gone with it, and a failed turn's calls are listed too.
 *
 * Filters: `tool`, the exact tool name (`''`: any); `keyword`, a case-insensitive substring of
 * the name, the arguments, the output or the turn's user message (`''`: any); at most `limit`
 * items (1..500).
 */
import type { RecallApi, ToolCallView } from './services.ts';

export interface ToolCallTimelineQuery {
  userId: string;
  tool: string;
  keyword: string;
  limit: number;
}

export interface ToolCallTimelineItem extends ToolCallView {
  session_id: string;
  title: string;
  /** The anchor of the assistant row in its session. */
  message_id: number;
  ts: string;
  /** The user message of the turn (`''` when the row before it is not a user row). */
  user_message: string;
  /** 0-based position among the turn's calls. */
  index: number;
  /** Set when the turn failed (the calls it made before failing are still listed). */
  failed?: true;
}

export const TIMELINE_MAX_LIMIT = 500;

export async function toolCallTimeline(
  recall: Pick<RecallApi, 'listSessions' | 'getSessionMessages'>,
  query: ToolCallTimelineQuery,
): Promise<ToolCallTimelineItem[]> {
  const limit = Math.min(Math.max(Math.trunc(query.limit) || 1, 1), TIMELINE_MAX_LIMIT);
  const keyword = query.keyword.trim().toLowerCase();
  const turns: ToolCallTimelineItem[][] = [];
  for (const session of await recall.listSessions(query.userId)) {
    const rows = await recall.getSessionMessages(query.userId, session.session_id);
    rows.forEach((row, i) => {
      if (row.role !== 'assistant' || row.tool_calls.length === 0) return;
      const before = rows[i - 1];
      const userMessage = before?.role === 'user' ? before.content : '';
      const calls = row.tool_calls
        .map((call, index): ToolCallTimelineItem => ({
          session_id: session.session_id,
          title: session.title,
          message_id: row.message_id,
          ts: row.ts,
          user_message: userMessage,
          index,
          name: call.name,
          input: call.input,
          output: call.output,
          ...(row.error ? { failed: true as const } : {}),
        }))
        .filter((item) => (query.tool === '' || item.name === query.tool) && (keyword === '' || matches(item, keyword)));
      if (calls.length > 0) turns.push(calls);
    });
  }
  // Newest turn first; a tie (the same second) in one session: the later anchor first, across
  // sessions: the sessions' listed order (the sort is stable).
  turns.sort((a, b) => {
    const [x, y] = [a[0]!, b[0]!];
    const byTime = compareDesc(x.ts, y.ts);
    if (byTime !== 0 || x.session_id !== y.session_id) return byTime;
    return y.message_id - x.message_id;
  });
  return turns.flat().slice(0, limit);
}

function matches(item: ToolCallTimelineItem, keyword: string): boolean {
  return [item.name, item.input, item.output, item.user_message].some((text) => text.toLowerCase().includes(keyword));
}

function compareDesc(a: string, b: string): number {
  return a < b ? 1 : a > b ? -1 : 0;
}
