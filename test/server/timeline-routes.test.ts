import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openAICompatible } from '../../src/llm/index.ts';
import { manualClock } from '../support/recall-fixture.ts';
import { startChatStub, type ChatStub } from '../support/chat-completions-stub.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

// The page's read routes for its panels: the tool-call timeline and the daily view by day,
// over a real server whose model (a loopback chat-completions stub) makes real tool calls.

let stub: ChatStub;
let t: TestServer;
beforeAll(async () => {
  stub = await startChatStub({
    toolCall: (text) =>
      text.startsWith('note')
        ? { name: 'remember_note', arguments: { note: `- ${text}` } }
        : text.startsWith('plain')
          ? null
          : { name: 'search_session', arguments: { keyword: text.split(' ')[0] } },
  });
  // A minute between turns, so "newest first" is not a tie within one second.
  const clock = manualClock();
  t = await startTestServer({ clock, llm: openAICompatible({ apiKey: 'sk-test', baseURL: stub.baseURL, model: 'stub', maxRetries: 0 }) });
  const turns: [string, string, string][] = [
    ['tl-u', 'a', 'coffee please'],
    ['tl-u', 'a', 'plain hello'],
    ['tl-u', 'b', 'note likes tea'],
    ['tl-u', 'b', 'walrus facts'],
    ['tl-other', 'a', 'secret stuff'],
  ];
  for (const [user_id, session_id, message] of turns) {
    clock.advance(60_000);
    const res = await t.request('POST', '/api/chat', { body: { user_id, session_id, message } });
    expect(res.status).toBe(200);
  }
});
afterAll(async () => {
  await t?.close();
  await stub?.close();
});

interface TimelineItem {
  session_id: string;
  title: string;
  message_id: number;
  ts: string;
  user_message: string;
  index: number;
  name: string;
  input: string;
  output: string;
}
const timeline = async (query: string) => {
  const res = await t.request('GET', `/api/tool-calls?${query}`);
  expect(res.status).toBe(200);
  return (res.json as { items: TimelineItem[] }).items;
};

describe('GET /api/tool-calls', () => {
  it('lists every tool call of the user across sessions, newest turn first, each with its turn’s anchor', async () => {
    const items = await timeline('user_id=tl-u');
    expect(items.map((i) => [i.session_id, i.name, i.user_message])).toEqual([
      ['b', 'search_session', 'walrus facts'],
      ['b', 'remember_note', 'note likes tea'],
      ['a', 'search_session', 'coffee please'],
    ]);
    const coffee = items[2]!;
    expect(coffee).toMatchObject({ index: 0, input: '{"keyword": "coffee"}' });
    // The anchor is the assistant row of that turn in /messages.
    const rows = (await t.request('GET', '/api/conversations/a/messages?user_id=tl-u')).json as {
      items: { message_id: number; role: string; tool_calls: unknown[] }[];
    };
    const anchored = rows.items.find((r) => r.message_id === coffee.message_id);
    expect(anchored).toMatchObject({ role: 'assistant', tool_calls: [{ name: 'search_session' }] });
  });

  it('filters by exact tool name and by a case-insensitive keyword in name, arguments, output or user message', async () => {
    expect((await timeline('user_id=tl-u&tool=remember_note')).map((i) => i.user_message)).toEqual(['note likes tea']);
    expect((await timeline('user_id=tl-u&tool=remember')).length).toBe(0);
    expect((await timeline('user_id=tl-u&keyword=COFFEE')).map((i) => i.user_message)).toEqual(['coffee please']);
    expect((await timeline('user_id=tl-u&keyword=likes%20tea')).map((i) => i.name)).toEqual(['remember_note']);
    expect((await timeline('user_id=tl-u&tool=search_session&keyword=walrus')).map((i) => i.session_id)).toEqual(['b']);
    expect((await timeline('user_id=tl-u&limit=1')).length).toBe(1);
  });

  it('shows one user nothing of another’s calls', async () => {
    expect((await timeline('user_id=tl-other')).map((i) => i.user_message)).toEqual(['secret stuff']);
    expect(await timeline('user_id=tl-u&keyword=secret')).toEqual([]);
    expect(await timeline('user_id=nobody')).toEqual([]);
  });

  it('refuses a missing user or a non-integer limit with 422, and a bad id with 400', async () => {
    expect((await t.request('GET', '/api/tool-calls')).status).toBe(422);
    expect((await t.request('GET', '/api/tool-calls?user_id=tl-u&limit=x')).status).toBe(422);
    expect((await t.request('GET', `/api/tool-calls?user_id=${encodeURIComponent(' bad')}`)).status).toBe(400);
  });
});

describe('GET /api/daily', () => {
  it('returns today’s rows of the user by default, chronological, with their session and day', async () => {
    const res = await t.request('GET', '/api/daily?user_id=tl-u');
    expect(res.status).toBe(200);
    const items = (res.json as { items: { role: string; content: string; day: string; session_id: string; message_id: number }[] }).items;
    expect(items.filter((i) => i.role === 'user').map((i) => i.content)).toEqual(['coffee please', 'plain hello', 'note likes tea', 'walrus facts']);
    expect(items.map((i) => i.message_id)).toEqual(items.map((_, n) => n + 1));
    const day = items[0]!.day;
    expect(day).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    const same = await t.request('GET', `/api/daily?user_id=tl-u&day=${day}`);
    expect(same.json).toEqual(res.json);
  });

  it('returns no rows for another day, a malformed day or another user', async () => {
    expect((await t.request('GET', '/api/daily?user_id=tl-u&day=2001-01-01')).json).toEqual({ items: [] });
    expect((await t.request('GET', '/api/daily?user_id=tl-u&day=yesterday')).json).toEqual({ items: [] });
    expect((await t.request('GET', '/api/daily?user_id=nobody')).json).toEqual({ items: [] });
  });

  it('is described in /openapi.json with the timeline', async () => {
    const doc = (await t.request('GET', '/openapi.json')).json as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/api/daily', '/api/tool-calls']));
  });
});
