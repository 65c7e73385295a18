import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../support/recall-fixture.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

// Cursor pagination of the conversation list and of a session's messages, over a real server:
// pages cover the whole list once, in its order; without `limit` or `cursor` the answer keeps
// the Demo's shape.

let t: TestServer;
const clock = manualClock();
beforeAll(async () => {
  t = await startTestServer({ clock });
  for (const s of ['p1', 'p2', 'p3', 'p4', 'p5']) {
    clock.advance(1_000);
    expect((await t.request('POST', '/api/chat', { body: { user_id: 'pg', session_id: s, message: `hello ${s}` } })).status).toBe(200);
  }
  // Two sessions in the same second: the list's tie order (creation) holds across pages too.
  for (const s of ['t1', 't2']) await t.request('POST', '/api/chat', { body: { user_id: 'pg', session_id: s, message: s } });
  for (const m of ['two', 'three']) await t.request('POST', '/api/chat', { body: { user_id: 'pg', session_id: 'p1', message: m } });
});
afterAll(async () => {
  await t.close();
});

interface Page<T> {
  items: T[];
  next_cursor?: string | null;
}
const get = async <T>(path: string): Promise<Page<T>> => {
  const res = await t.request('GET', path);
  expect(res.status).toBe(200);
  return res.json as Page<T>;
};

async function walk<T>(first: string, next: (cursor: string) => string): Promise<{ items: T[]; pages: number }> {
  const items: T[] = [];
  let page = await get<T>(first);
  let pages = 1;
  for (;;) {
    items.push(...page.items);
    if (page.next_cursor === null) return { items, pages };
    expect(typeof page.next_cursor).toBe('string');
    page = await get<T>(next(page.next_cursor!));
    pages++;
  }
}

describe('GET /api/conversations with limit and cursor', () => {
  it('pages through the whole list in its order; without them the Demo’s shape', async () => {
    const whole = await get<{ session_id: string }>('/api/conversations?user_id=pg');
    expect(Object.keys(whole)).toEqual(['items']);
    expect(whole.items).toHaveLength(7);
    const paged = await walk<{ session_id: string }>('/api/conversations?user_id=pg&limit=2', (c) => `/api/conversations?user_id=pg&limit=2&cursor=${c}`);
    expect(paged.items).toEqual(whole.items);
    expect(paged.pages).toBe(4);
    const one = await get('/api/conversations?user_id=pg&limit=500');
    expect(one).toEqual({ items: whole.items, next_cursor: null });
    expect(await get('/api/conversations?user_id=nobody&limit=5')).toEqual({ items: [], next_cursor: null });
  });

  it('refuses a cursor it did not give out with 400', async () => {
    expect((await t.request('GET', '/api/conversations?user_id=pg&cursor=bogus')).status).toBe(400);
    const rows = await get('/api/conversations/p1/messages?user_id=pg&limit=1');
    expect((await t.request('GET', `/api/conversations?user_id=pg&cursor=${rows.next_cursor}`)).status).toBe(400);
  });
});

describe('GET /api/conversations/:session_id/messages with limit and cursor', () => {
  it('pages through the rows, oldest first; without them the Demo’s shape', async () => {
    const whole = await get<{ message_id: number; content: string }>('/api/conversations/p1/messages?user_id=pg');
    expect(Object.keys(whole)).toEqual(['items']);
    expect(whole.items).toHaveLength(6);
    const paged = await walk('/api/conversations/p1/messages?user_id=pg&limit=4', (c) => `/api/conversations/p1/messages?user_id=pg&limit=4&cursor=${c}`);
    expect(paged).toEqual({ items: whole.items, pages: 2 });
    expect(await get('/api/conversations/none/messages?user_id=pg&limit=4')).toEqual({ items: [], next_cursor: null });
  });

  it('pages a fork through its shared prefix', async () => {
    const fork = await t.request('POST', '/api/conversations/p1/fork', { body: { user_id: 'pg', message_id: 2, new_session_id: 'pf' } });
    expect(fork.status).toBe(200);
    await t.request('POST', '/api/chat', { body: { user_id: 'pg', session_id: 'pf', message: 'branch' } });
    const whole = await get<{ content: string }>('/api/conversations/pf/messages?user_id=pg');
    expect(whole.items.map((r) => r.content).slice(0, 3)).toEqual(['hello p1', expect.any(String), 'branch']);
    const paged = await walk('/api/conversations/pf/messages?user_id=pg&limit=1', (c) => `/api/conversations/pf/messages?user_id=pg&limit=1&cursor=${c}`);
    expect(paged.items).toEqual(whole.items);
  });

  it('refuses a malformed cursor with 400 invalid_cursor', async () => {
    const res = await t.request('GET', '/api/conversations/p1/messages?user_id=pg&cursor=bogus');
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ detail: expect.any(String), code: 'invalid_cursor' });
  });
});
