import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LlmResponse, LlmService } from '../../src/llm/index.ts';
import { postSse } from '../support/sse.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

// The Idempotency-Key header on POST /api/chat, and branching a session over HTTP, on a real
// server and runtime (LMDB in a temp dir).

let calls = 0;
let release: () => void = () => {};
let gate: Promise<void> = Promise.resolve();
const llm: LlmService = {
  async chat(): Promise<LlmResponse> {
    const n = ++calls;
    await gate;
    return { content: `reply ${n}` };
  },
};

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ llm });
});
afterAll(async () => {
  await t.close();
});

const chat = (user_id: string, session_id: string, message: string, key?: string) =>
  t.request('POST', '/api/chat', { body: { user_id, session_id, message }, ...(key ? { headers: { 'idempotency-key': key } } : {}) });
const messages = async (user_id: string, session_id: string) =>
  ((await t.request('GET', `/api/conversations/${session_id}/messages?user_id=${user_id}`)).json as { items: Array<{ content: string; message_id: number }> }).items;

describe('POST /api/chat with Idempotency-Key', () => {
  it('answers a retried turn with the stored reply and calls the model no more', async () => {
    const first = await chat('ik-u1', 's1', 'hello', 'turn-1');
    const after = calls;
    const retry = await chat('ik-u1', 's1', 'hello', 'turn-1');
    expect(retry.status).toBe(200);
    expect(retry.json).toEqual(first.json);
    expect(calls).toBe(after);
    expect((await messages('ik-u1', 's1')).map((r) => r.content)).toHaveLength(2);
  });

  it('answers a retry concurrent with the first request with the same reply, one turn stored', async () => {
    gate = new Promise<void>((resolve) => (release = resolve));
    const a = chat('ik-u2', 's1', 'hello', 'k');
    const b = chat('ik-u2', 's1', 'hello', 'k');
    setTimeout(() => release(), 50);
    const [ra, rb] = await Promise.all([a, b]);
    expect(rb.json).toEqual(ra.json);
    expect((await messages('ik-u2', 's1')).map((r) => r.content)).toEqual(['hello', (ra.json as { reply: string }).reply]);
  });

  it('rejects a key over 200 characters with 400 and stores nothing', async () => {
    const res = await chat('ik-u3', 's1', 'x', 'k'.repeat(201));
    expect(res.status).toBe(400);
    expect(await messages('ik-u3', 's1')).toEqual([]);
  });
});

describe('POST /api/chat/stream with Idempotency-Key', () => {
  const stream = async (user_id: string, session_id: string, message: string, key: string) =>
    (await postSse(t.url, '/api/chat/stream', { user_id, session_id, message }, undefined, { 'idempotency-key': key })).done;
  const shape = (events: Array<{ event: string; data: unknown }>) => events.map((e) => e.event);

  it('streams the stored reply to a retry after the turn answered: no model call, no new rows', async () => {
    const first = await stream('iks-u1', 's1', 'hello', 'turn-1');
    expect(first.at(-1)!.event).toBe('done');
    const after = calls;
    const retry = await stream('iks-u1', 's1', 'hello', 'turn-1');
    expect(shape(retry)).toEqual(['delta', 'done']);
    expect(retry.at(-1)!.data).toEqual(first.at(-1)!.data);
    expect((retry[0]!.data as { text: string }).text).toBe((first.at(-1)!.data as { reply: string }).reply);
    expect(calls).toBe(after);
    expect(await messages('iks-u1', 's1')).toHaveLength(2);
  });

  it('makes a retry while the first stream runs wait for it, then stream the same reply: one turn stored', async () => {
    // What one turn of a new session costs in model calls (the reply, then its title).
    let before = calls;
    await stream('iks-u2', 'one', 'hello', 'alone');
    const oneTurn = calls - before;
    gate = new Promise<void>((resolve) => (release = resolve));
    before = calls;
    const a = stream('iks-u2', 's1', 'hello', 'k');
    const b = stream('iks-u2', 's1', 'hello', 'k');
    setTimeout(() => release(), 50);
    const [ea, eb] = await Promise.all([a, b]);
    expect(eb.at(-1)!.event).toBe('done');
    expect(eb.at(-1)!.data).toEqual(ea.at(-1)!.data);
    expect(calls - before).toBe(oneTurn);
    expect((await messages('iks-u2', 's1')).map((r) => r.content)).toEqual(['hello', (ea.at(-1)!.data as { reply: string }).reply]);
  });

  it('shares the key with POST /api/chat: a streamed retry of a turn answered there gets its reply', async () => {
    const plain = await chat('iks-u3', 's1', 'hello', 'both');
    const after = calls;
    const retry = await stream('iks-u3', 's1', 'hello', 'both');
    expect(retry.at(-1)!.data).toEqual(plain.json);
    expect(calls).toBe(after);
  });

  it('rejects a bad key with a 400 JSON answer before any event, storing nothing', async () => {
    const res = await t.request('POST', '/api/chat/stream', { body: { user_id: 'iks-u4', session_id: 's1', message: 'x' }, headers: { 'idempotency-key': 'k'.repeat(201) } });
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(/application\/json/);
    expect(await messages('iks-u4', 's1')).toEqual([]);
  });
});

describe('POST /api/conversations/:sid/fork', () => {
  it('branches a session at a row: the new session lists the prefix, then its own turns; the source is untouched', async () => {
    await chat('fk-u1', 'src', 'one');
    await chat('fk-u1', 'src', 'two');
    const res = await t.request('POST', '/api/conversations/src/fork', { body: { user_id: 'fk-u1', message_id: 2 } });
    expect(res.status).toBe(200);
    const { session_id } = res.json as { session_id: string };
    expect(session_id).not.toBe('src');
    const source = await messages('fk-u1', 'src');
    expect((await messages('fk-u1', session_id)).map((r) => r.content)).toEqual(source.slice(0, 2).map((r) => r.content));
    await chat('fk-u1', session_id, 'edited two');
    const branched = await messages('fk-u1', session_id);
    expect(branched.map((r) => r.message_id)).toEqual([1, 2, 3, 4]);
    expect(branched[2]!.content).toBe('edited two');
    expect(await messages('fk-u1', 'src')).toEqual(source);
    const listed = (await t.request('GET', '/api/conversations?user_id=fk-u1')).json as { items: Array<{ session_id: string }> };
    expect(listed.items.map((i) => i.session_id)).toContain(session_id);
    const search = (await t.request('GET', `/api/conversations/${session_id}/search?user_id=fk-u1&keyword=one`)).json as { items: unknown[] };
    expect(search.items).toHaveLength(1);
  });

  it('takes a new_session_id, answers 409 when it is taken and 404 for a missing row', async () => {
    await chat('fk-u2', 'src', 'one');
    const named = await t.request('POST', '/api/conversations/src/fork', { body: { user_id: 'fk-u2', message_id: 1, new_session_id: 'branch' } });
    expect(named.json).toEqual({ session_id: 'branch' });
    const taken = await t.request('POST', '/api/conversations/src/fork', { body: { user_id: 'fk-u2', message_id: 1, new_session_id: 'branch' } });
    expect(taken.status).toBe(409);
    const missing = await t.request('POST', '/api/conversations/src/fork', { body: { user_id: 'fk-u2', message_id: 99 } });
    expect(missing.status).toBe(404);
    const other = await t.request('POST', '/api/conversations/src/fork', { body: { user_id: 'fk-u3', message_id: 1 } });
    expect(other.status).toBe(404);
  });
});
