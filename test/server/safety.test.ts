import { once } from 'node:events';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/test-server.ts';

// The server's safety rails over a real server and runtime: bearer token, body limit, JSON
// only, loopback Host names, and a static allow-list that no request path can escape.

describe('bearer token', () => {
  let t: TestServer;
  const token = 'test-token-0123456789';
  beforeAll(async () => {
    t = await startTestServer({ token });
  });
  afterAll(async () => {
    await t.close();
  });

  it('refuses an API request without a token with 401 and a Bearer challenge', async () => {
    const res = await t.request('GET', '/api/conversations?user_id=u');
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
    expect(res.json).toEqual({ detail: 'missing bearer token' });
  });

  it('refuses a wrong token, a token of another length, and another scheme', async () => {
    for (const authorization of [`Bearer ${token.slice(0, -1)}x`, `Bearer ${token}x`, `Basic ${token}`, 'Bearer']) {
      const res = await t.request('GET', '/api/conversations?user_id=u', { headers: { authorization } });
      expect(res.status).toBe(401);
      expect(res.json).toEqual({ detail: 'invalid bearer token' });
    }
  });

  it('runs nothing for a refused request', async () => {
    const refused = await t.request('POST', '/api/chat', { body: { user_id: 'tok-u', session_id: 's', message: 'hi' } });
    expect(refused.status).toBe(401);
    const listed = await t.request('GET', '/api/conversations?user_id=tok-u', {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(listed.json).toEqual({ items: [] });
  });

  it('accepts the right token on every API route', async () => {
    const headers = { authorization: `Bearer ${token}` };
    const chat = await t.request('POST', '/api/chat', {
      body: { user_id: 'tok-u', session_id: 's', message: 'hi' },
      headers,
    });
    expect(chat.status).toBe(200);
    expect((await t.request('GET', '/api/runtime', { headers })).status).toBe(200);
    expect((await t.request('GET', '/api/conversations/s/messages?user_id=tok-u', { headers })).status).toBe(200);
  });

  it('serves the page and its assets without a token (they hold no data)', async () => {
    expect((await t.request('GET', '/')).status).toBe(200);
    expect((await t.request('GET', '/static/app.js')).status).toBe(200);
  });
});

describe('admin token', () => {
  let t: TestServer;
  const token = 'api-token-0123456789';
  const adminToken = 'admin-token-9876543210';
  beforeAll(async () => {
    t = await startTestServer({ token, adminToken });
    const chat = await t.request('POST', '/api/chat', {
      body: { user_id: 'secret-user', session_id: 'secret-session', message: 'hi' },
      headers: { authorization: `Bearer ${token}` },
    });
    expect(chat.status).toBe(200);
  });
  afterAll(async () => {
    await t.close();
  });

  it('keeps the runtime tree from the API token once an admin token is set', async () => {
    const res = await t.request('GET', '/api/runtime', { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(403);
    expect(res.text).not.toMatch(/secret-user|secret-session/);
  });

  it('names every live session to the admin token, which is accepted wherever the API token is', async () => {
    const headers = { authorization: `Bearer ${adminToken}` };
    const res = await t.request('GET', '/api/runtime', { headers });
    expect(res.status).toBe(200);
    expect(JSON.stringify(res.json)).toContain('session/secret-user/secret-session');
    expect((res.json as { names: string }).names).toBe('full');
    expect((await t.request('GET', '/api/conversations?user_id=secret-user', { headers })).status).toBe(200);
  });
});

describe('request limits', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.close();
  });

  it('refuses a body over 1 MiB with 413 and keeps serving', async () => {
    const message = 'x'.repeat(1024 * 1024);
    const res = await t.request('POST', '/api/chat', { body: { user_id: 'big-u', session_id: 's', message } });
    expect(res.status).toBe(413);
    expect((res.json as { detail: string }).detail).toMatch(/too large/);
    expect((await t.request('GET', '/api/conversations?user_id=big-u')).json).toEqual({ items: [] });
  });

  it('answers deeply nested JSON with a {detail} 422 that does not echo the nesting', async () => {
    const depth = 100_000;
    const raw = `{"user_id": ${'['.repeat(depth)}${']'.repeat(depth)}, "session_id": "s", "message": "m"}`;
    const res = await t.request('POST', '/api/chat', { raw, headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(422);
    const detail = (res.json as { detail: { loc: unknown[]; msg: string; input: unknown }[] }).detail;
    expect(detail[0]?.loc).toEqual(['body', 'user_id']);
    expect(res.text.length).toBeLessThan(2000);
  });

  it('says a __proto__ key is refused instead of calling it a JSON decode error', async () => {
    const raw = '{"user_id": "u", "session_id": "s", "message": "m", "__proto__": {"x": 1}}';
    const res = await t.request('POST', '/api/chat', { raw, headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(422);
    const detail = (res.json as { detail: { type: string; msg: string }[] }).detail;
    expect(detail[0]?.type).toBe('json_forbidden_key');
    expect(detail[0]?.msg).toMatch(/__proto__/);
  });

  it('lets a client that keeps sending an oversized body read its 413', async () => {
    for (let i = 0; i < 5; i++) {
      const res = await t.request('POST', '/api/chat', { raw: Buffer.alloc(64 * 1024 * 1024, 'x'), headers: { 'content-type': 'application/json' } });
      expect(res.status).toBe(413);
    }
  });

  it('lets a raw client that writes an oversized body slowly, reading nothing meanwhile, read a whole 413', async () => {
    // The client reads only after its last write: without the drain the server closes at
    // once, the client's next writes meet a reset, and the 413 is lost with the socket.
    const { hostname, port } = new URL(t.url);
    const chunk = Buffer.alloc(64 * 1024, 'x');
    const chunks = 48;
    const socket = connect({ host: hostname, port: Number(port) });
    socket.pause();
    await once(socket, 'connect');
    const received: Buffer[] = [];
    let failure: Error | undefined;
    socket.on('error', (err) => {
      failure = err;
    });
    const write = (data: string | Buffer): Promise<void> =>
      new Promise((resolve) => {
        socket.write(data, (err) => {
          if (err) failure ??= err;
          resolve();
        });
      });
    await write(`POST /api/chat HTTP/1.1\r\nHost: ${t.url.slice('http://'.length)}\r\ncontent-type: application/json\r\ncontent-length: ${chunk.length * chunks}\r\n\r\n`);
    for (let i = 0; i < chunks && failure === undefined && !socket.destroyed; i++) {
      await write(chunk);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    socket.on('data', (data: Buffer) => received.push(data));
    socket.resume();
    if (!socket.destroyed) await Promise.race([once(socket, 'close'), once(socket, 'end')]);
    const text = Buffer.concat(received).toString('utf8');
    expect(failure).toBeUndefined();
    expect(text).toMatch(/^HTTP\/1\.1 413 /);
    expect(text).toMatch(/too large/);
    socket.destroy();
  });

  it('accepts a body just under the limit', async () => {
    // The message has a length limit of its own (limits.test.ts): the bulk is a field no route reads.
    const padding = 'y'.repeat(1000 * 1000);
    const res = await t.request('POST', '/api/chat', { body: { user_id: 'big-u', session_id: 's', message: 'm', padding } });
    expect(res.status).toBe(200);
  });

  it('refuses a text/plain body (a cross-site form could send one) with 415', async () => {
    const res = await t.request('POST', '/api/chat', {
      raw: JSON.stringify({ user_id: 'u', session_id: 's', message: 'm' }),
      headers: { 'content-type': 'text/plain' },
    });
    expect(res.status).toBe(415);
  });

  it('answers a malformed URL or an overlong path parameter with a JSON detail', async () => {
    const bad = await t.request('GET', '/api/conversations/%E0%A4%A/messages?user_id=u');
    expect(bad.status).toBe(400);
    expect(bad.json).toEqual({ detail: expect.stringContaining('not a valid url component') });
    const long = await t.request('GET', `/api/conversations/${'a'.repeat(400)}/messages?user_id=u`);
    expect(long.status).toBe(414);
    expect(long.json).toEqual({ detail: expect.stringContaining('max param length') });
  });

  it('answers an unknown route with 404 and a JSON detail', async () => {
    const res = await t.request('GET', '/api/nothing');
    expect(res.status).toBe(404);
    expect(res.json).toEqual({ detail: 'Not Found' });
  });
});

describe('loopback host names', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.close();
  });

  it('refuses a request naming another host (DNS rebinding) with 403', async () => {
    for (const host of ['evil.example', 'evil.example:8000', '127.0.0.1.evil.example', '0.0.0.0']) {
      const res = await t.request('GET', '/api/runtime', { headers: { host } });
      expect(res.status).toBe(403);
    }
    expect((await t.request('GET', '/', { headers: { host: 'evil.example' } })).status).toBe(403);
  });

  it('accepts localhost, 127.0.0.1 and [::1] with any port', async () => {
    for (const host of ['localhost', `localhost:${t.server.port}`, `127.0.0.1:${t.server.port}`, '[::1]:1']) {
      const res = await t.request('GET', '/api/runtime', { headers: { host } });
      expect(res.status).toBe(200);
    }
  });
});

describe('static files', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.close();
  });

  it('serves the page with a strict Content-Security-Policy', async () => {
    const res = await t.request('GET', '/');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.text).toContain('<script type="module" src="/static/app.js"></script>');
    expect(res.headers['content-security-policy']).toContain("script-src 'self'");
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  it('serves marked, DOMPurify and highlight.js from node_modules, not from the internet', async () => {
    const marked = await t.request('GET', '/static/vendor/marked.esm.js');
    expect(marked.status).toBe(200);
    expect(marked.text).toContain('marked v');
    const purify = await t.request('GET', '/static/vendor/purify.es.mjs');
    expect(purify.status).toBe(200);
    expect(purify.text).toContain('DOMPurify');
    const hljs = await t.request('GET', '/static/vendor/highlight.min.js');
    expect(hljs.status).toBe(200);
    expect(hljs.headers['content-type']).toMatch(/^text\/javascript/);
    expect(hljs.text).toContain('Highlight.js v11');
    expect(hljs.text).toMatch(/export\s*\{\s*\w+ as default\s*\}/);
    expect((await t.request('GET', '/static/i18n.js')).status).toBe(200);
    const page = await t.request('GET', '/');
    expect(page.text).not.toMatch(/https?:\/\//);
  });

  it('answers 404 to every path outside the allow-list, traversal included', async () => {
    for (const path of [
      '/static/../package.json',
      '/static/%2e%2e/%2e%2e/package.json',
      '/static/vendor/..%2f..%2f..%2fpackage.json',
      '/package.json',
      '/src/server/server.ts',
      '/static/app.js.map',
      '/static/public/index.html',
      '/node_modules/marked/package.json',
    ]) {
      const res = await t.request('GET', path);
      expect(res.status, path).toBe(404);
      expect(res.text).not.toContain('"name": "mnemo"');
    }
  });
});
