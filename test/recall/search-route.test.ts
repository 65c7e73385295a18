import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { startEmbeddingsStub } from '../support/embeddings-stub.ts';

// GET /api/search over a real server and runtime (LMDB in a temp dir, offline fallback LLM).

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
  for (const [session, message] of [
    ['s1', 'booked the ferry to Hydra for June'],
    ['s2', 'the ferry tickets are in my inbox'],
    ['s2', 'lunch with Ana on Tuesday'],
  ] as const) {
    await t.request('POST', '/api/chat', { body: { user_id: 'route-u', session_id: session, message } });
  }
});
afterAll(async () => {
  await t.close();
});

interface Hit {
  session_id: string | null;
  message_id: number;
  day: string;
  score: number;
  snippet: string;
  role: string;
}

const search = async (query: string) => {
  const res = await t.request('GET', `/api/search?${query}`);
  return { status: res.status, json: res.json as { ranking: string; items: Hit[] } & { detail?: unknown } };
};

describe('GET /api/search', () => {
  it('answers ranked hits in snake_case, across sessions, best first', async () => {
    const { status, json } = await search('user_id=route-u&q=ferry+to+Hydra&roles=user');
    expect(status).toBe(200);
    expect(json.ranking).toBe('bm25');
    expect(json.items.map((h) => [h.session_id, h.message_id])).toEqual([
      ['s1', 1],
      ['s2', 1],
    ]);
    expect(json.items[0]).toMatchObject({ role: 'user', snippet: 'booked the ferry to Hydra for June', source: 'session' });
    expect(json.items[0]!.day).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(json.items[0]!.score).toBeGreaterThan(json.items[1]!.score);
  });

  it('filters by session and limit; another user finds nothing', async () => {
    const one = await search('user_id=route-u&q=ferry&session_id=s2&limit=1');
    expect(one.json.items.map((h) => [h.session_id, h.message_id])).toEqual([['s2', 1]]);
    expect((await search('user_id=someone-else&q=ferry')).json.items).toEqual([]);
  });

  it('rejects a bad id or day with 400 {detail}, a missing user with 422', async () => {
    const badId = await search('user_id=%20x&q=ferry');
    expect(badId.status).toBe(400);
    expect(typeof badId.json.detail).toBe('string');
    const badDay = await search('user_id=route-u&q=ferry&day=yesterday');
    expect(badDay.status).toBe(400);
    expect(badDay.json.detail).toBe('day must be a day YYYY-MM-DD');
    expect((await search('q=ferry')).status).toBe(422);
  });

  it('refuses a missing q with FastAPI’s 422 `missing` issue; an empty q finds nothing', async () => {
    const missing = await search('user_id=route-u');
    expect(missing.status).toBe(422);
    expect(missing.json.detail).toEqual([{ type: 'missing', loc: ['query', 'q'], msg: 'Field required', input: null }]);
    const empty = await search('user_id=route-u&q=');
    expect(empty.status).toBe(200);
    expect(empty.json.items).toEqual([]);
  });
});

describe('GET /api/search with embeddings', () => {
  it('answers hybrid hits with the rows still waiting, and /metrics shows the queue', async () => {
    const stub = await startEmbeddingsStub();
    const h = await startTestServer({ embeddings: { baseURL: stub.baseURL, apiKey: 'k', model: 'stub-embed', retryBaseMs: 1, requestsPerMinute: 60_000, burst: 1000 } });
    try {
      await h.request('POST', '/api/chat', { body: { user_id: 'route-e', session_id: 's1', message: 'I parked my car near the station' } });
      await h.recall.embeddingsIdle();
      const res = await h.request('GET', '/api/search?user_id=route-e&q=automobile+terminal');
      const json = res.json as { ranking: string; pending_embeddings: number; items: Hit[] };
      expect(res.status).toBe(200);
      expect(json.ranking).toBe('hybrid');
      expect(json.pending_embeddings).toBe(0);
      expect(json.items[0]).toMatchObject({ session_id: 's1', message_id: 1 });
      // Rows wait (their batch is held); the query's own embedding is answered.
      stub.hold((texts) => texts.some((t) => t.includes('waiting')));
      await h.request('POST', '/api/chat', { body: { user_id: 'route-e', session_id: 's1', message: 'waiting for a vector' } });
      const waiting = (await h.request('GET', '/api/search?user_id=route-e&q=vector')).json as { pending_embeddings: number };
      expect(waiting.pending_embeddings).toBeGreaterThan(0);
      const metrics = await h.request('GET', '/metrics');
      expect(metrics.text).toMatch(/^mnemo_embeddings_pending [1-9]/m);
      expect(metrics.text).toMatch(/^mnemo_embeddings_dead 0$/m);
      stub.release();
    } finally {
      await h.close();
      await stub.close();
    }
  });
});
