/**
 * The JSON API. The first four routes are the Agent Memory Demo's, with its shapes:
 *
 *   POST   /api/chat                               {user_id, session_id, message}
 *            → {reply, memory_hits, title, tool_calls:[{name, input, output}]}
 *   POST   /api/conversations                      {user_id} → {session_id}
 *   GET    /api/conversations?user_id=             → {items:[{session_id, title, updated_at}]}
 *   GET    /api/conversations/:sid/messages?user_id=
 *            → {items:[{ts, role, content, message_id, tool_calls}]}  (unknown session: [])
 *
 * and the rest are Mnemo's own:
 *
 *   DELETE /api/conversations/:sid?user_id=        → {session_id, deleted: true} | 404
 *   GET    /api/conversations/:sid/search?user_id=&keyword=&limit=20          → {items}
 *   GET    /api/conversations/:sid/window?user_id=&message_id=&before=0&after=0 → {items}
 *   GET    /api/daily/search?user_id=&keyword=&day=&limit=20                  → {items}
 *   GET    /api/daily/window?user_id=&message_id=&before=0&after=0&day=        → {items}
 *   GET    /api/daily?user_id=&day=                → {items}  (one day, chronological; default today)
 *   GET    /api/tool-calls?user_id=&tool=&keyword=&limit=100
 *            → {items:[{session_id, title, message_id, ts, user_message, index, name, input, output}]}
 *            (every tool call of the user, newest turn first: tool-call-timeline.ts)
 *   GET    /api/runtime                            → {tree, pid, uptime_s, names}
 *            (conversation names only with the admin token: `names` is 'full', else 'redacted')
 *
 * A chat turn runs under `turnSignal`: it is cancelled when its client disconnects or when the
 * server's stop deadline passes (then answered 503 `turn_interrupted`).
 *
 * Each route's body and query string are validated by fastify from its schema (api-schemas.ts,
 * read by request-validation.ts: FastAPI's 422) before the handler runs; ids are then checked
 * with `requireIds` (the demo's 400).
 *
 * Every session-scoped route takes the session under the given user only, so one user can
 * never list, read, search or delete another's sessions: the same session id under another
 * user is simply another (usually empty) session.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { redactTree, type InspectedNode } from './runtime-redaction.ts';
import { HttpError } from './server-errors.ts';
import { requireIds } from './request-validation.ts';
import { API_SCHEMAS as S } from './api-schemas.ts';
import { errorCode } from './metrics.ts';
import type { DailyRowView, RecallApi, RowView, RuntimeView } from './services.ts';
import { toolCallTimeline } from './tool-call-timeline.ts';
import { turnSignal } from './turn-signal.ts';

export interface ApiServices {
  recall: RecallApi;
  runtime: RuntimeView;
  /** Fires when the server's stop deadline has passed: turns still running are cancelled. */
  stopSignal?: AbortSignal;
  /** Whether the request carries the admin token. */
  isAdmin?: (request: FastifyRequest) => boolean;
  /** Told of every chat turn: its seconds and outcome (`ok`, else the error's code). */
  onTurn?: (seconds: number, outcome: string) => void;
}

// What the routes' schemas (api-schemas.ts) let through, typed: fastify has validated and
// replaced the body and query string before a handler runs.
interface SessionParams {
  session_id: string;
}
interface UserQuery {
  user_id: string;
}
interface SearchQuery extends UserQuery {
  keyword: string;
  limit: number;
}
interface WindowQuery extends UserQuery {
  message_id: number;
  before: number;
  after: number;
}
type Day = { day: string };

