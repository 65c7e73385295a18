/**
 * JSON schemas of the API's routes (body, querystring, path, answers), declared on the routes
 * so `/openapi.json` (@fastify/swagger) describes them.
 *
 * They are also what fastify validates a request with: `fieldValidatorCompiler`
 * (request-validation.ts) reads a body's or a query string's fields from them (type, default,
 * required) and answers FastAPI's exact 422 issue list. Answers are written with
 * JSON.stringify, as before (a schema serializer would drop fields a schema does not list).
 * `validated` below installs both on a scope.
 */
import type { FastifyInstance, FastifySchema } from 'fastify';
import { fieldValidatorCompiler } from './request-validation.ts';
import { ID_MAX_CHARS, ID_RULE } from '../recall/recall-ids.ts';

type Schema = Record<string, unknown>;

const str = { type: 'string' } as const;
const int = { type: 'integer' } as const;
/** An id (recall-ids.ts): its length and characters are the id rule's, a 400 like the Demo's. */
const idField = { type: 'string', minLength: 1, maxLength: ID_MAX_CHARS, description: ID_RULE, 'x-mnemo-id': true } as const;
/** An id that may be left out (`''`). */
const optionalId = (description: string) => ({ ...idField, minLength: 0, default: '', description: `${description}; ${ID_RULE}` }) as const;

/**
 * The longest value of each kind of field, in Unicode characters; longer is a 422
 * `string_too_long` (pydantic's issue, with `ctx.max_length`). Bounds a real user does not
 * reach, so that no field is bounded only by the 1 MiB body.
 */
export const FIELD_MAX_CHARS = {
  /** A chat message. */
  message: 100_000,
  /** A long-term fact's text. */
  fact: 10_000,
  /** A search query or keyword. */
  query: 1_000,
  /** A fact key, a tool name, a role list. */
  name: 200,
  /** A day or a time. */
  day: 64,
  /** A page cursor. */
  cursor: 200,
} as const;
const bounded = (kind: keyof typeof FIELD_MAX_CHARS, extra: Schema = {}) => ({ ...str, maxLength: FIELD_MAX_CHARS[kind], ...extra });
const dayField = (description: string) => bounded('day', { default: '', description });

export const errorBody: Schema = {
  type: 'object',
  description: '`detail`: a sentence, or (422) FastAPI\'s issue list [{type, loc, msg, input}]; `code` for model failures and interrupted turns',
  properties: {
    detail: { anyOf: [str, { type: 'array', items: { type: 'object', properties: { type: str, loc: { type: 'array' }, msg: str, input: {} } } }] },
    code: str,
  },
  required: ['detail'],
};

const toolCall: Schema = { type: 'object', properties: { name: str, input: {}, output: {} }, required: ['name', 'input', 'output'] };

const row: Schema = {
  type: 'object',
  properties: {
    ts: str,
    role: str,
    content: str,
    message_id: int,
    tool_calls: { type: 'array', items: toolCall },
    error: { type: 'object', properties: { code: str, message: str } },
  },
  required: ['ts', 'role', 'content', 'message_id', 'tool_calls'],
};
// `session_id` is null for an imported daily row whose file did not say (DailyRow).
const dailyRow: Schema = { ...row, properties: { ...(row['properties'] as Schema), day: str, session_id: { type: ['string', 'null'] } } };
const items = (of: Schema): Schema => ({ type: 'object', properties: { items: { type: 'array', items: of } }, required: ['items'] });

/** `limit` or `cursor` asks for a page: then the answer has `next_cursor`; neither: the Demo's whole list. */
const pageQuery: Schema = {
  type: 'object',
  properties: {
    user_id: idField,
    limit: { ...int, default: 0, description: 'items per page, 1..500; 0 (default): every item, unless a cursor is given (then 100)' },
    cursor: bounded('cursor', { default: '', description: "a previous page's next_cursor; '': the first page" }),
  },
  required: ['user_id'],
};
const paged = (of: Schema): Schema => ({
  type: 'object',
  properties: {
    items: { type: 'array', items: of },
    next_cursor: { type: ['string', 'null'], description: 'the next page’s cursor, null after the last (the conversation and message lists: only when paged)' },
  },
  required: ['items'],
});

