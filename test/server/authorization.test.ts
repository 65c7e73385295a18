import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthorizationConfigError, createServer, routeAccess, type RouteAccess } from '../../src/server/index.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

// Who may do what, over a real server: every route the server registers (read from fastify
// at runtime, so a route added later is in the matrix without touching this file) × every
// kind of caller. A route that declares no access fails the first test.

const SHARED = 'shared-token-0123456789';
const ADMIN = 'admin-token-0123456789';
const ALICE = 'alice-token-0123456789';
const BOB = 'bob-token-0123456789ab';

type Caller = 'no token' | 'wrong token' | "another user's token" | "the user's token" | 'shared token' | 'admin';
const CALLERS: Record<Caller, Record<string, string>> = {
  'no token': {},
  'wrong token': { authorization: `Bearer ${ALICE.slice(0, -1)}x` },
  "another user's token": { authorization: `Bearer ${BOB}` },
  "the user's token": { authorization: `Bearer ${ALICE}` },
  'shared token': { authorization: `Bearer ${SHARED}` },
  admin: { authorization: `Bearer ${ADMIN}` },
};

type Schema = { properties?: Record<string, { type?: string | string[] }>; required?: string[] };
const partOf = (route: RouteAccess, part: 'body' | 'querystring' | 'params'): Schema | undefined =>
  (route.schema as Record<string, Schema | undefined> | undefined)?.[part];
const takesUser = (route: RouteAccess): boolean =>
  (['body', 'querystring', 'params'] as const).some((part) => partOf(route, part)?.properties?.['user_id'] !== undefined);

/** A value of the field's type: alice's id for `user_id`, else a plain one. */
function sample(name: string, type: string | string[] | undefined): string | number {
  if (name === 'user_id') return 'alice';
  if (name === 'session_id') return 's1';
  return [type].flat().includes('integer') || [type].flat().includes('number') ? 1 : 'x';
}

/** The fields a schema part requires, plus `user_id` whenever it takes one (always alice's). */
function fields(schema: Schema | undefined): Record<string, string | number> {
  const out: Record<string, string | number> = {};
  for (const [name, field] of Object.entries(schema?.properties ?? {})) {
    if (name === 'user_id' || schema?.required?.includes(name)) out[name] = sample(name, field.type);
  }
  return out;
}

/** A request for `route` that names alice wherever the route takes a user. */
function requestFor(route: RouteAccess): { path: string; body?: unknown } {
  const params = fields(partOf(route, 'params'));
  const path = route.url.replace(/:(\w+)/g, (_m, name: string) => encodeURIComponent(String(params[name] ?? sample(name, 'string'))));
  const query = new URLSearchParams(Object.entries(fields(partOf(route, 'querystring'))).map(([k, v]): [string, string] => [k, String(v)])).toString();
  const body = partOf(route, 'body');
  return { path: query === '' ? path : `${path}?${query}`, ...(body === undefined ? {} : { body: { message: 'hi', ...fields(body) } }) };
}

type Expected = 'unauthorized' | 'forbidden' | 'allowed';
function expected(route: RouteAccess, caller: Caller): Expected {
  if (route.access === 'public') return 'allowed';
  if (caller === 'no token' || caller === 'wrong token') return 'unauthorized';
  if (route.access === 'operator') return caller === 'admin' ? 'allowed' : 'forbidden';
  if (route.access === 'self') return caller === "the user's token" || caller === "another user's token" ? 'allowed' : 'forbidden';
  if (route.access === 'user' && caller === "another user's token" && takesUser(route)) return 'forbidden';
  return 'allowed';
}

function outcome(status: number): Expected | 'error' {
  if (status === 401) return 'unauthorized';
  if (status === 403) return 'forbidden';
  return status < 500 ? 'allowed' : 'error';
}

