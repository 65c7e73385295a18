import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/test-server.ts';

// Every id the id rule accepts is reachable through every route that takes it in its path, from
// `fetch` (which applies the WHATWG URL parser's normalisation, as browsers do), and the ids a
// URL cannot carry (`.`, `..`) are refused everywhere, the body included.

const ADMIN = 'admin-token-for-path-ids';
let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ adminToken: ADMIN });
});
afterAll(async () => {
  await t.close();
});

const e = encodeURIComponent;
const call = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${t.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN}`, 'x-mnemo-request': '1', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
};

// Longest by UTF-16 length (astral), by percent-encoding kept in the path (`/`, `%`, `?`), and
// the characters URL parsers treat specially.
const IDS: [string, string][] = [
  ['128 astral characters', '𠀀'.repeat(128)],
  ['128 slashes', '/'.repeat(128)],
  ['128 percent signs', '%'.repeat(128)],
  ['?#&+ x 32', '?#&+'.repeat(32)],
  ['101 letters', 'x'.repeat(101)],
  ...(['a b', '.a', 'a.', '...', '\\x', '%2e%2e', '张三/会话'].map((id) => [JSON.stringify(id), id]) as [string, string][]),
];

describe('ids in paths', () => {
  it.each(IDS)('%s as user and session id reaches messages, search, window, fork, delete and erase', async (_, id) => {
    expect((await call('POST', '/api/chat', { user_id: id, session_id: id, message: 'walrus' })).status).toBe(200);
    const listed = await call('GET', `/api/conversations?user_id=${e(id)}`);
    expect(listed.json['items']).toEqual([expect.objectContaining({ session_id: id })]);

    const base = `/api/conversations/${e(id)}`;
    const rows = await call('GET', `${base}/messages?user_id=${e(id)}`);
    expect(rows.status).toBe(200);
    expect((rows.json['items'] as { content: string }[]).map((r) => r.content)[0]).toBe('walrus');
    const found = await call('GET', `${base}/search?user_id=${e(id)}&keyword=walrus`);
    expect((found.json['items'] as unknown[]).length).toBe(2); // the message and the offline reply quoting it
    const window = await call('GET', `${base}/window?user_id=${e(id)}&message_id=1&after=1`);
    expect((window.json['items'] as unknown[]).length).toBe(2);
    const fork = await call('POST', `${base}/fork`, { user_id: id, message_id: 1 });
    expect(fork.status).toBe(200);
    expect((await call('DELETE', `${base}?user_id=${e(id)}`)).json).toEqual({ session_id: id, deleted: true });
    const erased = await call('DELETE', `/api/users/${e(id)}`);
    expect(erased.json).toMatchObject({ user_id: id, erased: true });
  });

  it.each(['.', '..'])('%j is refused as a user or session id, in the body as in the path', async (id) => {
    const asSession = await call('POST', '/api/chat', { user_id: 'u', session_id: id, message: 'x' });
    expect(asSession.status).toBe(400);
    expect(asSession.json['detail']).toMatch(/^invalid session_id/);
    expect((await call('POST', '/api/chat', { user_id: id, session_id: 's', message: 'x' })).status).toBe(400);
    expect((await call('GET', `/api/conversations?user_id=${e(id)}`)).status).toBe(400);
    expect((await call('POST', '/api/conversations/s/fork', { user_id: 'u', message_id: 1, new_session_id: id })).status).toBe(400);
  });

  it('answers a path segment longer than any id can be encoded with 414', async () => {
    const long = await call('GET', `/api/conversations/${'a'.repeat(400)}/messages?user_id=u`);
    expect(long.status).toBe(414);
  });
});