const errors = { 400: errorBody, 401: errorBody, 403: errorBody, 422: errorBody, 503: errorBody };
const sessionParams: Schema = { type: 'object', properties: { session_id: idField }, required: ['session_id'] };
const userQuery: Schema = { type: 'object', properties: { user_id: idField }, required: ['user_id'] };
const windowQuery = (withDay: boolean): Schema => ({
  type: 'object',
  properties: {
    user_id: idField,
    message_id: int,
    before: { ...int, default: 0 },
    after: { ...int, default: 0 },
    ...(withDay ? { day: dayField('YYYY-MM-DD') } : {}),
  },
  required: ['user_id', 'message_id'],
});
const searchQuery = (withDay: boolean): Schema => ({
  type: 'object',
  properties: {
    user_id: idField,
    keyword: bounded('query', { default: '' }),
    ...(withDay ? { day: dayField('YYYY-MM-DD') } : {}),
    limit: { ...int, default: 20 },
  },
  required: ['user_id'],
});

const factItem: Schema = {
  type: 'object',
  description: 'a long-term fact; absent fields are null',
  properties: {
    id: str, text: str, key: { type: ['string', 'null'] }, tags: { type: 'array', items: str }, source: {},
    created_at: str, valid_from: str, valid_to: { type: ['string', 'null'] }, superseded_by: {}, supersedes: {},
    version: int, verdict: {},
  },
};
const memoryParams: Schema = { type: 'object', properties: { id: str }, required: ['id'] };
const writeAnswer: Schema = { type: 'object', properties: { status: str, item: factItem }, required: ['status', 'item'] };

/** `Idempotency-Key` on /api/chat and /api/chat/stream (one key space: the turn's). */
const turnKeyHeader: Schema = {
  type: 'object',
  properties: {
    'idempotency-key': {
      type: 'string',
      minLength: 1,
      maxLength: 200,
      description:
        'makes the turn exactly-once: a retry with the same key gets the stored answer, no second model call (24 h; a retry while it runs waits for it); the turn is not cancelled when its client goes away',
    },
  },
};

