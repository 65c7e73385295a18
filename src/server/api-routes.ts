/**
 * The JSON API. The first four routes are the Agent Memory Demo's, with its shapes:
 *
 *   POST   /api/chat                               {user_id, session_id, message}
 *            → {reply, memory_hits, title, tool_calls:[{name, input, output}]}
 *            (header `Idempotency-Key`: a retried turn returns the stored reply, see
 *            recall/chat/turn-keys.ts; such a turn is not cancelled when its client goes away)
 *   POST   /api/chat/stream                        {user_id, session_id, message}
 *            → text/event-stream: delta, tool_call, tool_result, then done (/api/chat's answer)
 *              or error (chat-stream-route.ts); `Idempotency-Key` as on /api/chat
 *   POST   /api/conversations                      {user_id} → {session_id}
 *   GET    /api/conversations?user_id=             → {items:[{session_id, title, updated_at}]}
 *   GET    /api/conversations/:sid/messages?user_id=
 *            → {items:[{ts, role, content, message_id, tool_calls}]}  (unknown session: [])
 *            (both take `limit` and `cursor` too, Mnemo's own: then a page and `next_cursor`)
 *
 * and the rest are Mnemo's own:
 *
 *   DELETE /api/conversations/:sid?user_id=        → {session_id, deleted: true} | 404
 *   POST   /api/conversations/:sid/fork            {user_id, message_id, new_session_id?}
 *            → {session_id}  (branch at a row: 409 new id taken, 404 no such row)
 *   GET    /api/conversations/:sid/summaries?user_id=  → {items:[{id, text, from, to, model, at, previous, method}]}
 *            (the session's rolling summaries, oldest first; unknown session or none yet: [])
 *   GET    /api/conversations/:sid/search?user_id=&keyword=&limit=20          → {items}
 *   GET    /api/conversations/:sid/window?user_id=&message_id=&before=0&after=0 → {items}
 *   GET    /api/daily/search?user_id=&keyword=&day=&limit=20                  → {items}
 *   GET    /api/daily/window?user_id=&message_id=&before=0&after=0&day=        → {items}
 *   GET    /api/search?user_id=&q=&session_id=&day=&from=&to=&roles=&tool=&limit=10
 *            → {ranking: 'bm25' | 'hybrid', pending_embeddings, embeddings_error?, items:[{session_id,
 *               message_id, day, score, snippet, source, role, ts, daily_message_id?}]}
 *               (ranked recall across sessions, days, long-term; hybrid with embeddings)
 *   GET    /api/memory?user_id=&as_of=             → {items}  long-term facts, current or as of a time
 *   GET    /api/memory/history?user_id=            → {items}  every entry, superseded ones with valid_to
 *   POST   /api/memory          {user_id, text, key?}       → {status, item}
 *   PATCH  /api/memory/:id      {user_id, text, version}    → {status, item} | 409 {detail, code: 'memory_conflict'}
 *   DELETE /api/memory/:id?user_id=                          → {item} (validity ends) | 404
 *            (an item: {id, text, key, tags, source, created_at, valid_from, valid_to,
 *            superseded_by, supersedes, version, verdict}, absent fields null)
 *   GET    /api/daily?user_id=&day=                → {items}  (one day, chronological; default today)
 *   GET    /api/tool-calls?user_id=&tool=&keyword=&limit=100&cursor=
 *            → {items:[{session_id, title, message_id, ts, user_message, index, name, input, output}], next_cursor}
 *            (every tool call of the user, newest turn first, a bounded scan: tool-call-timeline.ts)
 *   GET    /api/runtime                            → {tree, pid, uptime_s, names}
 *            (the operator's: never a user token; conversation names only with the admin
 *            token: `names` is 'full', else 'redacted')
 *   GET    /api/whoami                             → {user_id, role}  the caller (authorization.ts):
 *            role 'user' with its user_id, else 'admin', 'shared' or 'anonymous' with null
 *   DELETE /api/users/:user_id[?compact=true]      → {user_id, erased: true, conversations, keys[, compaction]}
 *            (the operator's: admin token only, else 403; erases everything of the user,
 *            `recall.eraseUser`; 409 `user_erasing` while an erasure of that user runs;
 *            compact=true: then `runtime.compact({ copy: 'rebuild' })`, so no byte of the user
 *            stays in any file of the data directory)
 *
 * A chat turn runs under `turnSignal`: it is cancelled when its client disconnects or when the
 * server's stop deadline passes (then answered 503 `turn_interrupted`).
 *
 * Each route's body and query string are validated by fastify from its schema (api-schemas.ts,
 * read by request-validation.ts: FastAPI's 422) before the handler runs; ids are then checked
 * with `requireIds` (the demo's 400).
 *
 * Who may call each route is its `config.access` (authorization.ts): the user routes admit a
 * user token only for its own `user_id`; `/api/whoami` any caller; `/api/runtime` is an operator route.
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
import type { RecallApi, RuntimeView } from './services.ts';
import { dailyRowBody, factBody, factWriteBody, rowBody, searchBody, sessionBody, summaryBody } from '../recall/demo-shapes.ts';
import { decodeCursor, encodeCursor } from './page-cursor.ts';
import { toolCallTimeline } from './tool-call-timeline.ts';
import { turnSignal } from './turn-signal.ts';
import { streamChat } from './chat-stream-route.ts';
import type { TurnSlots } from './turn-slots.ts';
import { validateIdempotencyKey } from '../memory/contract/idempotency.ts';

export interface ApiServices {
  recall: RecallApi;
  runtime: RuntimeView;
  /** Fires when the server's stop deadline has passed: turns still running are cancelled. */
  stopSignal?: AbortSignal;
  /** Told of every chat turn: its seconds and outcome (`ok`, else the error's code). */
  onTurn?: (seconds: number, outcome: string) => void;
  /** Chat turns running at once, per user (turn-slots.ts). */
  turns: TurnSlots;
}

