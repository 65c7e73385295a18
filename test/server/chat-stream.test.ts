import { afterEach, describe, expect, it } from 'vitest';
import { openAICompatible } from '../../src/llm/index.ts';
import { startChatStub, type ChatStub } from '../support/chat-completions-stub.ts';
import { postSse } from '../support/sse.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

let t: TestServer | undefined;
let stub: ChatStub | undefined;
afterEach(async () => {
  await t?.close();
  await stub?.close();
  t = undefined;
  stub = undefined;
});

const stubLlm = (s: ChatStub) => openAICompatible({ apiKey: 'k', baseURL: s.baseURL, model: 'm', maxRetries: 0 });

describe('POST /api/chat/stream (Server-Sent Events)', () => {
  it('streams the offline reply as delta events and ends with done, exactly what /api/chat answers', async () => {
    t = await startTestServer();
    const stream = await postSse(t.url, '/api/chat/stream', { user_id: 'u', session_id: 's1', message: 'hello' });
    expect(stream.status).toBe(200);
    expect(stream.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(stream.headers['x-accel-buffering']).toBe('no');
    expect(stream.headers['x-content-type-options']).toBe('nosniff');
    const events = await stream.done;
    const plain = await t.request('POST', '/api/chat', { body: { user_id: 'u', session_id: 's2', message: 'hello' } });
    const deltas = events.filter((e) => e.event === 'delta');
    expect(deltas.length).toBeGreaterThan(1);
    expect(events.at(-1)!.event).toBe('done');
    expect(events.at(-1)!.data).toEqual(plain.json);
    expect(deltas.map((e) => (e.data as { text: string }).text).join('')).toBe((plain.json as { reply: string }).reply);
    const rows = await t.recall.getSessionMessages('u', 's1');
    expect(rows.map((r) => [r.role, r.content])).toEqual([
      ['user', 'hello'],
      ['assistant', (plain.json as { reply: string }).reply],
    ]);
  });

  it('validates the body as /api/chat does, answering JSON before any event', async () => {
    t = await startTestServer();
    const streamed = await t.request('POST', '/api/chat/stream', { body: { user_id: 'u', session_id: 's' } });
    const plain = await t.request('POST', '/api/chat', { body: { user_id: 'u', session_id: 's' } });
    expect(streamed.status).toBe(422);
    expect(streamed.json).toEqual(plain.json);
    expect(await t.recall.getSessionMessages('u', 's')).toEqual([]);
  });

  it('streams tool_call and tool_result events before the reply with a streaming model', async () => {
    stub = await startChatStub();
    t = await startTestServer({ llm: stubLlm(stub) });
    const events = await (await postSse(t.url, '/api/chat/stream', { user_id: 'u', session_id: 's', message: 'coffee beans' })).done;
    const names = events.map((e) => e.event);
    expect(names.slice(0, 2)).toEqual(['tool_call', 'tool_result']);
    expect(names.at(-1)).toBe('done');
    expect(events[0]!.data).toEqual({ name: 'search_session', input: '{"keyword": "coffee"}' });
    const done = events.at(-1)!.data as { reply: string; tool_calls: { name: string; output: string }[] };
    expect(done.reply).toBe('stub answer to "coffee beans" (1 tool results)');
    expect(events.filter((e) => e.event === 'delta').map((e) => (e.data as { text: string }).text).join('')).toBe(done.reply);
    expect(done.tool_calls[0]?.output).toBe((events[1]!.data as { output: string }).output);
  });

  it('sends an error event with the /api/chat error body when the model fails after the stream began', async () => {
    stub = await startChatStub();
    t = await startTestServer({ llm: stubLlm(stub) });
    const events = await (await postSse(t.url, '/api/chat/stream', { user_id: 'u', session_id: 's', message: '#fail now' })).done;
    expect(events.map((e) => e.event)).toEqual(['error']);
    const plain = await t.request('POST', '/api/chat', { body: { user_id: 'u', session_id: 's2', message: '#fail now' } });
    expect(events[0]!.data).toEqual(plain.json);
    expect((events[0]!.data as { code: string }).code).toBe('llm_bad_request');
  });

  it('a client that disconnects mid-stream cancels the model request; the partial reply is stored as interrupted', async () => {
    stub = await startChatStub({ toolCall: () => null, answer: () => 'one two three four', stallAfter: 2 });
    t = await startTestServer({ llm: stubLlm(stub) });
    let got = 0;
    const stream = await postSse(t.url, '/api/chat/stream', { user_id: 'u', session_id: 'gone', message: 'talk to me' }, (e, s) => {
      if (e.event === 'delta' && ++got === 2) s.close();
    });
    const events = await stream.done;
    expect(events.map((e) => e.event)).toEqual(['delta', 'delta']);
    await stub.waitForAbort(1); // the model call is dropped, not left running for nobody
    let rows = await t.recall.getSessionMessages('u', 'gone');
    while (rows.length < 2) {
      await new Promise((r) => setTimeout(r, 10));
      rows = await t.recall.getSessionMessages('u', 'gone');
    }
    expect(rows.map((r) => [r.role, r.content, r.error?.code])).toEqual([
      ['user', 'talk to me', undefined],
      ['assistant', 'one two ', 'turn_interrupted'],
    ]);
    expect(rows[1]!.error?.message).toBe('the turn was interrupted: the client disconnected');
  });

  it("cancels a stream still running at the server's stop deadline and stores it as interrupted", async () => {
    stub = await startChatStub({ toolCall: () => null, answer: () => 'slow and steady', stallAfter: 1 });
    t = await startTestServer({ llm: stubLlm(stub), stopTimeoutMs: 200 });
    let first: () => void = () => {};
    const sawDelta = new Promise<void>((r) => (first = r));
    const stream = await postSse(t.url, '/api/chat/stream', { user_id: 'u', session_id: 'stop', message: 'go' }, (e) => {
      if (e.event === 'delta') first();
    });
    await sawDelta;
    await t.server.close();
    const events = await stream.done;
    expect(events.map((e) => e.event)).toEqual(['delta', 'error']);
    expect(events[1]!.data).toEqual({ detail: 'the server is stopping: the turn was interrupted', code: 'turn_interrupted' });
    const rows = await t.recall.getSessionMessages('u', 'stop');
    expect(rows.map((r) => [r.role, r.content, r.error?.code])).toEqual([
      ['user', 'go', undefined],
      ['assistant', 'slow ', 'turn_interrupted'],
    ]);
  });
});