export const API_SCHEMAS = {
  chat: {
    summary: 'One chat turn',
    tags: ['demo'],
    headers: turnKeyHeader,
    body: {
      type: 'object',
      properties: { user_id: idField, session_id: idField, message: bounded('message') },
      required: ['user_id', 'session_id', 'message'],
    },
    response: {
      200: {
        type: 'object',
        properties: { reply: str, memory_hits: int, title: str, tool_calls: { type: 'array', items: toolCall } },
        required: ['reply', 'memory_hits', 'title', 'tool_calls'],
      },
      ...errors,
      429: errorBody,
      502: errorBody,
      504: errorBody,
    },
  },
  chatStream: {
    summary: 'One chat turn as Server-Sent Events: delta, tool_call, tool_result, then done (the /api/chat answer) or error',
    tags: ['mnemo'],
    headers: turnKeyHeader,
    body: {
      type: 'object',
      properties: { user_id: idField, session_id: idField, message: bounded('message') },
      required: ['user_id', 'session_id', 'message'],
    },
    response: { 200: { description: 'text/event-stream', type: 'string' }, ...errors },
  },
  createSession: {
    summary: 'Create a session',
    tags: ['demo'],
    body: { type: 'object', properties: { user_id: idField }, required: ['user_id'] },
    response: { 200: { type: 'object', properties: { session_id: str }, required: ['session_id'] }, ...errors },
  },
  listSessions: {
    summary: "A user's sessions, most recent first (paged with limit or cursor)",
    tags: ['demo'],
    querystring: pageQuery,
    response: {
      200: paged({ type: 'object', properties: { session_id: str, title: str, updated_at: str }, required: ['session_id', 'title', 'updated_at'] }),
      ...errors,
    },
  },
  messages: {
    summary: "A session's messages, chronological (unknown session: no items; paged with limit or cursor)",
    tags: ['demo'],
    params: sessionParams,
    querystring: pageQuery,
    response: { 200: paged(row), ...errors },
  },
  deleteSession: {
    summary: 'Delete a session',
    tags: ['mnemo'],
    params: sessionParams,
    querystring: userQuery,
    response: {
      200: { type: 'object', properties: { session_id: str, deleted: { type: 'boolean', const: true } }, required: ['session_id', 'deleted'] },
      404: errorBody,
      ...errors,
    },
  },
  forkSession: {
    summary: 'Branch a session at one of its rows (edit and resend): the new session shares the prefix',
    tags: ['mnemo'],
    params: sessionParams,
    body: {
      type: 'object',
      properties: {
        user_id: idField,
        message_id: { ...int, description: 'the last row the new session keeps' },
        new_session_id: optionalId("the new session's id; '' (default): a fresh one"),
      },
      required: ['user_id', 'message_id'],
    },
    response: {
      200: { type: 'object', properties: { session_id: str }, required: ['session_id'] },
      404: errorBody,
      409: errorBody,
      ...errors,
    },
  },
  summaries: {
    summary: "A session's rolling summaries, oldest first, with provenance (the last is what the next turn sends as [SUMMARY])",
    tags: ['mnemo'],
    params: sessionParams,
    querystring: userQuery,
    response: {
      200: items({
        type: 'object',
        description: '`from`..`to`: the message ids it covers; `previous`: the id of the summary it builds on (null for the first); `method`: llm or extractive',
        properties: { id: int, text: str, from: int, to: int, model: str, at: str, previous: { type: ['integer', 'null'] }, method: { type: 'string', enum: ['llm', 'extractive'] } },
        required: ['id', 'text', 'from', 'to', 'model', 'at', 'previous', 'method'],
      }),
      ...errors,
    },
  },
  searchSession: { summary: 'Keyword search in one session', tags: ['mnemo'], params: sessionParams, querystring: searchQuery(false), response: { 200: items(row), ...errors } },
  sessionWindow: { summary: 'Rows around a message of one session', tags: ['mnemo'], params: sessionParams, querystring: windowQuery(false), response: { 200: items(row), ...errors } },
  searchDaily: { summary: "Keyword search in a user's daily view", tags: ['mnemo'], querystring: searchQuery(true), response: { 200: items(dailyRow), ...errors } },
  dailyWindow: { summary: "Rows around a message of a user's daily view", tags: ['mnemo'], querystring: windowQuery(true), response: { 200: items(dailyRow), ...errors } },
  search: {
    summary: 'Ranked search (BM25, or hybrid BM25 + embeddings fused by RRF when embeddings are configured) over a user\'s sessions, daily view and long-term memory',
    tags: ['mnemo'],
    querystring: {
      type: 'object',
      properties: {
        user_id: idField,
        q: bounded('query', { description: 'the query (required: missing is 422); empty: no items' }),
        session_id: optionalId("one session's rows only; '': every session"),
        day: dayField('YYYY-MM-DD'),
        from: dayField('YYYY-MM-DD, inclusive'),
        to: dayField('YYYY-MM-DD, inclusive'),
        roles: bounded('name', { default: '', description: 'comma-separated roles' }),
        tool: bounded('name', { default: '' }),
        limit: { ...int, default: 10 },
      },
      required: ['user_id', 'q'],
    },
    response: {
      200: {
        type: 'object',
        properties: {
          ranking: { type: 'string', enum: ['bm25', 'hybrid'], description: 'hybrid: reciprocal rank fusion (k = 60) of BM25 and vector similarity; score is the fused score' },
          pending_embeddings: { ...int, description: "the user's rows still waiting for their vector (found by BM25 only until embedded)" },
          embeddings_error: { ...str, description: 'set when embeddings are configured but the query could not be embedded: the items are BM25 alone' },
          items: {
            type: 'array',
            items: {
              type: 'object',
              properties: { session_id: str, message_id: int, day: str, score: { type: 'number' }, snippet: str, source: str, role: str, ts: str, daily_message_id: int },
              required: ['session_id', 'message_id', 'day', 'score', 'snippet', 'source', 'role', 'ts'],
            },
          },
        },
        required: ['ranking', 'pending_embeddings', 'items'],
      },
      ...errors,
    },
  },
  listMemory: {
    summary: "A user's long-term facts: current, or as believed at `as_of`",
    tags: ['mnemo'],
    querystring: { type: 'object', properties: { user_id: idField, as_of: dayField('ISO 8601 time') }, required: ['user_id'] },
    response: { 200: items(factItem), ...errors },
  },
  memoryHistory: {
    summary: "Every long-term fact of a user, superseded ones with valid_to",
    tags: ['mnemo'],
    querystring: userQuery,
    response: { 200: items(factItem), ...errors },
  },
  remember: {
    summary: 'Remember a fact (a key supersedes the current fact with that key; a duplicate is not stored twice)',
    tags: ['mnemo'],
    body: { type: 'object', properties: { user_id: idField, text: bounded('fact'), key: bounded('name', { default: '' }) }, required: ['user_id', 'text'] },
    response: { 200: writeAnswer, ...errors },
  },
  updateMemory: {
    summary: 'Change a fact, compare-and-set on its version (409 memory_conflict when stale)',
    tags: ['mnemo'],
    params: memoryParams,
    body: { type: 'object', properties: { user_id: idField, text: bounded('fact'), version: int }, required: ['user_id', 'text', 'version'] },
    response: { 200: writeAnswer, 404: errorBody, 409: errorBody, ...errors },
  },
  forgetMemory: {
    summary: "Forget a fact: its validity ends (it stays in the history)",
    tags: ['mnemo'],
    params: memoryParams,
    querystring: userQuery,
    response: { 200: { type: 'object', properties: { item: factItem }, required: ['item'] }, 404: errorBody, ...errors },
  },
  eraseUser: {
    summary: "Erase everything of a user (the admin token only): sessions, daily rows, long-term memory, logs, index, summaries, keys",
    tags: ['mnemo'],
    params: { type: 'object', properties: { user_id: idField }, required: ['user_id'] },
    querystring: {
      type: 'object',
      properties: {
        compact: {
          type: 'string',
          enum: ['true', 'false'],
          default: 'false',
          description: 'then rebuild the LMDB data file (runtime.compact({ copy: \'rebuild\' })): no byte of the user (values, ids, keys) stays in any file of the data directory; writes and reads wait meanwhile',
        },
      },
    },
    response: {
      200: {
        type: 'object',
        properties: {
          user_id: str,
          erased: { type: 'boolean', const: true },
          conversations: int,
          keys: int,
          compaction: {
            type: 'object',
            description: 'with compact=true: data.mdb before and after (bytes), and how long writes and reads waited (ms)',
            properties: { bytes_before: int, bytes_after: int, pause_ms: { type: 'number' } },
            required: ['bytes_before', 'bytes_after', 'pause_ms'],
          },
        },
        required: ['user_id', 'erased', 'conversations', 'keys'],
      },
      409: errorBody,
      ...errors,
    },
  },
  toolCalls: {
    summary: "Every tool call of a user, newest turn first, filterable by tool name and keyword",
    tags: ['mnemo'],
    querystring: {
      type: 'object',
      properties: {
        user_id: idField,
        tool: bounded('name', { default: '', description: 'exact tool name; empty: any' }),
        keyword: bounded('query', { default: '', description: 'case-insensitive, in the name, arguments, output or user message' }),
        limit: { ...int, default: 100, description: '1..500' },
        cursor: bounded('cursor', { default: '', description: "a previous answer's next_cursor; '': from the newest" }),
      },
      required: ['user_id'],
    },
    response: {
      200: paged({
        type: 'object',
        properties: {
          session_id: str,
          title: str,
          message_id: int,
          ts: str,
          user_message: str,
          index: int,
          name: str,
          input: {},
          output: {},
          failed: { type: 'boolean', const: true },
        },
        required: ['session_id', 'title', 'message_id', 'ts', 'user_message', 'index', 'name', 'input', 'output'],
      }),
      ...errors,
    },
  },
  daily: {
    summary: "One day of a user's daily view, chronological (default today)",
    tags: ['mnemo'],
    querystring: {
      type: 'object',
      properties: { user_id: idField, day: dayField('YYYY-MM-DD; empty: today') },
      required: ['user_id'],
    },
    response: { 200: items(dailyRow), ...errors },
  },
  runtime: {
    summary: 'The live supervision tree (conversation names only with the admin token)',
    tags: ['mnemo'],
    response: {
      200: {
        type: 'object',
        properties: { tree: { type: 'object' }, pid: int, uptime_s: int, names: { type: 'string', enum: ['full', 'redacted'] } },
        required: ['tree', 'pid', 'uptime_s', 'names'],
      },
      401: errorBody,
      403: errorBody,
    },
  },
  whoami: {
    summary: 'The caller: a user token’s user, else its role',
    tags: ['mnemo'],
    response: {
      200: {
        type: 'object',
        properties: { user_id: { type: ['string', 'null'] }, role: { type: 'string', enum: ['user', 'admin', 'shared', 'anonymous'] } },
        required: ['user_id', 'role'],
      },
      401: errorBody,
    },
  },
} satisfies Record<string, FastifySchema & { summary: string; tags: string[] }>;

/** Routes registered on `app` after this are validated from their schemas (see above). */
export function validated(app: FastifyInstance): void {
  app.setValidatorCompiler(fieldValidatorCompiler);
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
}
