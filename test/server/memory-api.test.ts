import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/test-server.ts';

// Long-term memory as facts over HTTP: a real server in front of a real runtime (LMDB in a
// temp dir, offline): shapes in snake_case, history, compare-and-set with 409, forget.

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.close();
});

interface Item {
  id: string;
  text: string;
  key: string | null;
  version: number;
  valid_to: string | null;
  superseded_by: string | null;
}

describe('/api/memory', () => {
  it('POST stores a fact and GET lists the current ones in snake_case', async () => {
    const posted = await t.request('POST', '/api/memory', { body: { user_id: 'mem-u1', text: 'likes tea', key: 'drink' } });
    expect(posted.status).toBe(200);
    expect(posted.json).toEqual({
      status: 'added',
      item: {
        id: 'm1',
        text: 'likes tea',
        key: 'drink',
        tags: [],
        source: { via: 'api', session_id: null, message_ids: [] },
        created_at: expect.any(String),
        valid_from: expect.any(String),
        valid_to: null,
        superseded_by: null,
        supersedes: null,
        version: 1,
        verdict: null,
      },
    });
    const listed = await t.request('GET', '/api/memory?user_id=mem-u1');
    expect((listed.json as { items: Item[] }).items.map((i) => i.text)).toEqual(['likes tea']);
  });

  it('a duplicate is answered as such and not stored twice', async () => {
    await t.request('POST', '/api/memory', { body: { user_id: 'mem-u2', text: 'has two cats' } });
    const again = await t.request('POST', '/api/memory', { body: { user_id: 'mem-u2', text: 'Has two cats.' } });
    expect(again.json).toMatchObject({ status: 'duplicate', item: { id: 'm1' } });
    expect((await t.request('GET', '/api/memory/history?user_id=mem-u2')).json).toMatchObject({ items: [{ id: 'm1' }] });
  });

  it('PATCH is compare-and-set: a stale version is 409 memory_conflict; history keeps the superseded entry', async () => {
    const { item } = (await t.request('POST', '/api/memory', { body: { user_id: 'mem-u3', text: 'lives in Paris' } })).json as { item: Item };
    const ok = await t.request('PATCH', `/api/memory/${item.id}`, { body: { user_id: 'mem-u3', text: 'lives in Berlin', version: 1 } });
    expect(ok.status).toBe(200);
    expect(ok.json).toMatchObject({ status: 'superseded', item: { text: 'lives in Berlin', version: 2, supersedes: item.id } });
    const stale = await t.request('PATCH', `/api/memory/${item.id}`, { body: { user_id: 'mem-u3', text: 'lives in Rome', version: 1 } });
    expect(stale.status).toBe(409);
    expect(stale.json).toEqual({ detail: expect.any(String), code: 'memory_conflict' });
    const history = (await t.request('GET', '/api/memory/history?user_id=mem-u3')).json as { items: Item[] };
    expect(history.items.map((i) => [i.text, i.valid_to !== null, i.superseded_by])).toEqual([
      ['lives in Paris', true, 'm2'],
      ['lives in Berlin', false, null],
    ]);
    const asOf = await t.request('GET', `/api/memory?user_id=mem-u3&as_of=${encodeURIComponent('2000-01-01T00:00:00Z')}`);
    expect(asOf.json).toEqual({ items: [] });
    const bad = await t.request('GET', '/api/memory?user_id=mem-u3&as_of=soon');
    expect(bad.status).toBe(400);
  });

  it('DELETE forgets: the entry leaves the current view; a second DELETE is 404', async () => {
    const { item } = (await t.request('POST', '/api/memory', { body: { user_id: 'mem-u4', text: 'plays chess' } })).json as { item: Item };
    const gone = await t.request('DELETE', `/api/memory/${item.id}?user_id=mem-u4`);
    expect(gone.status).toBe(200);
    expect((gone.json as { item: Item }).item.valid_to).not.toBeNull();
    expect((await t.request('GET', '/api/memory?user_id=mem-u4')).json).toEqual({ items: [] });
    expect((await t.request('DELETE', `/api/memory/${item.id}?user_id=mem-u4`)).status).toBe(404);
    expect((await t.request('DELETE', `/api/memory/${item.id}?user_id=someone-else`)).status).toBe(404);
  });

  it('bad input is a 400 or 422 and stores nothing', async () => {
    expect((await t.request('POST', '/api/memory', { body: { user_id: 'mem-u5', text: '   ' } })).status).toBe(400);
    expect((await t.request('POST', '/api/memory', { body: { user_id: 'mem-u5' } })).status).toBe(422);
    expect((await t.request('PATCH', '/api/memory/m1', { body: { user_id: 'mem-u5', text: 'x' } })).status).toBe(422);
    expect((await t.request('GET', '/api/memory/history?user_id=mem-u5')).json).toEqual({ items: [] });
  });
});
