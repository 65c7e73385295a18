import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/test-server.ts';

// GET /api/conversations/{session_id}/summaries over a real server and runtime (offline: the
// summaries are extractive, on by default), as its user sees it and as another user does not.

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ userTokens: { 'tok-alice': 'alice' }, token: 'shared' });
});
afterAll(async () => {
  await t.close();
});

const long = (i: number) => `turn ${i}: my espresso machine is a small one, ${'and some more words about coffee '.repeat(5)}`;
const asAlice = { headers: { authorization: 'Bearer tok-alice' } };

describe('GET /api/conversations/{session_id}/summaries', () => {
  it('lists the session’s summaries with their provenance, oldest first; none for an unknown session or another user', async () => {
    for (let i = 1; i <= 12; i++) {
      const res = await t.request('POST', '/api/chat', { ...asAlice, body: { user_id: 'alice', session_id: 's', message: long(i) } });
      expect(res.status).toBe(200);
    }
    await t.recall.summaryIdle();
    const res = await t.request('GET', '/api/conversations/s/summaries?user_id=alice', asAlice);
    expect(res.status).toBe(200);
    const items = (res.json as { items: Record<string, unknown>[] }).items;
    expect(items.length).toBeGreaterThan(0);
    expect(items[0]).toEqual({ id: 1, text: expect.stringContaining('用户：turn 1:'), from: 1, to: expect.any(Number), model: 'extractive', at: expect.any(String), previous: null, method: 'extractive' });
    expect(items).toEqual(await t.recall.summaries('alice', 's'));
    // The next turn sends the last one.
    await t.request('POST', '/api/chat', { ...asAlice, body: { user_id: 'alice', session_id: 's', message: 'and now?' } });
    const [log] = (await t.recall.dialogueLog('alice', 's')).slice(-1);
    expect(log!.memoryContext.startsWith(`[SUMMARY]\n${String(items.at(-1)!['text'])}\n[SESSION]\n`)).toBe(true);

    expect((await t.request('GET', '/api/conversations/none/summaries?user_id=alice', asAlice)).json).toEqual({ items: [] });
    const bob = await t.request('GET', '/api/conversations/s/summaries?user_id=bob', { headers: { authorization: 'Bearer shared' } });
    expect(bob.json).toEqual({ items: [] });
    // A user token reads its own user's only.
    expect((await t.request('GET', '/api/conversations/s/summaries?user_id=bob', asAlice)).status).toBe(403);
  });

  it('refuses a missing user_id (422) and a bad id (400), as the other session routes do', async () => {
    const auth = { headers: { authorization: 'Bearer shared' } };
    expect((await t.request('GET', '/api/conversations/s/summaries', auth)).status).toBe(422);
    expect((await t.request('GET', `/api/conversations/s/summaries?user_id=${encodeURIComponent(' x')}`, auth)).status).toBe(400);
  });
});
