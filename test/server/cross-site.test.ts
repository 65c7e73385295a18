import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http } from '../support/http.ts';
import { scriptedLlm, text } from '../support/scripted-llm.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

// What another site's page could make a browser send without a preflight (a bodyless POST, a
// form's POST, a "simple" DELETE attempt) is refused on the default open server before it runs;
// the same request with a JSON body or X-Mnemo-Request runs. Raw `http`, so no header is added.

const REFUSED = { detail: expect.stringContaining('X-Mnemo-Request'), code: 'csrf_header_required' };

describe('cross-site requests on an open server', () => {
  let t: TestServer;
  beforeAll(async () => {
    // A facts model that never answers JSON: the extraction job is dead-lettered at once.
    t = await startTestServer({ llm: scriptedLlm([], text('ok')), factsLlm: scriptedLlm([], text('no JSON')), extraction: { maxAttempts: 1, backoffMs: 0 } });
    expect((await t.request('POST', '/api/chat', { body: { user_id: 'u', session_id: 's', message: 'I like tea' } })).status).toBe(200);
    await t.recall.extractionIdle();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('refuses a POST with no body and no header (POST /fact-extraction/retry), and runs it with the header', async () => {
    const bare = await http(t.url, 'POST', '/fact-extraction/retry');
    expect(bare.status).toBe(403);
    expect(bare.json).toEqual(REFUSED);
    expect((await t.recall.extractionStatus()).dead).toBe(1);
    const marked = await http(t.url, 'POST', '/fact-extraction/retry', { headers: { 'x-mnemo-request': '1' } });
    expect(marked.json).toEqual({ requeued: 1 });
  });

  it('refuses a form’s POST (urlencoded, multipart, text/plain) before anything runs', async () => {
    for (const type of ['application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'text/plain']) {
      const res = await http(t.url, 'POST', '/api/conversations', { raw: 'user_id=u', headers: { 'content-type': type } });
      expect(res.status, type).toBe(403);
      expect(res.json, type).toEqual(REFUSED);
    }
    expect((await t.request('GET', '/api/conversations?user_id=u')).json).toMatchObject({ items: [{ session_id: 's' }] });
  });

  it('refuses a DELETE without the header, and deletes with it', async () => {
    const bare = await http(t.url, 'DELETE', '/api/conversations/s?user_id=u');
    expect(bare.status).toBe(403);
    expect(bare.json).toEqual(REFUSED);
    expect((await t.request('GET', '/api/conversations?user_id=u')).json).toMatchObject({ items: [{ session_id: 's' }] });
    const marked = await http(t.url, 'DELETE', '/api/conversations/s?user_id=u', { headers: { 'x-mnemo-request': '1' } });
    expect(marked.json).toEqual({ session_id: 's', deleted: true });
  });

  it('takes a JSON body as proof enough, its charset included', async () => {
    const res = await http(t.url, 'POST', '/api/conversations', {
      raw: JSON.stringify({ user_id: 'json-u' }),
      headers: { 'content-type': 'Application/JSON; charset=utf-8' },
    });
    expect(res.status).toBe(200);
  });

  it('keeps GET requests and unknown routes as they were', async () => {
    expect((await http(t.url, 'GET', '/api/conversations?user_id=u')).status).toBe(200);
    expect((await http(t.url, 'POST', '/api/nothing')).status).toBe(404);
  });
});

describe('dead-lettered jobs', () => {
  const SHARED = 'shared-token-0123456789';
  const ADMIN = 'admin-token-0123456789';
  const start = (tokens: { token?: string; adminToken?: string }) =>
    startTestServer({ ...tokens, llm: scriptedLlm([], text('ok')), factsLlm: scriptedLlm([], text('no JSON')), extraction: { maxAttempts: 1, backoffMs: 0 } });
  const deadLetterOne = async (t: TestServer, headers: Record<string, string>) => {
    expect((await t.request('POST', '/api/chat', { headers, body: { user_id: 'secret-user', session_id: 'secret-session', message: 'hi' } })).status).toBe(200);
    await t.recall.extractionIdle();
  };

  it('name users and sessions to the admin token only: the shared token and an open server see the counts', async () => {
    const open = await start({});
    const shared = await start({ token: SHARED });
    const admin = await start({ token: SHARED, adminToken: ADMIN });
    try {
      await deadLetterOne(open, {});
      await deadLetterOne(shared, { authorization: `Bearer ${SHARED}` });
      await deadLetterOne(admin, { authorization: `Bearer ${SHARED}` });
      for (const [t, headers] of [[open, {}], [shared, { authorization: `Bearer ${SHARED}` }]] as const) {
        const res = await t.request('GET', '/fact-extraction', { headers });
        expect(res.json).toEqual({ pending: 0, retrying: 0, dead: 1 });
        expect(res.text).not.toMatch(/secret-/);
      }
      const full = await admin.request('GET', '/fact-extraction', { headers: { authorization: `Bearer ${ADMIN}` } });
      expect(full.json).toMatchObject({ dead: 1, dead_jobs: [{ user_id: 'secret-user', session_id: 'secret-session' }] });
    } finally {
      await Promise.all([open.close(), shared.close(), admin.close()]);
    }
  });
});
