import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LlmError, type LlmService } from '../../src/llm/index.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

// The demo's API over a real server and a real runtime (LMDB in a temp dir, offline fallback
// LLM): shapes, status codes, and what one user can see of another's sessions.

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.close();
});

const chat = (user_id: string, session_id: string, message: string) =>
  t.request('POST', '/api/chat', { body: { user_id, session_id, message } });
const messages = (user_id: string, session_id: string) =>
  t.request('GET', `/api/conversations/${session_id}/messages?user_id=${user_id}`);
const list = (user_id: string) => t.request('GET', `/api/conversations?user_id=${user_id}`);

describe('POST /api/chat', () => {
  it('answers {reply, memory_hits, title, tool_calls} with the offline fallback reply', async () => {
    const res = await chat('chat-u1', 's1', '你好');
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ reply: '收到：你好。我已经记录到记忆中。', memory_hits: 0, title: '你好', tool_calls: [] });
  });

  it('follows the demo’s observed sequence: empty message, then a language request that sticks', async () => {
    const first = await chat('chat-u2', 's1', '');
    expect(first.json).toEqual({ reply: '收到：。我已经记录到记忆中。', memory_hits: 0, title: '新对话', tool_calls: [] });
    const second = await chat('chat-u2', 's1', '请用中文 hello');
    expect(second.json).toMatchObject({ reply: '收到：请用中文 hello。我会继续用中文回答。', title: '新对话' });
    const third = await chat('chat-u2', 's1', 'second');
    expect(third.json).toMatchObject({ reply: '收到：second。我会继续用中文回答。', title: '新对话' });
  });

  it('rejects a missing field with 422 and FastAPI’s issue shape', async () => {
    const res = await t.request('POST', '/api/chat', { body: { user_id: 'u', message: 'hi' } });
    expect(res.status).toBe(422);
    expect(res.json).toEqual({
      detail: [{ type: 'missing', loc: ['body', 'session_id'], msg: 'Field required', input: { user_id: 'u', message: 'hi' } }],
    });
  });

  it('rejects a non-string field with 422 string_type, every bad field at once', async () => {
    const res = await t.request('POST', '/api/chat', { body: { user_id: 'u', session_id: null, message: 123 } });
    expect(res.status).toBe(422);
    expect(res.json).toEqual({
      detail: [
        { type: 'string_type', loc: ['body', 'session_id'], msg: 'Input should be a valid string', input: null },
        { type: 'string_type', loc: ['body', 'message'], msg: 'Input should be a valid string', input: 123 },
      ],
    });
  });

  it('rejects a missing body, a non-object body and malformed JSON with 422', async () => {
    const none = await t.request('POST', '/api/chat');
    expect(none.status).toBe(422);
    expect(none.json).toEqual({ detail: [{ type: 'missing', loc: ['body'], msg: 'Field required', input: null }] });

    const array = await t.request('POST', '/api/chat', { body: ['u', 's', 'm'] });
    expect(array.status).toBe(422);
    expect((array.json as { detail: { type: string }[] }).detail[0]?.type).toBe('model_attributes_type');

    const broken = await t.request('POST', '/api/chat', { raw: '{"user_id":', headers: { 'content-type': 'application/json' } });
    expect(broken.status).toBe(422);
    expect((broken.json as { detail: { type: string; loc: unknown[] }[] }).detail[0]).toMatchObject({
      type: 'json_invalid',
      loc: ['body', 0],
    });
  });

  it('rejects blank ids with the demo’s 400 detail', async () => {
    for (const [user_id, session_id] of [['  ', 's'], ['u', ''], ['', '']]) {
      const res = await chat(user_id!, session_id!, 'x');
      expect(res.status).toBe(400);
      expect(res.json).toEqual({ detail: 'user_id and session_id are required' });
    }
  });

  it('rejects ids that could escape a namespace with 400, and stores nothing', async () => {
    for (const [user_id, session_id] of [['a\u0000b', 's'], ['u', 'a\nb'], ['u', 'x'.repeat(129)], [' u', 's'], ['u', 's ']]) {
      const res = await chat(user_id!, session_id!, 'x');
      expect(res.status).toBe(400);
      expect((res.json as { detail: string }).detail).toMatch(/invalid (user_id|session_id)/);
    }
    expect((await list('u')).json).toEqual({ items: [] });
  });

  it('takes real user ids (emails, dotted names, Chinese, spaces, slashes) and keeps them apart', async () => {
    const e = encodeURIComponent;
    for (const [user_id, session_id] of [['alice.smith@example.com', 's'], ['张三', '会话 1'], ['a/b', 'c'], ['a', 'b/c']]) {
      const res = await chat(user_id!, session_id!, `hi from ${user_id}/${session_id}`);
      expect(res.status).toBe(200);
    }
    for (const [user_id, session_id] of [['张三', '会话 1'], ['a/b', 'c'], ['a', 'b/c']]) {
      const res = await t.request('GET', `/api/conversations/${e(session_id!)}/messages?user_id=${e(user_id!)}`);
      expect(res.status).toBe(200);
      const items = (res.json as { items: { content: string }[] }).items;
      expect(items.map((i) => i.content)[0]).toBe(`hi from ${user_id}/${session_id}`);
      expect(items).toHaveLength(2);
    }
    expect(((await t.request('GET', `/api/conversations?user_id=${e('张三')}`)).json as { items: { session_id: string }[] }).items.map((i) => i.session_id)).toEqual(['会话 1']);
  });

  it('answers a model failure with its mapped status, {detail, code} and a safe message, never the provider text', async () => {
    const cases: [LlmError, number][] = [
      [new LlmError('llm_auth', '401 Incorrect API key provided: sk-***abcd', { status: 401 }), 502],
      [new LlmError('llm_rate_limited', '429 quota of org-secret exceeded', { status: 429 }), 429],
      [new LlmError('llm_unavailable', 'upstream exploded at http://10.0.0.7/v1', { status: 502 }), 503],
      [new LlmError('llm_timeout', 'Request timed out.'), 504],
      [new LlmError('llm_bad_request', '400 bad messages'), 502],
      [new LlmError('llm_error', 'no choices'), 502],
    ];
    let next = 0;
    const failing: LlmService = {
      chat: async () => {
        throw cases[next]![0];
      },
    };
    const broken = await startTestServer({ llm: failing });
    try {
      for (; next < cases.length; next++) {
        const [err, status] = cases[next]!;
        const res = await broken.request('POST', '/api/chat', { body: { user_id: 'u', session_id: `s${next}`, message: 'hi' } });
        expect(res.status, err.code).toBe(status);
        const body = res.json as { detail: string; code: string };
        expect(Object.keys(body).sort()).toEqual(['code', 'detail']);
        expect(body.code).toBe(err.code);
        expect(body.detail).not.toContain(err.message);
        expect(res.text).not.toMatch(/sk-|org-secret|10\.0\.0\.7/);
      }
    } finally {
      await broken.close();
    }
  });
});

