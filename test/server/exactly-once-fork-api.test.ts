import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LlmResponse, LlmService } from '../../src/llm/index.ts';
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
