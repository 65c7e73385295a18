import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LlmError } from '../../src/llm/index.ts';
import { createFaultInjector } from '../../src/memory/runtime/fault-injector.ts';
import { startRuntime } from '../../src/runtime.ts';
import { createServerMetrics } from '../../src/server/metrics.ts';
import { fieldSpecOf } from '../../src/server/request-validation.ts';
import { startServer } from '../../src/server/index.ts';
import { http } from '../support/http.ts';
import { scriptedLlm, text } from '../support/scripted-llm.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

// The operators' routes over a real server and runtime: probes, Prometheus metrics fed by the
// real write path and model calls, the OpenAPI document, and request ids in answers and logs.

/** The value of one sample line (`name{labels} value`) of a scrape, or undefined. */
function sample(scrape: string, series: string): number | undefined {
  const line = scrape.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('with an API token and an admin token', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ token: 'api-secret', adminToken: 'admin-secret' });
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers /healthz without a token, saying nothing but ok', async () => {
    const res = await t.request('GET', '/healthz');
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ status: 'ok' });
  });

  it('answers /readyz without a token: tree running, storage open and writable', async () => {
    const res = await t.request('GET', '/readyz');
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ status: 'ready', checks: { tree: 'running', storage: 'open', writable: true } });
  });

  it('serves /metrics only for the admin token: 401 without a token, 403 for the API token', async () => {
    expect((await t.request('GET', '/metrics')).status).toBe(401);
    const shared = await t.request('GET', '/metrics', { headers: { authorization: 'Bearer api-secret' } });
    expect(shared.status).toBe(403);
    expect(shared.json).toEqual({ detail: 'this route needs the admin token', code: 'forbidden' });
    const res = await t.request('GET', '/metrics', { headers: { authorization: 'Bearer admin-secret' } });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.text).toContain('# TYPE mnemo_live_conversations gauge');
  });

  it('serves /openapi.json without a token, generated from the route schemas', async () => {
    const res = await t.request('GET', '/openapi.json');
    expect(res.status).toBe(200);
    const doc = res.json as { openapi: string; paths: Record<string, Record<string, { requestBody?: unknown; parameters?: { name: string; in: string }[] }>> };
    expect(doc.openapi).toMatch(/^3\./);
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/api/chat', '/api/conversations', '/api/conversations/{session_id}/messages', '/api/daily/window', '/healthz', '/readyz', '/metrics']),
    );
    expect(doc.paths['/api/chat']!['post']!.requestBody).toMatchObject({
      content: { 'application/json': { schema: { required: ['user_id', 'session_id', 'message'] } } },
    });
    const params = doc.paths['/api/conversations/{session_id}/search']!['get']!.parameters!.map((p) => `${p.in}:${p.name}`);
    expect(params).toEqual(expect.arrayContaining(['path:session_id', 'query:user_id', 'query:keyword', 'query:limit']));
  });
});

describe('validation from the route schemas', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.close();
  });

  it('reports exactly the fields /openapi.json marks required, in its order, as FastAPI’s 422 issues', async () => {
    const doc = (await t.request('GET', '/openapi.json')).json as {
      paths: Record<string, Record<string, { requestBody: { content: { 'application/json': { schema: { required: string[] } } } }; parameters: { name: string; in: string; required?: boolean }[] }>>;
    };
    const required = doc.paths['/api/chat']!['post']!.requestBody.content['application/json'].schema.required;
    const chat = await t.request('POST', '/api/chat', { body: {} });
    expect(chat.status).toBe(422);
    expect(chat.json).toEqual({ detail: required.map((name) => ({ type: 'missing', loc: ['body', name], msg: 'Field required', input: {} })) });

    const window = doc.paths['/api/daily/window']!['get']!.parameters.filter((p) => p.in === 'query' && p.required).map((p) => p.name);
    const res = await t.request('GET', '/api/daily/window');
    expect(res.json).toEqual({ detail: window.map((name) => ({ type: 'missing', loc: ['query', name], msg: 'Field required', input: null })) });
  });

  it('hands the handler the schema’s defaults and parsed integers', async () => {
    await t.request('POST', '/api/chat', { body: { user_id: 'v-u', session_id: 's', message: 'one' } });
    const all = await t.request('GET', '/api/conversations/s/search?user_id=v-u');
    expect((all.json as { items: unknown[] }).items.length).toBe(2);
    const one = await t.request('GET', '/api/conversations/s/search?user_id=v-u&limit=%201%20');
    expect((one.json as { items: unknown[] }).items.length).toBe(1);
  });
});

describe('fieldSpecOf', () => {
  it('refuses a schema whose optional field has no default, or a type it cannot read', () => {
    expect(() => fieldSpecOf({ properties: { limit: { type: 'integer' } } }, 'GET /x querystring')).toThrow(/GET \/x querystring\.limit: an optional field needs a default/);
    expect(() => fieldSpecOf({ properties: { on: { type: 'boolean' } }, required: ['on'] }, 'body')).toThrow(/only string and integer/);
    expect(fieldSpecOf({ properties: { a: { type: 'string' }, n: { type: 'integer', default: 3 } }, required: ['a'] }, 'body')).toEqual({
      a: { type: 'string' },
      n: { type: 'int', default: 3 },
    });
  });
});