export function registerApiRoutes(api: FastifyInstance, { recall, runtime, stopSignal, isAdmin = () => false, onTurn }: ApiServices): void {
  api.post<{ Body: { user_id: string; session_id: string; message: string } }>('/api/chat', { schema: S.chat }, async (request, reply) => {
    const body = request.body;
    requireIds({ user_id: body.user_id, session_id: body.session_id });
    const turn = turnSignal(reply, stopSignal);
    const started = performance.now();
    let outcome = 'ok';
    const result = await recall
      .chat({ userId: body.user_id, sessionId: body.session_id, message: body.message, signal: turn.signal })
      .catch((error: unknown) => {
        outcome = errorCode(error);
        throw error;
      })
      .finally(() => {
        turn.dispose();
        onTurn?.((performance.now() - started) / 1000, outcome);
      });
    return {
      reply: result.reply,
      memory_hits: result.memoryHits,
      title: result.title,
      tool_calls: result.toolCalls.map(({ name, input, output }) => ({ name, input, output })),
    };
  });

  api.post<{ Body: UserQuery }>('/api/conversations', { schema: S.createSession }, async (request) => {
    const { user_id } = request.body;
    requireIds({ user_id });
    return { session_id: await recall.createSession(user_id) };
  });

  api.get<{ Querystring: UserQuery }>('/api/conversations', { schema: S.listSessions }, async (request) => {
    const { user_id } = request.query;
    requireIds({ user_id });
    const items = await recall.listSessions(user_id);
    return { items: items.map(({ session_id, title, updated_at }) => ({ session_id, title, updated_at })) };
  });

  api.get<{ Params: SessionParams; Querystring: UserQuery }>('/api/conversations/:session_id/messages', { schema: S.messages }, async (request) => {
    const { user_id } = request.query;
    const { session_id } = request.params;
    requireIds({ user_id, session_id });
    return { items: (await recall.getSessionMessages(user_id, session_id)).map(rowView) };
  });

  api.delete<{ Params: SessionParams; Querystring: UserQuery }>('/api/conversations/:session_id', { schema: S.deleteSession }, async (request) => {
    const { user_id } = request.query;
    const { session_id } = request.params;
    requireIds({ user_id, session_id });
    if (!(await recall.deleteSession(user_id, session_id))) {
      throw new HttpError(404, 'conversation not found');
    }
    return { session_id, deleted: true };
  });

  api.get<{ Params: SessionParams; Querystring: SearchQuery }>('/api/conversations/:session_id/search', { schema: S.searchSession }, async (request) => {
    const q = request.query;
    const { session_id } = request.params;
    requireIds({ user_id: q.user_id, session_id });
    const rows = await recall.searchSession({
      userId: q.user_id,
      sessionId: session_id,
      keyword: q.keyword,
      limit: q.limit,
    });
    return { items: rows.map(rowView) };
  });

  api.get<{ Params: SessionParams; Querystring: WindowQuery }>('/api/conversations/:session_id/window', { schema: S.sessionWindow }, async (request) => {
    const q = request.query;
    const { session_id } = request.params;
    requireIds({ user_id: q.user_id, session_id });
    const rows = await recall.sessionWindow({
      userId: q.user_id,
      sessionId: session_id,
      messageId: q.message_id,
      before: q.before,
      after: q.after,
    });
    return { items: rows.map(rowView) };
  });

  api.get<{ Querystring: SearchQuery & Day }>('/api/daily/search', { schema: S.searchDaily }, async (request) => {
    const q = request.query;
    requireIds({ user_id: q.user_id });
    const rows = await recall.searchDaily({ userId: q.user_id, keyword: q.keyword, day: q.day, limit: q.limit });
    return { items: rows.map(dailyRowView) };
  });

  api.get<{ Querystring: WindowQuery & Day }>('/api/daily/window', { schema: S.dailyWindow }, async (request) => {
    const q = request.query;
    requireIds({ user_id: q.user_id });
    const rows = await recall.dailyWindow({
      userId: q.user_id,
      messageId: q.message_id,
      before: q.before,
      after: q.after,
      day: q.day,
    });
    return { items: rows.map(dailyRowView) };
  });

  api.get<{ Querystring: UserQuery & Day }>('/api/daily', { schema: S.daily }, async (request) => {
    const q = request.query;
    requireIds({ user_id: q.user_id });
    return { items: (await recall.dailyMessages(q.user_id, q.day)).map(dailyRowView) };
  });

  api.get<{ Querystring: UserQuery & { tool: string; keyword: string; limit: number } }>(
    '/api/tool-calls',
    { schema: S.toolCalls },
    async (request) => {
      const q = request.query;
      requireIds({ user_id: q.user_id });
      return { items: await toolCallTimeline(recall, { userId: q.user_id, tool: q.tool, keyword: q.keyword, limit: q.limit }) };
    },
  );

  api.get('/api/runtime', { schema: S.runtime }, async (request) => {
    const admin = isAdmin(request);
    const tree = runtime.inspect() as InspectedNode;
    return {
      tree: admin ? tree : redactTree(tree),
      pid: process.pid,
      uptime_s: Math.round(process.uptime()),
      names: admin ? 'full' : 'redacted',
    };
  });
}

/** Exactly the demo's row fields (plus `error` on a failed turn's row), nothing internal. */
function rowView(row: RowView): RowView {
  const view: RowView = {
    ts: row.ts,
    role: row.role,
    content: row.content,
    message_id: row.message_id,
    tool_calls: row.tool_calls.map(({ name, input, output }) => ({ name, input, output })),
  };
  if (row.error) view.error = { code: row.error.code, message: row.error.message };
  return view;
}

function dailyRowView(row: DailyRowView): DailyRowView {
  return { ...rowView(row), day: row.day, session_id: row.session_id };
}
