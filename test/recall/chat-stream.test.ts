import { afterEach, describe, expect, it } from 'vitest';
import { openAICompatible } from '../../src/llm/index.ts';
import type { ChatStreamEvent } from '../../src/recall/index.ts';
import { startChatStub, type ChatStub } from '../support/chat-completions-stub.ts';
import { openRecall, type RecallFixture } from '../support/recall-fixture.ts';

let fx: RecallFixture | undefined;
let stub: ChatStub | undefined;
afterEach(async () => {
  await fx?.close();
  await stub?.close();
  fx = undefined;
  stub = undefined;
});

const U = 'demo-user';

async function collect(events: AsyncIterable<ChatStreamEvent>): Promise<ChatStreamEvent[]> {
  const out: ChatStreamEvent[] = [];
  for await (const e of events) out.push(e);
  return out;
}

const deltas = (events: ChatStreamEvent[]) => events.flatMap((e) => (e.type === 'delta' ? [e.text] : []));

/** A row without its clock-dependent field, to compare two sessions' rows. */
const plain = (rows: { role: string; content: string; messageId: number; toolCalls: unknown[]; error?: unknown }[]) =>
  rows.map(({ role, content, messageId, toolCalls, error }) => ({ role, content, messageId, toolCalls, error }));

describe('recall.chatStream offline', () => {
  it('streams the offline reply in pieces, ends with what chat returns, and stores the same rows as chat', async () => {
    fx = openRecall();
    const events = await collect(fx.recall.chatStream({ userId: U, sessionId: 'streamed', message: 'hello there' }));
    const whole = await fx.recall.chat({ userId: U, sessionId: 'plain', message: 'hello there' });
    expect(deltas(events).length).toBeGreaterThan(1);
    expect(deltas(events).join('')).toBe(whole.reply);
    expect(events.at(-1)).toEqual({ type: 'done', result: whole });
    expect(plain(await fx.recall.getSessionMessages(U, 'streamed'))).toEqual(plain(await fx.recall.getSessionMessages(U, 'plain')));
    const log = await fx.recall.dialogueLog(U, 'streamed');
    expect(log.map((r) => r.assistantReply)).toEqual([whole.reply]);
  });

  it('a stream the reader stops is stored as interrupted, with the text streamed so far', async () => {
    fx = openRecall();
    const got: string[] = [];
    for await (const e of fx.recall.chatStream({ userId: U, sessionId: 's', message: 'a message long enough' })) {
      if (e.type === 'delta') got.push(e.text);
      if (got.length === 2) break;
    }
    const rows = await fx.recall.getSessionMessages(U, 's');
    expect(rows.map((r) => [r.role, r.content, r.error?.code])).toEqual([
      ['user', 'a message long enough', undefined],
      ['assistant', got.join(''), 'turn_interrupted'],
    ]);
    expect(rows[1]!.error?.message).toBe('the turn was interrupted: the stream was closed');
    const [daily] = (await fx.recall.dailyMessages(U)).filter((r) => r.role === 'assistant');
    expect(daily?.content).toBe(got.join(''));
  });

  it('bad input throws from the first read and stores nothing', async () => {
    fx = openRecall();
    const err = await collect(fx.recall.chatStream({ userId: ' padded ', sessionId: 's', message: 'x' })).catch((e: unknown) => e);
    expect((err as { code?: string }).code).toBe('invalid_id');
    expect(await fx.recall.getSessionMessages(U, 's')).toEqual([]);
  });
});

describe('recall.chatStream with a streaming model', () => {
  it('streams the tool call, its result and the reply, and stores what chat stores', async () => {
    stub = await startChatStub({ answer: (text, n) => `found it for ${text} after ${n} lookups` });
    fx = openRecall({ llm: openAICompatible({ apiKey: 'k', baseURL: stub.baseURL, model: 'm' }) });
    const events = await collect(fx.recall.chatStream({ userId: U, sessionId: 's', message: 'coffee please' }));
    expect(events.map((e) => e.type)).toEqual(['tool_call', 'tool_result', ...deltas(events).map(() => 'delta'), 'done']);
    expect(events[0]).toEqual({ type: 'tool_call', name: 'search_session', input: '{"keyword": "coffee"}' });
    const done = events.at(-1)!;
    if (done.type !== 'done') throw new Error('no done');
    expect(deltas(events).join('')).toBe(done.result.reply);
    expect(done.result.reply).toBe('found it for coffee please after 1 lookups');
    expect(done.result.toolCalls).toEqual([
      { name: 'search_session', input: '{"keyword": "coffee"}', output: (events[1] as { output: string }).output },
    ]);
    const rows = await fx.recall.getSessionMessages(U, 's');
    expect(rows.map((r) => [r.role, r.content])).toEqual([
      ['user', 'coffee please'],
      ['assistant', done.result.reply],
    ]);
    expect(rows[1]!.toolCalls).toEqual(done.result.toolCalls);
  });

  it("a cut stream cancels the model's request and stores the partial reply marked interrupted", async () => {
    stub = await startChatStub({ toolCall: () => null, answer: () => 'one two three four five', stallAfter: 2 });
    fx = openRecall({ llm: openAICompatible({ apiKey: 'k', baseURL: stub.baseURL, model: 'm', maxRetries: 0 }) });
    const controller = new AbortController();
    const got: string[] = [];
    const err = await (async () => {
      for await (const e of fx!.recall.chatStream({ userId: U, sessionId: 's', message: 'talk', signal: controller.signal })) {
        if (e.type === 'delta') got.push(e.text);
        if (got.length === 2) controller.abort('the client disconnected');
      }
    })().catch((e: unknown) => e);
    expect((err as { code?: string }).code).toBe('turn_interrupted');
    await stub.waitForAbort(1);
    const rows = await fx.recall.getSessionMessages(U, 's');
    expect(rows.map((r) => [r.role, r.content, r.error?.code])).toEqual([
      ['user', 'talk', undefined],
      ['assistant', 'one two ', 'turn_interrupted'],
    ]);
  });
});