describe('background fact extraction, for operators', () => {
  it('a job that fails every attempt is dead-lettered: listed by GET /fact-extraction, counted in mnemo_fact_extraction_jobs, and retried on request', async () => {
    // The facts model answers prose, never the JSON asked for: every attempt fails (until fixed).
    let answer = 'no JSON here';
    const facts = scriptedLlm(() => text(answer));
    const t = await startTestServer({ adminToken: 'admin-secret', llm: scriptedLlm([], text('ok')), factsLlm: facts, extraction: { maxAttempts: 2, backoffMs: 0 } });
    try {
      const admin = { authorization: 'Bearer admin-secret' };
      expect((await t.request('POST', '/api/chat', { body: { user_id: 'x-u', session_id: 's1', message: 'I like tea' }, headers: admin })).status).toBe(200);
      await t.recall.extractionIdle();
      expect((await t.request('GET', '/fact-extraction')).status).toBe(401);
      const res = await t.request('GET', '/fact-extraction', { headers: admin });
      expect(res.status).toBe(200);
      expect(res.json).toEqual({
        pending: 0,
        retrying: 0,
        dead: 1,
        dead_jobs: [
          {
            user_id: 'x-u',
            session_id: 's1',
            reply_id: 2,
            message_ids: [1, 2],
            attempts: 2,
            last_error: { code: 'invalid_extraction_answer', message: 'the model did not answer the JSON object asked for' },
            queued_at: expect.any(String),
            dead_at: expect.any(String),
          },
        ],
      });
      const scraped = (await t.request('GET', '/metrics', { headers: admin })).text;
      expect(sample(scraped, 'mnemo_fact_extraction_jobs{state="dead"}')).toBe(1);
      expect(sample(scraped, 'mnemo_fact_extraction_jobs{state="pending"}')).toBe(0);

      // The model fixed, the operator puts the dead job back: it is extracted.
      answer = '{"facts": [{"text": "likes tea"}]}';
      expect((await t.request('POST', '/fact-extraction/retry?user_id=someone-else', { headers: admin })).json).toEqual({ requeued: 0 });
      expect((await t.request('POST', '/fact-extraction/retry', { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
      expect((await t.request('POST', '/fact-extraction/retry', { headers: admin })).json).toEqual({ requeued: 1 });
      await t.recall.extractionIdle();
      const memory = await t.request('GET', '/api/memory?user_id=x-u', { headers: admin });
      expect((memory.json as { items: { text: string }[] }).items.map((e) => e.text)).toEqual(['likes tea']);
      expect((await t.request('GET', '/fact-extraction', { headers: admin })).json).toEqual({ pending: 0, retrying: 0, dead: 0, dead_jobs: [] });
    } finally {
      await t.close();
    }
  });
});

describe('metrics of the real write path and model', () => {
  let t: TestServer;
  const llm = scriptedLlm([text('first reply'), text('A title'), new LlmError('llm_timeout', 'slow')]);
  beforeAll(async () => {
    t = await startTestServer({ token: 'api-secret', llm });
  });
  afterAll(async () => {
    await t.close();
  });
  const scrape = async () => {
    const res = await t.request('GET', '/metrics', { headers: { authorization: 'Bearer api-secret' } });
    expect(res.status).toBe(200);
    return res.text;
  };
  const auth = { authorization: 'Bearer api-secret' };

  it('counts turns, model calls, appends, commits, live conversations and errors by code', async () => {
    const ok = await t.request('POST', '/api/chat', { body: { user_id: 'm-u', session_id: 's1', message: 'hello' }, headers: auth });
    expect(ok.status).toBe(200);
    const failed = await t.request('POST', '/api/chat', { body: { user_id: 'm-u', session_id: 's1', message: 'again' }, headers: auth });
    expect(failed.status).toBe(504);
    expect((await t.request('POST', '/api/chat', { body: { user_id: 'm-u' }, headers: auth })).status).toBe(422);

    const text = await scrape();
    expect(sample(text, 'mnemo_chat_turns_total{outcome="ok"}')).toBe(1);
    expect(sample(text, 'mnemo_chat_turns_total{outcome="llm_timeout"}')).toBe(1);
    expect(sample(text, 'mnemo_chat_turn_duration_seconds_count{outcome="ok"}')).toBe(1);
    expect(sample(text, 'mnemo_model_call_duration_seconds_count{outcome="ok"}')).toBe(2);
    expect(sample(text, 'mnemo_model_call_duration_seconds_count{outcome="llm_timeout"}')).toBe(1);
    expect(sample(text, 'mnemo_appends_total')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'mnemo_appended_messages_total')).toBeGreaterThanOrEqual(sample(text, 'mnemo_appends_total')!);
    expect(sample(text, 'mnemo_commit_batch_size_count')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'mnemo_live_conversations')).toBe(t.runtime.liveConversations);
    expect(sample(text, 'mnemo_http_errors_total{code="llm_timeout",status="504"}')).toBe(1);
    expect(sample(text, 'mnemo_http_errors_total{code="validation_error",status="422"}')).toBe(1);
    // The scrape without a token above was not made; a refused one is counted as such.
    expect(text).not.toContain('m-u');
  });

  it('counts an error found while routing (a path parameter longer than any id) by its fastify code', async () => {
    const res = await t.request('GET', `/api/conversations/${'x'.repeat(400)}/messages?user_id=u`, { headers: auth });
    expect(res.json).toEqual({ detail: expect.any(String) });
    const line = (await scrape()).split('\n').find((l) => l.startsWith(`mnemo_http_errors_total{code="FST_`) && l.includes(`status="${res.status}"`));
    expect(line).toMatch(/ 1$/);
  });

  it('counts a 401 by its code, and the live conversations the runtime reports', async () => {
    expect((await t.request('GET', '/metrics')).status).toBe(401);
    await t.runtime.memory.append('metrics-live-1', [{ message: { role: 'user', content: 'x' } }]);
    const text = await scrape();
    expect(sample(text, 'mnemo_http_errors_total{code="http_401",status="401"}')).toBe(1);
    expect(sample(text, 'mnemo_live_conversations')).toBe(t.runtime.liveConversations);
    expect(t.runtime.liveConversations).toBeGreaterThanOrEqual(1);
  });
});

describe('restarts, readiness after a stop, and separate registries', () => {
  it('counts a conversation actor’s restart as child="conversation" and keeps two servers’ metrics apart', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'mnemo-ops-'));
    const faults = createFaultInjector();
    const metrics = createServerMetrics();
    const runtime = await startRuntime({ name: 'mnemo_ops_restart', dataDir, faults, observer: metrics.writeObserver });
    const server = await startServer({ recall: runtime.recall, runtime, host: '127.0.0.1', port: 0, metrics });
    const other = await startServer({ recall: runtime.recall, runtime: { inspect: () => runtime.inspect() }, host: '127.0.0.1', port: 0 });
    try {
      faults.failCommits('crashy', 1);
      await expect(runtime.memory.append('crashy', [{ message: { role: 'user', content: 'a' } }])).rejects.toMatchObject({ code: 'write_aborted' });
      await runtime.memory.append('crashy', [{ message: { role: 'user', content: 'b' } }]);
      const text = (await http(server.url, 'GET', '/metrics')).text;
      expect(sample(text, 'mnemo_restarts_total{child="conversation"}')).toBe(1);
      expect(sample(text, 'mnemo_appends_total')).toBe(1);

      const otherText = (await http(other.url, 'GET', '/metrics')).text;
      expect(otherText).not.toContain('mnemo_restarts_total{');
      expect(sample(otherText, 'mnemo_appends_total')).toBe(0);
      expect(sample(otherText, 'mnemo_live_conversations')).toBe(0);

      await runtime.stop();
      const res = await http(server.url, 'GET', '/readyz');
      expect(res.status).toBe(503);
      expect(res.json).toEqual({ status: 'not_ready', checks: { tree: 'stopped', storage: 'closed', writable: false } });
      expect((await http(server.url, 'GET', '/healthz')).status).toBe(200);
    } finally {
      await server.close();
      await other.close();
      await runtime.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('request ids', () => {
  it('answers every request with an id, keeps a plain client id, and logs it on every line of the request', async () => {
    const lines: Record<string, unknown>[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString('utf8').split('\n')) if (line.trim() !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    const dataDir = mkdtempSync(join(tmpdir(), 'mnemo-ops-'));
    const runtime = await startRuntime({ name: 'mnemo_ops_reqid', dataDir });
    const server = await startServer({ recall: runtime.recall, runtime, host: '127.0.0.1', port: 0, logger: { level: 'info', stream } });
    const before = lines.length;
    try {
      const generated = await http(server.url, 'GET', '/api/conversations?user_id=r-u');
      expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      const kept = await http(server.url, 'POST', '/api/chat', { body: { user_id: 'r-u' }, headers: { 'x-request-id': 'trace-abc.1' } });
      expect(kept.status).toBe(422);
      expect(kept.headers['x-request-id']).toBe('trace-abc.1');
      const hostile = await http(server.url, 'GET', '/healthz', { headers: { 'x-request-id': 'bad id "}{' + 'x'.repeat(200) } });
      expect(hostile.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);

      const mine = lines.filter((l) => l['reqId'] === 'trace-abc.1');
      expect(mine.map((l) => l['msg'])).toEqual(['request rejected', 'request']);
      // Every line written while serving requests carries an id (the startup line has none).
      const during = lines.slice(before);
      expect(during.length).toBe(3); // /healthz logs at debug
      for (const line of during) expect(line['reqId'], JSON.stringify(line)).toEqual(expect.any(String));
    } finally {
      await server.close();
      await runtime.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
