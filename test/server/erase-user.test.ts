import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/test-server.ts';

describe('DELETE /api/users/{user_id}', () => {
  let t: TestServer;
  const token = 'api-token-0123456789';
  const adminToken = 'admin-token-9876543210';
  const api = { authorization: `Bearer ${token}` };
  const admin = { authorization: `Bearer ${adminToken}` };
  beforeAll(async () => {
    t = await startTestServer({ token, adminToken });
    for (const user of ['erase-me', 'keep-me']) {
      const chat = await t.request('POST', '/api/chat', { body: { user_id: user, session_id: 's1', message: `hello from ${user}` }, headers: api });
      expect(chat.status).toBe(200);
    }
  });
  afterAll(async () => {
    await t.close();
  });

  it('is refused with 403 to the API token, and erases nothing', async () => {
    const res = await t.request('DELETE', '/api/users/erase-me', { headers: api });
    expect(res.status).toBe(403);
    const list = await t.request('GET', '/api/conversations?user_id=erase-me', { headers: api });
    expect((list.json as { items: unknown[] }).items).toHaveLength(1);
  });

  it('is refused with 401 without any token', async () => {
    expect((await t.request('DELETE', '/api/users/erase-me')).status).toBe(401);
  });

  it('erases everything of the user for the admin token, and nothing of another user', async () => {
    const res = await t.request('DELETE', '/api/users/erase-me', { headers: admin });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ user_id: 'erase-me', erased: true });
    expect((res.json as { conversations: number }).conversations).toBeGreaterThanOrEqual(1);
    const gone = await t.request('GET', '/api/conversations?user_id=erase-me', { headers: api });
    expect(gone.json).toEqual({ items: [] });
    const messages = await t.request('GET', '/api/conversations/s1/messages?user_id=erase-me', { headers: api });
    expect(messages.json).toEqual({ items: [] });
    const kept = await t.request('GET', '/api/conversations?user_id=keep-me', { headers: api });
    expect((kept.json as { items: unknown[] }).items).toHaveLength(1);
  });

  it('with ?compact=true also compacts the data file: no file of the data directory holds a byte of the user', async () => {
    const secret = 'COMPACT_ME_SECRET';
    for (let i = 0; i < 5; i++) {
      const chat = await t.request('POST', '/api/chat', { body: { user_id: 'compact-me', session_id: 's1', message: `${secret} ${i}` }, headers: api });
      expect(chat.status).toBe(200);
    }
    const erasing = t.request('DELETE', '/api/users/compact-me?compact=true', { headers: admin });
    // Another user's turn while the erasure and the compaction run: it waits, then succeeds.
    const meanwhile = t.request('POST', '/api/chat', { body: { user_id: 'keep-me', session_id: 's2', message: 'during the compaction' }, headers: api });
    const res = await erasing;
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ user_id: 'compact-me', erased: true, compaction: { bytes_before: expect.any(Number), bytes_after: expect.any(Number), pause_ms: expect.any(Number) } });
    expect((await meanwhile).status).toBe(200);
    for (const name of readdirSync(t.dataDir)) {
      const bytes = readFileSync(join(t.dataDir, name));
      expect(bytes.includes(secret), name).toBe(false);
      expect(bytes.includes('compact-me'), name).toBe(false);
    }
    const kept = await t.request('GET', '/api/conversations/s2/messages?user_id=keep-me', { headers: api });
    expect((kept.json as { items: unknown[] }).items).toHaveLength(2);
  });

  it('answers a malformed user id with 400', async () => {
    expect((await t.request('DELETE', `/api/users/${encodeURIComponent(' padded')}`, { headers: admin })).status).toBe(400);
    expect((await t.request('DELETE', '/api/users/keep-me?compact=yes', { headers: admin })).status).toBe(400);
    const kept = await t.request('GET', '/api/conversations?user_id=keep-me', { headers: api });
    expect((kept.json as { items: unknown[] }).items.length).toBeGreaterThanOrEqual(1);
  });
});