describe('conversations', () => {
  it('creates a 12-hex session id that is listed only after its first chat', async () => {
    const created = await t.request('POST', '/api/conversations', { body: { user_id: 'conv-u1' } });
    expect(created.status).toBe(200);
    const { session_id } = created.json as { session_id: string };
    expect(session_id).toMatch(/^[0-9a-f]{12}$/);
    expect((await list('conv-u1')).json).toEqual({ items: [] });
    await chat('conv-u1', session_id, 'hello there');
    expect((await list('conv-u1')).json).toEqual({
      items: [{ session_id, title: 'hello there', updated_at: expect.any(String) }],
    });
  });

  it('lists conversations most recently updated first, ties in creation order', async () => {
    let now = Date.parse('2026-04-08T10:00:00Z');
    const timed = await startTestServer({ clock: { now: () => now } });
    try {
      const say = (session_id: string) =>
        timed.request('POST', '/api/chat', { body: { user_id: 'u', session_id, message: session_id } });
      await say('a');
      await say('b'); // same second as a
      now += 60_000;
      await say('c');
      const items = ((await timed.request('GET', '/api/conversations?user_id=u')).json as {
        items: { session_id: string; updated_at: string }[];
      }).items;
      expect(items.map((i) => i.session_id)).toEqual(['c', 'a', 'b']);
      now += 60_000;
      await say('a');
      const again = ((await timed.request('GET', '/api/conversations?user_id=u')).json as {
        items: { session_id: string }[];
      }).items;
      expect(again.map((i) => i.session_id)).toEqual(['a', 'c', 'b']);
    } finally {
      await timed.close();
    }
  });

  it('answers an unknown user with an empty list', async () => {
    expect((await list('nobody-here')).json).toEqual({ items: [] });
  });

  it('rejects a missing user_id with 422 and a blank one with 400', async () => {
    const missing = await t.request('GET', '/api/conversations');
    expect(missing.status).toBe(422);
    expect(missing.json).toEqual({
      detail: [{ type: 'missing', loc: ['query', 'user_id'], msg: 'Field required', input: null }],
    });
    const blank = await t.request('GET', '/api/conversations?user_id=%20');
    expect(blank.status).toBe(400);
    const createBlank = await t.request('POST', '/api/conversations', { body: { user_id: '' } });
    expect(createBlank.status).toBe(400);
    const createMissing = await t.request('POST', '/api/conversations', { body: {} });
    expect(createMissing.status).toBe(422);
  });
});

