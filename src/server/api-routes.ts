/**
 * The JSON API. The first four routes are the Agent Memory Demo's, with its shapes:
 *
 *   POST   /api/chat                               {user_id, session_id, message}
 *            → {reply, memory_hits, title, tool_calls:[{name, input, output}]}
 *            (header `Idempotency-Key`: a retried turn returns the stored reply, see
 *            recall/chat/turn-keys.ts; such a turn is not cancelled when its client goes away)
 *   POST   /api/conversations                      {user_id} → {session_id}
 *   GET    /api/conversations?user_id=             → {items:[{session_id, title, updated_at}]}
 *   GET    /api/conversations/:sid/messages?user_id=
 *            → {items:[{ts, role, content, message_id, tool_calls}]}  (unknown session: [])
 *
 * and the rest are Mnemo's own:
 *
 *   DELETE /api/conversations/:sid?user_id=        → {session_id, deleted: true} | 404
 *   POST   /api/conversations/:sid/fork            {user_id, message_id, new_session_id?}
 *            → {session_id}  (branch at a row: 409 new id taken, 404 no such row)
 *   GET    /api/conversations/:sid/search?user_id=&keyword=&limit=20          → {items}
 *   GET    /api/conversations/:sid/window?user_id=&message_id=&before=0&after=0 → {items}
 *   GET    /api/daily/search?user_id=&keyword=&day=&limit=20                  → {items}
 *   GET    /api/daily/window?user_id=&message_id=&before=0&after=0&day=        → {items}
 *   GET    /api/runtime                            → {tree, pid, uptime_s, names}
 *            (conversation names only with the admin token: `names` is 'full', else 'redacted')
 *
 * A chat turn runs under `turnSignal`: it is cancelled when its client disconnects or when the
 * server's stop deadline passes (then answered 503 `turn_interrupted`).
 *
 * Every session-scoped route takes the session under the given user only, so one user can
 * never list, read, search or delete another's sessions: the same session id under another
 * user is simply another (usually empty) session.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { redactTree, type InspectedNode } from './runtime-redaction.ts';
import { HttpError } from './server-errors.ts';
import { readBody, readQuery, requireIds } from './request-validation.ts';
import type { DailyRowView, RecallApi, RowView, RuntimeView } from './services.ts';
import { turnSignal } from './turn-signal.ts';

export interface ApiServices {
  recall: RecallApi;
  runtime: RuntimeView;
  /** Fires when the server's stop deadline has passed: turns still running are cancelled. */
  stopSignal?: AbortSignal;
  /** Whether the request carries the admin token. */
  isAdmin?: (request: FastifyRequest) => boolean;
}

interface SessionParams {
  session_id: string;
}

export function registerApiRoutes(api: FastifyInstance, { recall, runtime, stopSignal, isAdmin = () => false }: ApiServices): void {
  api.post('/api/chat', async (request, reply) => {
    const body = readBody(request.body, {
      user_id: { type: 'string' },
      session_id: { type: 'string' },
      message: { type: 'string' },
    });
    requireIds({ user_id: body.user_id, session_id: body.session_id });
    const key = request.headers['idempotency-key'];
    if (Array.isArray(key)) throw new HttpError(422, 'Idempotency-Key must be given once');
    const turn = turnSignal(reply, stopSignal, { followClient: key === undefined });
    const result = await recall
      .chat({
        userId: body.user_id,
        sessionId: body.session_id,
        message: body.message,
        signal: turn.signal,
        ...(key === undefined ? {} : { idempotencyKey: key }),
      })
      .finally(() => turn.dispose());
    return {
      reply: result.reply,
      memory_hits: result.memoryHits,
      title: result.title,
      tool_calls: result.toolCalls.map(({ name, input, output }) => ({ name, input, output })),
    };
  });

  api.post('/api/conversations', async (request) => {
    const { user_id } = readBody(request.body, { user_id: { type: 'string' } });
    requireIds({ user_id });
    return { session_id: await recall.createSession(user_id) };
  });

  api.get('/api/conversations', async (request) => {
    const { user_id } = readQuery(request.query, { user_id: { type: 'string' } });
    requireIds({ user_id });
    const items = await recall.listSessions(user_id);
    return { items: items.map(({ session_id, title, updated_at }) => ({ session_id, title, updated_at })) };
  });

  api.get<{ Params: SessionParams }>('/api/conversations/:session_id/messages', async (request) => {
    const { user_id } = readQuery(request.query, { user_id: { type: 'string' } });
    const { session_id } = request.params;
    requireIds({ user_id, session_id });
    return { items: (await recall.getSessionMessages(user_id, session_id)).map(rowView) };
  });

  api.delete<{ Params: SessionParams }>('/api/conversations/:session_id', async (request) => {
    const { user_id } = readQuery(request.query, { user_id: { type: 'string' } });
    const { session_id } = request.params;
    requireIds({ user_id, session_id });
    if (!(await recall.deleteSession(user_id, session_id))) {
      throw new HttpError(404, 'conversation not found');
    }
    return { session_id, deleted: true };
  });

  api.post<{ Params: SessionParams }>('/api/conversations/:session_id/fork', async (request) => {
    const body = readBody(request.body, {
      user_id: { type: 'string' },
      message_id: { type: 'int' },
      new_session_id: { type: 'string', default: '' },
    });
    const { session_id } = request.params;
    requireIds({ user_id: body.user_id, session_id, ...(body.new_session_id === '' ? {} : { new_session_id: body.new_session_id }) });
    const created = await recall.forkSession(body.user_id, session_id, body.message_id, body.new_session_id === '' ? undefined : body.new_session_id);
    return { session_id: created };
  });

  api.get<{ Params: SessionParams }>('/api/conversations/:session_id/search', async (request) => {
    const q = readQuery(request.query, {
      user_id: { type: 'string' },
      keyword: { type: 'string', default: '' },
      limit: { type: 'int', default: 20 },
    });
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

  api.get<{ Params: SessionParams }>('/api/conversations/:session_id/window', async (request) => {
    const q = readQuery(request.query, {
      user_id: { type: 'string' },
      message_id: { type: 'int' },
      before: { type: 'int', default: 0 },
      after: { type: 'int', default: 0 },
    });
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

  api.get('/api/daily/search', async (request) => {
    const q = readQuery(request.query, {
      user_id: { type: 'string' },
      keyword: { type: 'string', default: '' },
      day: { type: 'string', default: '' },
      limit: { type: 'int', default: 20 },
    });
    requireIds({ user_id: q.user_id });
    const rows = await recall.searchDaily({ userId: q.user_id, keyword: q.keyword, day: q.day, limit: q.limit });
    return { items: rows.map(dailyRowView) };
  });

  api.get('/api/daily/window', async (request) => {
    const q = readQuery(request.query, {
      user_id: { type: 'string' },
      message_id: { type: 'int' },
      before: { type: 'int', default: 0 },
      after: { type: 'int', default: 0 },
      day: { type: 'string', default: '' },
    });
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

  api.get('/api/runtime', async (request) => {
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