// What the routes' schemas (api-schemas.ts) let through, typed: fastify has validated and
// replaced the body and query string before a handler runs.
interface SessionParams {
  session_id: string;
}
interface UserQuery {
  user_id: string;
}
interface PageQuery extends UserQuery {
  /** 0: not asked for. */
  limit: number;
  /** '': not given. */
  cursor: string;
}

/** A page was asked for (else the Demo's whole list, in its shape). */
const isPaged = (q: PageQuery): boolean => q.limit !== 0 || q.cursor !== '';
interface SearchQuery extends UserQuery {
  keyword: string;
  limit: number;
}
interface ChatBody {
  user_id: string;
  session_id: string;
  message: string;
}
interface RankedSearchQuery extends UserQuery {
  q: string;
  session_id: string;
  day: string;
  from: string;
  to: string;
  roles: string;
  tool: string;
  limit: number;
}
interface WindowQuery extends UserQuery {
  message_id: number;
  before: number;
  after: number;
}
type Day = { day: string };

interface ForkBody extends UserQuery {
  message_id: number;
  new_session_id: string;
}

interface MemoryParams {
  id: string;
}
interface MemoryQuery extends UserQuery {
  as_of: string;
}
interface RememberBody extends UserQuery {
  text: string;
  key: string;
}
interface UpdateMemoryBody extends UserQuery {
  text: string;
  version: number;
}

// Each route declares who may call it (authorization.ts); a route without one is operator-only.
const USER = { access: 'user' } as const;
const AUTHENTICATED = { access: 'authenticated' } as const;
const OPERATOR = { access: 'operator' } as const;

/** The `Idempotency-Key` header of a chat turn, if given (once). */
function turnKeyOf(request: FastifyRequest): string | undefined {
  const key = request.headers['idempotency-key'];
  if (Array.isArray(key)) throw new HttpError(422, 'Idempotency-Key must be given once');
  return key;
}

/** Whether the caller holds the admin token. */
const isAdmin = (request: FastifyRequest): boolean => request.principal.kind === 'admin';

