import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIELD_MAX_CHARS } from '../../src/server/api-schemas.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

// The limits a user cannot exceed, over a real server and runtime: each refused with a clear
// status and code, and nothing stored.

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.close();
});

describe('field lengths', () => {
  it('refuses a message over the limit with 422 string_too_long, counting characters as pydantic does', async () => {
    const max = FIELD_MAX_CHARS.message;
    const over = await t.request('POST', '/api/chat', { body: { user_id: 'len-u', session_id: 's', message: 'x'.repeat(max + 1) } });
    expect(over.status).toBe(422);
    expect(over.json).toEqual({
      detail: [
        {
          type: 'string_too_long',
          loc: ['body', 'message'],
          msg: `String should have at most ${max} characters`,
          input: `${'x'.repeat(1024)}…`,
          ctx: { max_length: max },
        },
      ],
    });
    expect((await t.request('GET', '/api/conversations?user_id=len-u')).json).toEqual({ items: [] });
    // Characters, not UTF-16 units: the longest message of astral characters is taken.
    const astral = await t.request('POST', '/api/chat', { body: { user_id: 'len-u', session_id: 's', message: '𠀀'.repeat(max) } });
    expect(astral.status).toBe(200);
  });

  it('refuses an overlong query string field and fact text with 422; an overlong id stays the id rule’s 400', async () => {
    const keyword = await t.request('GET', `/api/conversations/s/search?user_id=u&keyword=${'k'.repeat(FIELD_MAX_CHARS.query + 1)}`);
    expect(keyword.status).toBe(422);
    expect((keyword.json as { detail: { type: string; loc: string[] }[] }).detail[0]).toMatchObject({ type: 'string_too_long', loc: ['query', 'keyword'] });
    const fact = await t.request('POST', '/api/memory', { body: { user_id: 'u', text: 'f'.repeat(FIELD_MAX_CHARS.fact + 1) } });
    expect(fact.status).toBe(422);
    const id = await t.request('POST', '/api/chat', { body: { user_id: 'u', session_id: 's'.repeat(129), message: 'm' } });
    expect(id.status).toBe(400);
  });
});