describe('GET /api/conversations/:session_id/messages', () => {
  it('returns the session’s rows in order with exactly the demo’s fields', async () => {
    await chat('msg-u1', 's1', 'first');
    await chat('msg-u1', 's1', 'second');
    const res = await messages('msg-u1', 's1');
    expect(res.status).toBe(200);
    const items = (res.json as { items: Record<string, unknown>[] }).items;
    expect(items.map((i) => [i['message_id'], i['role'], i['content']])).toEqual([
      [1, 'user', 'first'],
      [2, 'assistant', '收到：first。我已经记录到记忆中。'],
      [3, 'user', 'second'],
      [4, 'assistant', '收到：second。我已经记录到记忆中。'],
    ]);
    for (const item of items) {
      expect(Object.keys(item).sort()).toEqual(['content', 'message_id', 'role', 'tool_calls', 'ts']);
      expect(item['ts']).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}/);
      expect(item['tool_calls']).toEqual([]);
    }
  });

  it('answers an unknown session with 200 and no items', async () => {
    const res = await messages('msg-u1', 'never-used');
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ items: [] });
  });

  it('rejects a missing user_id with 422 and a malformed session id with 400', async () => {
    expect((await t.request('GET', '/api/conversations/s1/messages')).status).toBe(422);
    expect((await t.request('GET', '/api/conversations/%20s/messages?user_id=u')).status).toBe(400);
    expect((await t.request('GET', '/api/conversations/a%0Ab/messages?user_id=u')).status).toBe(400);
    // `..` is no id (URL clients drop the segment, so no route could reach it): 400, not a path.
    expect((await t.request('GET', '/api/conversations/%2e%2e/messages?user_id=u')).status).toBe(400);
  });
});

describe('isolation between users', () => {
  beforeAll(async () => {
    await chat('alice', 'shared', 'alice secret pineapple');
  });

  it('does not list another user’s sessions', async () => {
    const items = ((await list('bob')).json as { items: { session_id: string }[] }).items;
    expect(items.map((i) => i.session_id)).not.toContain('shared');
  });

  it('does not show another user’s messages under the same session id', async () => {
    expect((await messages('bob', 'shared')).json).toEqual({ items: [] });
  });

  it('does not find another user’s messages by session or daily search, or in a window', async () => {
    const sessionSearch = await t.request('GET', '/api/conversations/shared/search?user_id=bob&keyword=pineapple');
    expect(sessionSearch.json).toEqual({ items: [] });
    const dailySearch = await t.request('GET', '/api/daily/search?user_id=bob&keyword=pineapple');
    expect(dailySearch.json).toEqual({ items: [] });
    const window = await t.request('GET', '/api/conversations/shared/window?user_id=bob&message_id=1&after=5');
    expect(window.json).toEqual({ items: [] });
  });

  it('cannot delete another user’s session', async () => {
    const res = await t.request('DELETE', '/api/conversations/shared?user_id=bob');
    expect(res.status).toBe(404);
    expect(((await messages('alice', 'shared')).json as { items: unknown[] }).items).toHaveLength(2);
  });

  it('keeps a session of the same id separate when the other user chats in it', async () => {
    await chat('bob', 'shared', 'bob here');
    const bobs = ((await messages('bob', 'shared')).json as { items: { content: string }[] }).items;
    const alices = ((await messages('alice', 'shared')).json as { items: { content: string }[] }).items;
    expect(bobs.map((i) => i.content)).toEqual(['bob here', '收到：bob here。我已经记录到记忆中。']);
    expect(alices[0]?.content).toBe('alice secret pineapple');
  });
});

describe('DELETE /api/conversations/:session_id', () => {
  it('removes the session, its index entry and its daily rows, and nothing else', async () => {
    await chat('del-u', 'doomed', 'walrus one');
    await chat('del-u', 'kept', 'walrus two');
    const res = await t.request('DELETE', '/api/conversations/doomed?user_id=del-u');
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ session_id: 'doomed', deleted: true });

    const items = ((await list('del-u')).json as { items: { session_id: string }[] }).items;
    expect(items.map((i) => i.session_id)).toEqual(['kept']);
    expect((await messages('del-u', 'doomed')).json).toEqual({ items: [] });
    const daily = (await t.request('GET', '/api/daily/search?user_id=del-u&keyword=walrus')).json as {
      items: { content: string; session_id: string }[];
    };
    expect(daily.items.map((i) => i.content)).toEqual(['walrus two', '收到：walrus two。我已经记录到记忆中。']);
    expect(daily.items.map((i) => i.session_id)).toEqual(['kept', 'kept']);
  });

  it('answers 404 for a session that does not exist (or is already gone)', async () => {
    const res = await t.request('DELETE', '/api/conversations/ghost?user_id=del-u');
    expect(res.status).toBe(404);
    expect(res.json).toEqual({ detail: 'conversation not found' });
  });

  it('rejects a missing user_id with 422', async () => {
    expect((await t.request('DELETE', '/api/conversations/kept')).status).toBe(422);
  });
});

