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

type Schema = Record<string, unknown>;

const str = { type: 'string' } as const;
const int = { type: 'integer' } as const;
const idField = { type: 'string', minLength: 1, maxLength: 128, description: '1-128 characters, no control characters, no leading or trailing space' } as const;

const errorBody: Schema = {
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
const dailyRow: Schema = { ...row, properties: { ...(row['properties'] as Schema), day: str, session_id: str } };
const items = (of: Schema): Schema => ({ type: 'object', properties: { items: { type: 'array', items: of } }, required: ['items'] });

const errors = { 400: errorBody, 401: errorBody, 422: errorBody, 503: errorBody };
const sessionParams: Schema = { type: 'object', properties: { session_id: idField }, required: ['session_id'] };
const userQuery: Schema = { type: 'object', properties: { user_id: idField }, required: ['user_id'] };
const windowQuery = (withDay: boolean): Schema => ({
  type: 'object',
  properties: {
    user_id: idField,
    message_id: int,
    before: { ...int, default: 0 },
    after: { ...int, default: 0 },
    ...(withDay ? { day: { ...str, default: '', description: 'YYYY-MM-DD' } } : {}),
  },
  required: ['user_id', 'message_id'],
});
const searchQuery = (withDay: boolean): Schema => ({
  type: 'object',
  properties: {
    user_id: idField,
    keyword: { ...str, default: '' },
    ...(withDay ? { day: { ...str, default: '', description: 'YYYY-MM-DD' } } : {}),
    limit: { ...int, default: 20 },
  },
  required: ['user_id'],
});

export const API_SCHEMAS = {
  chat: {
    summary: 'One chat turn',
    tags: ['demo'],
    body: {
      type: 'object',
      properties: { user_id: idField, session_id: idField, message: str },
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
  createSession: {
    summary: 'Create a session',
    tags: ['demo'],
    body: { type: 'object', properties: { user_id: idField }, required: ['user_id'] },
    response: { 200: { type: 'object', properties: { session_id: str }, required: ['session_id'] }, ...errors },
  },
  listSessions: {
    summary: "A user's sessions, most recent first",
    tags: ['demo'],
    querystring: userQuery,
    response: {
      200: items({ type: 'object', properties: { session_id: str, title: str, updated_at: str }, required: ['session_id', 'title', 'updated_at'] }),
      ...errors,
    },
  },
  messages: {
    summary: "A session's messages (unknown session: no items)",
    tags: ['demo'],
    params: sessionParams,
    querystring: userQuery,
    response: { 200: items(row), ...errors },
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
  searchSession: { summary: 'Keyword search in one session', tags: ['mnemo'], params: sessionParams, querystring: searchQuery(false), response: { 200: items(row), ...errors } },
  sessionWindow: { summary: 'Rows around a message of one session', tags: ['mnemo'], params: sessionParams, querystring: windowQuery(false), response: { 200: items(row), ...errors } },
  searchDaily: { summary: "Keyword search in a user's daily view", tags: ['mnemo'], querystring: searchQuery(true), response: { 200: items(dailyRow), ...errors } },
  dailyWindow: { summary: "Rows around a message of a user's daily view", tags: ['mnemo'], querystring: windowQuery(true), response: { 200: items(dailyRow), ...errors } },
  toolCalls: {
    summary: "Every tool call of a user, newest turn first, filterable by tool name and keyword",
    tags: ['mnemo'],
    querystring: {
      type: 'object',
      properties: {
        user_id: idField,
        tool: { ...str, default: '', description: 'exact tool name; empty: any' },
        keyword: { ...str, default: '', description: 'case-insensitive, in the name, arguments, output or user message' },
        limit: { ...int, default: 100, description: '1..500' },
      },
      required: ['user_id'],
    },
    response: {
      200: items({
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
      properties: { user_id: idField, day: { ...str, default: '', description: 'YYYY-MM-DD; empty: today' } },
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
    },
  },
} satisfies Record<string, FastifySchema & { summary: string; tags: string[] }>;

/** Routes registered on `app` after this are validated from their schemas (see above). */
export function validated(app: FastifyInstance): void {
  app.setValidatorCompiler(fieldValidatorCompiler);
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
}