describe('who may do what', () => {
  let t: TestServer;
  let routes: readonly RouteAccess[];
  beforeAll(async () => {
    t = await startTestServer({ token: SHARED, adminToken: ADMIN, userTokens: { [ALICE]: 'alice', [BOB]: 'bob' } });
    routes = routeAccess(t.server.app);
  });
  afterAll(async () => {
    await t.close();
  });

  it('has every route declare its access', () => {
    expect(routes.length).toBeGreaterThan(10);
    expect(routes.filter((r) => !r.declared).map((r) => `${r.method} ${r.url}`)).toEqual([]);
  });

  it('answers every route × every caller as its access says', async () => {
    const got: string[] = [];
    const want: string[] = [];
    // Erasing routes last, so what they erase does not matter to the others.
    const ordered = [...routes].sort((a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE'));
    for (const route of ordered) {
      const { path, body } = requestFor(route);
      for (const [caller, headers] of Object.entries(CALLERS) as [Caller, Record<string, string>][]) {
        const res = await t.request(route.method, path, { headers, ...(body === undefined ? {} : { body }) });
        const label = `${route.method} ${route.url} (${route.access}) × ${caller}`;
        got.push(`${label}: ${outcome(res.status)}`);
        want.push(`${label}: ${expected(route, caller)}`);
        if (res.status === 403 && route.method !== 'HEAD') expect(res.json, label).toEqual({ detail: expect.any(String), code: 'forbidden' });
        if (res.status === 401) expect(res.headers['www-authenticate'], label).toMatch(/^Bearer/);
      }
    }
    expect(got).toEqual(want);
  });

  it('declares the demo routes user, whoami authenticated, the runtime view and /metrics operator, the page and probes public', () => {
    const access = (method: string, url: string) => routes.find((r) => r.method === method && r.url === url)?.access;
    expect(access('POST', '/api/chat')).toBe('user');
    expect(access('DELETE', '/api/conversations/:session_id')).toBe('user');
    expect(access('GET', '/api/daily/search')).toBe('user');
    expect(access('GET', '/api/daily')).toBe('user');
    expect(access('GET', '/api/tool-calls')).toBe('user');
    expect(access('GET', '/api/runtime')).toBe('operator');
    expect(access('GET', '/api/whoami')).toBe('authenticated');
    expect(access('GET', '/metrics')).toBe('operator');
    expect(access('GET', '/fact-extraction')).toBe('operator');
    expect(access('POST', '/fact-extraction/retry')).toBe('operator');
    expect(access('GET', '/')).toBe('public');
    expect(access('GET', '/healthz')).toBe('public');
    expect(access('GET', '/openapi.json')).toBe('public');
  });

  it('lets a user token name only its own user_id, anywhere: body, query string', async () => {
    const alice = CALLERS["the user's token"];
    const asBob = await t.request('POST', '/api/chat', { headers: alice, body: { user_id: 'bob', session_id: 's', message: 'hi' } });
    expect(asBob.status).toBe(403);
    expect(asBob.json).toEqual({ detail: 'this token acts for another user_id', code: 'forbidden' });
    expect((await t.request('GET', '/api/conversations?user_id=bob', { headers: alice })).status).toBe(403);
    // Nothing ran for the refused turn.
    const bobs = await t.request('GET', '/api/conversations?user_id=bob', { headers: CALLERS['shared token'] });
    expect(bobs.json).toEqual({ items: [] });
  });

  it('fills in the user token’s own user_id when a request names none', async () => {
    const alice = CALLERS["the user's token"];
    const chat = await t.request('POST', '/api/chat', { headers: alice, body: { session_id: 'filled', message: 'no id sent' } });
    expect(chat.status).toBe(200);
    const listed = await t.request('GET', '/api/conversations', { headers: alice });
    expect(listed.status).toBe(200);
    expect((listed.json as { items: { session_id: string }[] }).items.map((i) => i.session_id)).toContain('filled');
    // The shared token still has to say whose.
    expect((await t.request('GET', '/api/conversations', { headers: CALLERS['shared token'] })).status).toBe(422);
  });

  it('tells the caller who it is: GET /api/whoami', async () => {
    const who = async (caller: Caller) => (await t.request('GET', '/api/whoami', { headers: CALLERS[caller] })).json;
    expect(await who("the user's token")).toEqual({ user_id: 'alice', role: 'user' });
    expect(await who("another user's token")).toEqual({ user_id: 'bob', role: 'user' });
    expect(await who('shared token')).toEqual({ user_id: null, role: 'shared' });
    expect(await who('admin')).toEqual({ user_id: null, role: 'admin' });
  });

  it('lets the admin act for any user and see conversation names', async () => {
    const admin = CALLERS.admin;
    expect((await t.request('GET', '/api/conversations?user_id=bob', { headers: admin })).status).toBe(200);
    const runtime = await t.request('GET', '/api/runtime', { headers: admin });
    expect((runtime.json as { names: string }).names).toBe('full');
    // Inspection is the operator's: a user token learns nothing of other users' conversations.
    const asUser = await t.request('GET', '/api/runtime', { headers: CALLERS["the user's token"] });
    expect(asUser.status).toBe(403);
    expect(asUser.text).not.toMatch(/session\//);
  });
});

describe('replacing the user tokens of a running server', () => {
  it('checks every request from then on against the new set; refuses an empty set, a clash, or a server started without any', async () => {
    const t = await startTestServer({ token: SHARED, userTokens: { [ALICE]: 'alice' } });
    const open = await startTestServer();
    try {
      const status = async (secret: string) =>
        (await t.request('GET', '/api/conversations', { headers: { authorization: `Bearer ${secret}` } })).status;
      expect(await status(ALICE)).toBe(200);
      t.server.replaceUserTokens(new Map([[BOB, 'bob']]));
      expect(await status(ALICE)).toBe(401);
      expect(await status(BOB)).toBe(200);
      expect((await t.request('GET', '/api/whoami', { headers: { authorization: `Bearer ${BOB}` } })).json).toEqual({ user_id: 'bob', role: 'user' });
      expect(() => t.server.replaceUserTokens(new Map())).toThrow(AuthorizationConfigError);
      expect(() => t.server.replaceUserTokens(new Map([[SHARED, 'carol']]))).toThrow(/must differ/);
      expect(await status(BOB)).toBe(200); // nothing changed
      expect(() => open.server.replaceUserTokens(new Map([[ALICE, 'alice']]))).toThrow(/started without user tokens/);
      // The open server stays open, and no token was added to it.
      expect((await open.request('GET', '/api/whoami', { headers: { authorization: `Bearer ${ALICE}` } })).json).toEqual({ user_id: null, role: 'anonymous' });
    } finally {
      await t.close();
      await open.close();
    }
  });
});

describe('a route added without declaring its access', () => {
  it('is operator-only: 401 without a token, 403 for a user or the shared token, ok for the admin', async () => {
    const app = createServer({
      recall: {} as never,
      runtime: { inspect: () => ({}) } as never,
      token: SHARED,
      adminToken: ADMIN,
      userTokens: new Map([[ALICE, 'alice']]),
    });
    void app.register(async (scope) => {
      scope.get('/api/forgot-to-declare', async () => ({ ok: true }));
    });
    await app.ready();
    try {
      expect(routeAccess(app).find((r) => r.url === '/api/forgot-to-declare')).toMatchObject({ access: 'operator', declared: false });
      const status = async (authorization?: string) =>
        (await app.inject({ method: 'GET', url: '/api/forgot-to-declare', headers: authorization ? { authorization } : {} })).statusCode;
      expect(await status()).toBe(401);
      expect(await status(`Bearer ${ALICE}`)).toBe(403);
      expect(await status(`Bearer ${SHARED}`)).toBe(403);
      expect(await status(`Bearer ${ADMIN}`)).toBe(200);
    } finally {
      await app.close();
    }
  });
});

describe('trusted-header mode (behind a reverse proxy)', () => {
  let t: TestServer;
  const proxy = { authorization: `Bearer ${SHARED}` };
  beforeAll(async () => {
    t = await startTestServer({ token: SHARED, trustUserHeader: 'X-Forwarded-User' });
  });
  afterAll(async () => {
    await t.close();
  });

  it('acts as the user the proxy names, with the proxy’s token', async () => {
    const headers = { ...proxy, 'x-forwarded-user': 'carol' };
    expect((await t.request('GET', '/api/whoami', { headers })).json).toEqual({ user_id: 'carol', role: 'user' });
    expect((await t.request('GET', '/api/conversations?user_id=carol', { headers })).status).toBe(200);
    expect((await t.request('GET', '/api/conversations?user_id=dave', { headers })).status).toBe(403);
  });

  it('ignores the header without the proxy’s token, and refuses the token without one valid header', async () => {
    expect((await t.request('GET', '/api/conversations?user_id=carol', { headers: { 'x-forwarded-user': 'carol' } })).status).toBe(401);
    const bare = await t.request('GET', '/api/conversations?user_id=carol', { headers: proxy });
    expect(bare.status).toBe(401);
    expect(bare.json).toEqual({ detail: 'missing or invalid x-forwarded-user header' });
    expect((await t.request('GET', '/api/whoami', { headers: { ...proxy, 'x-forwarded-user': 'c'.repeat(129) } })).status).toBe(401);
  });
});

describe('an open server (no token of any kind)', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.close();
  });

  it('serves every route to anyone, as before, and says so in whoami', async () => {
    expect((await t.request('GET', '/api/conversations?user_id=u')).status).toBe(200);
    expect((await t.request('GET', '/metrics')).status).toBe(200);
    expect((await t.request('GET', '/api/whoami')).json).toEqual({ user_id: null, role: 'anonymous' });
    // A stale token a page still sends changes nothing.
    expect((await t.request('GET', '/api/conversations?user_id=u', { headers: { authorization: 'Bearer stale-0123456789' } })).status).toBe(200);
  });
});