describe('search and window', () => {
  beforeAll(async () => {
    for (const m of ['Apple pie', 'banana', 'APPLE tart', 'cherry']) await chat('find-u', 's', m);
  });

  it('finds session rows by case-insensitive keyword, most recent matches, in order', async () => {
    const res = await t.request('GET', '/api/conversations/s/search?user_id=find-u&keyword=%20apple%20&limit=5');
    expect(res.status).toBe(200);
    const items = (res.json as { items: { message_id: number; content: string }[] }).items;
    expect(items.map((i) => i.content)).toEqual([
      'Apple pie',
      '收到：Apple pie。我已经记录到记忆中。',
      'APPLE tart',
      '收到：APPLE tart。我已经记录到记忆中。',
    ]);
    expect(items.map((i) => i.message_id)).toEqual([1, 2, 5, 6]);
  });

  it('limits session search to the most recent matches', async () => {
    const res = await t.request('GET', '/api/conversations/s/search?user_id=find-u&keyword=apple&limit=1');
    expect((res.json as { items: { message_id: number }[] }).items.map((i) => i.message_id)).toEqual([6]);
  });

  it('returns the rows around an anchor, clipped at the edges', async () => {
    const res = await t.request('GET', '/api/conversations/s/window?user_id=find-u&message_id=3&before=1&after=1');
    expect((res.json as { items: { message_id: number }[] }).items.map((i) => i.message_id)).toEqual([2, 3, 4]);
    const edge = await t.request('GET', '/api/conversations/s/window?user_id=find-u&message_id=1&before=5&after=1');
    expect((edge.json as { items: { message_id: number }[] }).items.map((i) => i.message_id)).toEqual([1, 2]);
  });

  it('finds today’s daily rows with their day and session', async () => {
    const res = await t.request('GET', '/api/daily/search?user_id=find-u&keyword=cherry');
    const items = (res.json as { items: { content: string; day: string; session_id: string; message_id: number }[] })
      .items;
    expect(items.map((i) => i.content)).toEqual(['cherry', '收到：cherry。我已经记录到记忆中。']);
    expect(items[0]?.day).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(items[0]?.session_id).toBe('s');

    const day = items[0]!.day;
    const window = await t.request(
      'GET',
      `/api/daily/window?user_id=find-u&message_id=${items[0]!.message_id}&before=1&after=0&day=${day}`,
    );
    expect((window.json as { items: { content: string }[] }).items.map((i) => i.content)).toEqual([
      '收到：APPLE tart。我已经记录到记忆中。',
      'cherry',
    ]);
  });

  it('rejects a non-integer anchor or limit with 422 int_parsing', async () => {
    const res = await t.request('GET', '/api/conversations/s/window?user_id=find-u&message_id=abc');
    expect(res.status).toBe(422);
    expect(res.json).toEqual({
      detail: [
        {
          type: 'int_parsing',
          loc: ['query', 'message_id'],
          msg: 'Input should be a valid integer, unable to parse string as an integer',
          input: 'abc',
        },
      ],
    });
    expect((await t.request('GET', '/api/daily/search?user_id=find-u&limit=2.5')).status).toBe(422);
    expect((await t.request('GET', '/api/daily/window?user_id=find-u')).status).toBe(422);
  });
});

describe('GET /api/runtime', () => {
  it('returns the live supervision tree with states, restart counts and mailbox depths', async () => {
    await chat('tree-u', 'tree-s', 'hello tree');
    const res = await t.request('GET', '/api/runtime');
    expect(res.status).toBe(200);
    interface Node {
      name?: string;
      type: string;
      status: string;
      restarts: number;
      mailboxDepth: number;
      children: Node[];
    }
    const body = res.json as { tree: Node; pid: number };
    expect(body.pid).toBe(process.pid);
    expect(body.tree).toMatchObject({ type: 'supervisor', status: 'running', restarts: 0 });
    const all: Node[] = [];
    const walk = (n: Node): void => {
      all.push(n);
      n.children.forEach(walk);
    };
    walk(body.tree);
    for (const n of all) {
      expect(typeof n.restarts).toBe('number');
      expect(typeof n.mailboxDepth).toBe('number');
    }
    // Without the admin token no conversation is named: the actor is there, its name is not.
    expect(JSON.stringify(body)).not.toContain('tree-u');
    expect((res.json as { names: string }).names).toBe('redacted');
    const conversations = all.find((n) => n.name?.endsWith('_conversation_sup'));
    expect(conversations?.children.length).toBeGreaterThan(0);
    expect(conversations?.children.every((c) => c.name === undefined && c.status === 'running')).toBe(true);
  });
});
