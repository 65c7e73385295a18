import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openAICompatible } from '../../src/llm/index.ts';
import { FIELD_MAX_CHARS } from '../../src/server/api-schemas.ts';
import { startChatStub } from '../support/chat-completions-stub.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

// The limits a user cannot exceed, over a real server and runtime: each refused with a clear
// status and code, and nothing stored.

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.close();
});

describe('field lengths', () => {
  it('refuses a message over the limit with 422 string_too_long, counting characters as pydantic does', async () => {
    const max = FIELD_MAX_CHARS.message;
    const over = await t.request('POST', '/api/chat', { body: { user_id: 'len-u', session_id: 's', message: 'x'.repeat(max + 1) } });
    expect(over.status).toBe(422);
    expect(over.json).toEqual({
      detail: [
        {
          type: 'string_too_long',
          loc: ['body', 'message'],
          msg: `String should have at most ${max} characters`,
          input: `${'x'.repeat(1024)}…`,
          ctx: { max_length: max },
        },
      ],
    });
    expect((await t.request('GET', '/api/conversations?user_id=len-u')).json).toEqual({ items: [] });
    // Characters, not UTF-16 units: the longest message of astral characters is taken.
    const astral = await t.request('POST', '/api/chat', { body: { user_id: 'len-u', session_id: 's', message: '𠀀'.repeat(max) } });
    expect(astral.status).toBe(200);
  });

  it('refuses an overlong query string field and fact text with 422; an overlong id stays the id rule’s 400', async () => {
    const keyword = await t.request('GET', `/api/conversations/s/search?user_id=u&keyword=${'k'.repeat(FIELD_MAX_CHARS.query + 1)}`);
    expect(keyword.status).toBe(422);
    expect((keyword.json as { detail: { type: string; loc: string[] }[] }).detail[0]).toMatchObject({ type: 'string_too_long', loc: ['query', 'keyword'] });
    const fact = await t.request('POST', '/api/memory', { body: { user_id: 'u', text: 'f'.repeat(FIELD_MAX_CHARS.fact + 1) } });
    expect(fact.status).toBe(422);
    const id = await t.request('POST', '/api/chat', { body: { user_id: 'u', session_id: 's'.repeat(129), message: 'm' } });
    expect(id.status).toBe(400);
  });
});

describe('request rate per user', () => {
  it('answers 429 rate_limited with Retry-After past the rate, per user; probes are not counted', async () => {
    const s = await startTestServer({ rateLimitPerMinute: 3 });
    try {
      for (let i = 0; i < 3; i++) {
        const ok = await s.request('GET', '/api/conversations?user_id=rate-a');
        expect(ok.status).toBe(200);
        expect(ok.headers['x-ratelimit-remaining']).toBeUndefined(); // answers within the rate look as before
      }
      const refused = await s.request('GET', '/api/conversations?user_id=rate-a');
      expect(refused.status).toBe(429);
      expect(refused.json).toEqual({ detail: expect.stringMatching(/^too many requests: at most 3 a minute per user/), code: 'rate_limited' });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect((await s.request('POST', '/api/chat', { body: { user_id: 'rate-a', session_id: 's', message: 'm' } })).status).toBe(429);
      expect((await s.request('GET', '/api/conversations?user_id=rate-b')).status).toBe(200);
      expect((await s.request('GET', '/healthz')).status).toBe(200);
      const metrics = await s.request('GET', '/metrics');
      expect(metrics.text).toMatch(/mnemo_http_errors_total\{code="rate_limited",status="429"\} 2/);
    } finally {
      await s.close();
    }
  });

  it('counts a user token’s requests under its user, whatever the request names', async () => {
    const s = await startTestServer({ rateLimitPerMinute: 2, userTokens: { 'token-of-alice-0123456789': 'alice' } });
    try {
      const alice = { authorization: 'Bearer token-of-alice-0123456789' };
      expect((await s.request('GET', '/api/conversations', { headers: alice })).status).toBe(200);
      expect((await s.request('GET', '/api/whoami', { headers: alice })).status).toBe(200);
      expect((await s.request('GET', '/api/conversations', { headers: alice })).status).toBe(429);
    } finally {
      await s.close();
    }
  });
});

describe('chat turns at once per user', () => {
  it('refuses one more turn or stream than allowed with 429 too_many_turns, before any model call', async () => {
    const stub = await startChatStub();
    const s = await startTestServer({
      maxConcurrentTurns: 1,
      llm: openAICompatible({ apiKey: 'sk-test', baseURL: stub.baseURL, model: 'stub', maxRetries: 0 }),
    });
    try {
      stub.hold();
      const first = s.request('POST', '/api/chat', { body: { user_id: 'busy', session_id: 's1', message: 'first' } });
      await stub.waitForRequest(1);
      const second = await s.request('POST', '/api/chat', { body: { user_id: 'busy', session_id: 's2', message: 'second' } });
      expect(second.status).toBe(429);
      expect(second.json).toEqual({ detail: expect.stringContaining('1 chat turns running'), code: 'too_many_turns' });
      const stream = await s.request('POST', '/api/chat/stream', { body: { user_id: 'busy', session_id: 's3', message: 'third' } });
      expect(stream.status).toBe(429);
      expect((stream.json as { code: string }).code).toBe('too_many_turns');
      const other = s.request('POST', '/api/chat', { body: { user_id: 'other', session_id: 's1', message: 'mine' } });
      await stub.waitForRequest(2); // another user's turn runs
      expect(stub.requests.length).toBe(2);
      stub.release();
      expect((await first).status).toBe(200);
      expect((await other).status).toBe(200);
      expect(await s.recall.getSessionMessages('busy', 's2')).toEqual([]);
      // The slot is back once the turn answered.
      expect((await s.request('POST', '/api/chat', { body: { user_id: 'busy', session_id: 's2', message: 'now' } })).status).toBe(200);
    } finally {
      await s.close();
      await stub.close();
    }
  });
});

describe('sessions, forks and search terms per user (recall limits)', () => {
  it('answers 429 session_limit and fork_limit, 422 search_terms_limit', async () => {
    const s = await startTestServer({ recallLimits: { sessionsPerUser: 3, forksPerSession: 1, searchTerms: 2 } });
    try {
      const chat = (session_id: string) => s.request('POST', '/api/chat', { body: { user_id: 'q', session_id, message: 'hello there' } });
      const fork = (new_session_id: string) => s.request('POST', '/api/conversations/a/fork', { body: { user_id: 'q', message_id: 1, new_session_id } });
      expect((await chat('a')).status).toBe(200);
      expect((await fork('f1')).status).toBe(200);
      const forks = await fork('f2');
      expect(forks.status).toBe(429);
      expect(forks.json).toEqual({ detail: expect.stringContaining('1 forks'), code: 'fork_limit' });
      expect((await chat('b')).status).toBe(200);
      const full = await chat('c');
      expect(full.status).toBe(429);
      expect(full.json).toEqual({ detail: expect.stringContaining('3 sessions'), code: 'session_limit' });
      expect(((await s.request('GET', '/api/conversations?user_id=q')).json as { items: unknown[] }).items).toHaveLength(3);
      const terms = await s.request('GET', '/api/search?user_id=q&q=ferry+hydra+june');
      expect(terms.status).toBe(422);
      expect((terms.json as { code: string }).code).toBe('search_terms_limit');
      expect((await s.request('GET', '/api/search?user_id=q&q=ferry+hydra')).status).toBe(200);
    } finally {
      await s.close();
    }
  });
});
