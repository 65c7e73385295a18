import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { routeAccess } from '../../src/server/index.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import type { HttpResponse } from '../support/http.ts';

// The server as standard clients see it: /openapi.json is a valid OpenAPI 3.0 document (the
// OpenAPI Initiative's own JSON Schema, test/support/openapi-3.0-schema.json), and real answers
// of every documented route, successes and refusals, match the schema declared for their status.

type Json = Record<string, unknown>;
type Doc = { openapi: string; paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema?: Json }> }> }>>; components?: Json };

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => void;
const OAS = JSON.parse(readFileSync(new URL('../support/openapi-3.0-schema.json', import.meta.url), 'utf8')) as Json;
const ALICE = 'alice-token-0123456789';
const BOB = 'bob-token-0123456789ab';
const ADMIN = 'admin-token-0123456789';
const as = (token: string) => ({ authorization: `Bearer ${token}` });

/** An OpenAPI 3.0 schema object as the JSON Schema it means: `nullable` as a `null` type, refs inlined. */
function jsonSchemaOf(schema: unknown, doc: Doc): unknown {
  if (Array.isArray(schema)) return schema.map((s) => jsonSchemaOf(s, doc));
  if (schema === null || typeof schema !== 'object') return schema;
  const s = schema as Json;
  if (typeof s['$ref'] === 'string') {
    const target = (s['$ref'] as string).replace(/^#\//, '').split('/').reduce<unknown>((at, key) => (at as Json)[key], doc);
    return jsonSchemaOf(target, doc);
  }
  const out: Json = {};
  for (const [k, v] of Object.entries(s)) out[k] = k === 'properties' ? Object.fromEntries(Object.entries(v as Json).map(([p, ps]) => [p, jsonSchemaOf(ps, doc)])) : jsonSchemaOf(v, doc);
  if (out['nullable'] === true && typeof out['type'] === 'string') out['type'] = [out['type'], 'null'];
  return out;
}

describe('/openapi.json and the answers it describes', () => {
  let t: TestServer;
  let doc: Doc;
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  const checked = new Set<string>();
  const problems: string[] = [];

  /** Sends the request and checks its answer against the schema declared for its route and status. */
  async function check(method: string, route: string, path: string, options: { body?: unknown; headers?: Record<string, string> } = { headers: as(ALICE) }): Promise<HttpResponse> {
    const res = await t.request(method, path, options);
    const label = `${method} ${path} → ${res.status}`;
    const operation = doc.paths[route.replace(/:(\w+)/g, '{$1}')]?.[method.toLowerCase()];
    const declared = operation?.responses[String(res.status)];
    const type = String(res.headers['content-type'] ?? '').split(';')[0]!;
    const schema = declared?.content?.['application/json']?.schema;
    if (operation === undefined) problems.push(`${label}: not documented`);
    else if (declared === undefined) problems.push(`${label}: status not declared (${res.text.slice(0, 200)})`);
    else if (type === 'application/json' && schema === undefined) problems.push(`${label}: no JSON schema declared`);
    else if (type === 'application/json') {
      const validate = ajv.compile(jsonSchemaOf(schema, doc) as Json);
      if (!validate(res.json)) problems.push(`${label}: ${JSON.stringify(validate.errors)} in ${res.text.slice(0, 300)}`);
    }
    checked.add(`${method} ${route}`);
    return res;
  }

  beforeAll(async () => {
    t = await startTestServer({ adminToken: ADMIN, userTokens: { [ALICE]: 'alice', [BOB]: 'bob' } });
    doc = (await t.request('GET', '/openapi.json')).json as Doc;
  });
  afterAll(async () => {
    await t?.close();
  });

  it('is a valid OpenAPI 3.0 document', () => {
    const validate = ajv.compile(OAS);
    expect(validate(doc) ? [] : validate.errors).toEqual([]);
    // The meta-schema does refuse a broken document.
    const broken = structuredClone(doc);
    broken.paths['/api/chat']!['post']!.responses = {};
    expect(validate(broken)).toBe(false);
  });

  it('answers every documented route as its schema says, successes and refusals', async () => {
    const admin = { headers: as(ADMIN) };
    const alice = (body?: unknown) => ({ headers: as(ALICE), ...(body === undefined ? {} : { body }) });
    await check('GET', '/healthz', '/healthz', {});
    await check('GET', '/readyz', '/readyz', {});
    await check('GET', '/metrics', '/metrics', admin);
    await check('GET', '/fact-extraction', '/fact-extraction', admin);
    await check('POST', '/fact-extraction/retry', '/fact-extraction/retry', { ...admin, body: {} });
    await check('GET', '/api/whoami', '/api/whoami');
    await check('POST', '/api/chat', '/api/chat', alice({ session_id: 's1', message: 'I like green tea' }));
    await check('POST', '/api/chat', '/api/chat', alice({ session_id: 's1' }));
    await check('POST', '/api/chat', '/api/chat', alice({ session_id: ' s1', message: 'x' }));
    await check('POST', '/api/chat', '/api/chat', { body: { session_id: 's1', message: 'x' }, headers: {} });
    await check('POST', '/api/chat/stream', '/api/chat/stream', alice({ session_id: 's1', message: 'and coffee' }));
    await check('POST', '/api/conversations', '/api/conversations', alice({}));
    await check('GET', '/api/conversations', '/api/conversations');
    await check('GET', '/api/conversations', '/api/conversations?limit=1');
    await check('GET', '/api/conversations', '/api/conversations?user_id=bob');
    await check('GET', '/api/conversations/:session_id/messages', '/api/conversations/s1/messages');
    await check('GET', '/api/conversations/:session_id/messages', '/api/conversations/s1/messages?limit=1');
    await check('GET', '/api/conversations/:session_id/summaries', '/api/conversations/s1/summaries');
    await check('GET', '/api/conversations/:session_id/search', '/api/conversations/s1/search?keyword=tea');
    await check('GET', '/api/conversations/:session_id/window', '/api/conversations/s1/window?message_id=1&after=1');
    await check('GET', '/api/daily/search', '/api/daily/search?keyword=tea');
    await check('GET', '/api/daily/window', '/api/daily/window?message_id=1&after=1');
    await check('GET', '/api/daily', '/api/daily');
    await check('GET', '/api/tool-calls', '/api/tool-calls');
    await check('GET', '/api/search', '/api/search?q=tea');
    await check('GET', '/api/search', '/api/search?q=tea&day=someday');
    const added = await check('POST', '/api/memory', '/api/memory', alice({ text: 'likes green tea', key: 'drink' }));
    const id = (added.json as { item: { id: string } }).item.id;
    await check('GET', '/api/memory', '/api/memory');
    await check('GET', '/api/memory/history', '/api/memory/history');
    const updated = await check('PATCH', '/api/memory/:id', `/api/memory/${id}`, alice({ text: 'likes black tea', version: 1 }));
    await check('PATCH', '/api/memory/:id', `/api/memory/${id}`, alice({ text: 'likes no tea', version: 1 }));
    const current = (updated.json as { item: { id: string } }).item.id;
    await check('DELETE', '/api/memory/:id', `/api/memory/${current}`);
    await check('DELETE', '/api/memory/:id', `/api/memory/${current}`);
    const forked = await check('POST', '/api/conversations/:session_id/fork', '/api/conversations/s1/fork', alice({ message_id: 1 }));
    await check('POST', '/api/conversations/:session_id/fork', '/api/conversations/s1/fork', alice({ message_id: 99 }));
    const fork = (forked.json as { session_id: string }).session_id;
    await check('DELETE', '/api/conversations/:session_id', `/api/conversations/${fork}`);
    await check('DELETE', '/api/conversations/:session_id', `/api/conversations/${fork}`);
    await check('GET', '/api/runtime', '/api/runtime', admin);
    await check('GET', '/api/runtime', '/api/runtime', { headers: as(ALICE) });
    await check('DELETE', '/api/users/:user_id', '/api/users/bob?compact=false', admin);

    const documented = routeAccess(t.server.app)
      .filter((r) => doc.paths[r.url.replace(/:(\w+)/g, '{$1}')]?.[r.method.toLowerCase()] !== undefined)
      .map((r) => `${r.method} ${r.url}`);
    expect(documented.filter((r) => !checked.has(r))).toEqual([]);
    expect(problems).toEqual([]);
  });
});