export function registerApiRoutes(api: FastifyInstance, { recall, runtime, stopSignal, onTurn, turns }: ApiServices): void {
  api.get('/api/whoami', { config: AUTHENTICATED, schema: S.whoami }, async (request) => {
    const principal = request.principal;
    return { user_id: principal.kind === 'user' ? principal.userId : null, role: principal.kind };
  });

  api.post<{ Body: ChatBody }>('/api/chat', { config: USER, schema: S.chat }, async (request, reply) => {
    const body = request.body;
    requireIds({ user_id: body.user_id, session_id: body.session_id });
    const key = turnKeyOf(request);
    const giveBack = turns.take(body.user_id);
    // A keyed turn may have a retry waiting for it: only the stop deadline cancels it.
    const turn = turnSignal(reply, stopSignal, { followClient: key === undefined });
    const started = performance.now();
    let outcome = 'ok';
    const result = await recall
      .chat({
        userId: body.user_id,
        sessionId: body.session_id,
        message: body.message,
        signal: turn.signal,
        ...(key === undefined ? {} : { idempotencyKey: key }),
      })
      .catch((error: unknown) => {
        outcome = errorCode(error);
        throw error;
      })
      .finally(() => {
        giveBack();
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

  api.post<{ Body: ChatBody }>('/api/chat/stream', { config: USER, schema: S.chatStream }, async (request, reply) => {
    const body = request.body;
    requireIds({ user_id: body.user_id, session_id: body.session_id });
    // Checked here: a bad key is a 400 JSON answer before any event.
    const key = turnKeyOf(request);
    const checked = key === undefined ? undefined : validateIdempotencyKey(key);
    const giveBack = turns.take(body.user_id);
    try {
      await streamChat(reply, recall, body, stopSignal, checked);
    } finally {
      giveBack();
    }
  });

  api.post<{ Body: UserQuery }>('/api/conversations', { config: USER, schema: S.createSession }, async (request) => {
    const { user_id } = request.body;
    requireIds({ user_id });
    return { session_id: await recall.createSession(user_id) };
  });

  api.get<{ Querystring: PageQuery }>('/api/conversations', { config: USER, schema: S.listSessions }, async (request) => {
    const { user_id, limit, cursor } = request.query;
    requireIds({ user_id });
    if (!isPaged(request.query)) return { items: (await recall.listSessions(user_id)).map(sessionBody) };
    const page = await recall.listSessionsPage(user_id, { ...(limit !== 0 ? { limit } : {}), ...(cursor === '' ? {} : { cursor }) });
    return { items: page.items.map(sessionBody), next_cursor: page.nextCursor };
  });

  api.get<{ Params: SessionParams; Querystring: PageQuery }>('/api/conversations/:session_id/messages', { config: USER, schema: S.messages }, async (request) => {
    const { user_id, limit, cursor } = request.query;
    const { session_id } = request.params;
    requireIds({ user_id, session_id });
    if (!isPaged(request.query)) return { items: (await recall.sessionMessages(user_id, session_id)).map(rowBody) };
    // Forward from the oldest: the cursor is the last record id shown.
    const [after] = cursor === '' ? [0] : decodeCursor('m', cursor, ['number']);
    const page = await recall.sessionMessagesPage(user_id, session_id, { after, ...(limit !== 0 ? { limit } : {}) });
    const last = page.firstId + page.rows.length - 1;
    return { items: page.rows.map(rowBody), next_cursor: page.more ? encodeCursor('m', [last]) : null };
  });

  api.delete<{ Params: SessionParams; Querystring: UserQuery }>('/api/conversations/:session_id', { config: USER, schema: S.deleteSession }, async (request) => {
    const { user_id } = request.query;
    const { session_id } = request.params;
    requireIds({ user_id, session_id });
    if (!(await recall.deleteSession(user_id, session_id))) {
      throw new HttpError(404, 'conversation not found');
    }
    return { session_id, deleted: true };
  });

  api.post<{ Params: SessionParams; Body: ForkBody }>('/api/conversations/:session_id/fork', { config: USER, schema: S.forkSession }, async (request) => {
    const body = request.body;
    const { session_id } = request.params;
    const target = body.new_session_id === '' ? undefined : body.new_session_id;
    requireIds({ user_id: body.user_id, session_id, ...(target === undefined ? {} : { new_session_id: target }) });
    return { session_id: await recall.forkSession(body.user_id, session_id, body.message_id, target) };
  });

  api.get<{ Params: SessionParams; Querystring: UserQuery }>('/api/conversations/:session_id/summaries', { config: USER, schema: S.summaries }, async (request) => {
    const { user_id } = request.query;
    const { session_id } = request.params;
    requireIds({ user_id, session_id });
    return { items: (await recall.summaries(user_id, session_id)).map(summaryBody) };
  });

  api.get<{ Params: SessionParams; Querystring: SearchQuery }>('/api/conversations/:session_id/search', { config: USER, schema: S.searchSession }, async (request) => {
    const q = request.query;
    const { session_id } = request.params;
    requireIds({ user_id: q.user_id, session_id });
    const rows = await recall.searchSession({
      userId: q.user_id,
      sessionId: session_id,
      keyword: q.keyword,
      limit: q.limit,
    });
    return { items: rows.map(rowBody) };
  });

  api.get<{ Params: SessionParams; Querystring: WindowQuery }>('/api/conversations/:session_id/window', { config: USER, schema: S.sessionWindow }, async (request) => {
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
    return { items: rows.map(rowBody) };
  });

  api.get<{ Querystring: SearchQuery & Day }>('/api/daily/search', { config: USER, schema: S.searchDaily }, async (request) => {
    const q = request.query;
    requireIds({ user_id: q.user_id });
    const rows = await recall.searchDaily({ userId: q.user_id, keyword: q.keyword, day: q.day, limit: q.limit });
    return { items: rows.map(dailyRowBody) };
  });

  api.get<{ Querystring: WindowQuery & Day }>('/api/daily/window', { config: USER, schema: S.dailyWindow }, async (request) => {
    const q = request.query;
    requireIds({ user_id: q.user_id });
    const rows = await recall.dailyWindow({
      userId: q.user_id,
      messageId: q.message_id,
      before: q.before,
      after: q.after,
      day: q.day,
    });
    return { items: rows.map(dailyRowBody) };
  });

  api.get<{ Querystring: UserQuery & Day }>('/api/daily', { config: USER, schema: S.daily }, async (request) => {
    const q = request.query;
    requireIds({ user_id: q.user_id });
    return { items: (await recall.dailyMessages(q.user_id, q.day)).map(dailyRowBody) };
  });

  api.get<{ Querystring: UserQuery & { tool: string; keyword: string; limit: number; cursor: string } }>(
    '/api/tool-calls',
    { config: USER, schema: S.toolCalls },
    async (request) => {
      const q = request.query;
      requireIds({ user_id: q.user_id });
      const page = await toolCallTimeline(recall, { userId: q.user_id, tool: q.tool, keyword: q.keyword, limit: q.limit, cursor: q.cursor });
      return { items: page.items, next_cursor: page.nextCursor };
    },
  );

  api.get<{ Querystring: RankedSearchQuery }>('/api/search', { config: USER, schema: S.search }, async (request) => {
    const q = request.query;
    requireIds({ user_id: q.user_id, ...(q.session_id === '' ? {} : { session_id: q.session_id }) });
    // An empty parameter is no filter; `roles` is a comma-separated list.
    const hits = await recall.search({
      userId: q.user_id,
      query: q.q,
      limit: q.limit,
      ...(q.session_id === '' ? {} : { sessionId: q.session_id }),
      ...(q.day === '' ? {} : { day: q.day }),
      ...(q.from === '' ? {} : { from: q.from }),
      ...(q.to === '' ? {} : { to: q.to }),
      ...(q.roles === '' ? {} : { roles: q.roles.split(',').map((r) => r.trim()).filter((r) => r !== '') }),
      ...(q.tool === '' ? {} : { tool: q.tool }),
    });
    return searchBody(hits);
  });

  api.get<{ Querystring: MemoryQuery }>('/api/memory', { config: USER, schema: S.listMemory }, async (request) => {
    const q = request.query;
    requireIds({ user_id: q.user_id });
    const items = await recall.listFacts(q.user_id, q.as_of === '' ? {} : { asOf: q.as_of });
    return { items: items.map(factBody) };
  });

  api.get<{ Querystring: UserQuery }>('/api/memory/history', { config: USER, schema: S.memoryHistory }, async (request) => {
    const { user_id } = request.query;
    requireIds({ user_id });
    return { items: (await recall.factHistory(user_id)).map(factBody) };
  });

  api.post<{ Body: RememberBody }>('/api/memory', { config: USER, schema: S.remember }, async (request) => {
    const body = request.body;
    requireIds({ user_id: body.user_id });
    const w = await recall.remember(body.user_id, { text: body.text, ...(body.key === '' ? {} : { key: body.key }) });
    return factWriteBody(w);
  });

  api.patch<{ Params: MemoryParams; Body: UpdateMemoryBody }>('/api/memory/:id', { config: USER, schema: S.updateMemory }, async (request) => {
    const body = request.body;
    requireIds({ user_id: body.user_id });
    const w = await recall.updateFact(body.user_id, request.params.id, { text: body.text, version: body.version });
    return factWriteBody(w);
  });

  api.delete<{ Params: MemoryParams; Querystring: UserQuery }>('/api/memory/:id', { config: USER, schema: S.forgetMemory }, async (request) => {
    const { user_id } = request.query;
    requireIds({ user_id });
    return { item: factBody(await recall.forgetFact(user_id, request.params.id)) };
  });

  api.delete<{ Params: { user_id: string }; Querystring: { compact: string } }>('/api/users/:user_id', { config: OPERATOR, schema: S.eraseUser }, async (request) => {
    // Only the admin token erases users (stricter than `operator`, which an open server or the
    // shared token would satisfy when no admin token is configured).
    if (!isAdmin(request)) throw new HttpError(403, 'erasing a user needs the admin token');
    const { user_id } = request.params;
    requireIds({ user_id });
    const { compact: compactText } = request.query;
    if (compactText !== 'true' && compactText !== 'false') throw new HttpError(400, 'compact must be true or false');
    const compact = compactText === 'true';
    const report = await recall.eraseUser(user_id, compact ? { compact } : undefined);
    const c = report.compaction;
    return {
      user_id,
      erased: true,
      conversations: report.conversations,
      keys: report.keys,
      ...(c === undefined ? {} : { compaction: { bytes_before: c.bytesBefore, bytes_after: c.bytesAfter, pause_ms: Math.round(c.pauseMs) } }),
    };
  });

  api.get('/api/runtime', { config: OPERATOR, schema: S.runtime }, async (request) => {
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

