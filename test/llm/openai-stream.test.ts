import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { fallbackLlm, LlmError, openAICompatible, type LlmStreamEvent } from '../../src/llm/index.ts';
import type { Message } from '../../src/message.ts';
import { startChatStub, type ChatStub } from '../support/chat-completions-stub.ts';

let stub: ChatStub | undefined;
afterEach(async () => {
  await stub?.close();
  stub = undefined;
});

const hi: Message[] = [{ role: 'user', content: 'say something nice' }];
const tools = [{ name: 'search_session', description: 's', parameters: { type: 'object', properties: {} } }];

async function collect(events: AsyncIterable<LlmStreamEvent>): Promise<LlmStreamEvent[]> {
  const out: LlmStreamEvent[] = [];
  for await (const e of events) out.push(e);
  return out;
}

describe('openAICompatible.stream over a real loopback streaming server', () => {
  it('yields the text as it is written, then done with the whole response and usage', async () => {
    stub = await startChatStub({ answer: () => 'one two three', toolCall: () => null });
    const llm = openAICompatible({ apiKey: 'k', baseURL: stub.baseURL, model: 'm' });
    const events = await collect(llm.stream!(hi, { tools }));
    expect(stub.requests[0]).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(events).toEqual([
      { type: 'text', delta: 'one ' },
      { type: 'text', delta: 'two ' },
      { type: 'text', delta: 'three' },
      {
        type: 'done',
        response: {
          content: 'one two three',
          finish_reason: 'stop',
          usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
        },
      },
    ]);
  });

  it('assembles tool calls whose id, name and arguments arrive over several chunks', async () => {
    stub = await startChatStub({ toolCall: () => ({ name: 'search_session', arguments: { keyword: '咖啡', limit: 5 } }) });
    const llm = openAICompatible({ apiKey: 'k', baseURL: stub.baseURL, model: 'm' });
    const events = await collect(llm.stream!(hi, { tools }));
    const call = { id: 'call_1', type: 'function', function: { name: 'search_session', arguments: '{"keyword":"咖啡","limit":5}' } };
    expect(events).toEqual([
      { type: 'tool_call', call },
      {
        type: 'done',
        response: {
          content: null,
          tool_calls: [call],
          finish_reason: 'tool_calls',
          usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
        },
      },
    ]);
  });

  it('assembles parallel tool calls by their index, each whole and in order', async () => {
    const chunks = [
      { tool_calls: [{ index: 0, id: 'a', type: 'function', function: { name: 'one', arguments: '{"x"' } }] },
      { tool_calls: [{ index: 0, function: { arguments: ':1}' } }] },
      { tool_calls: [{ index: 1, id: 'b', type: 'function', function: { name: 'two', arguments: '' } }] },
      { tool_calls: [{ index: 1, function: { arguments: '{}' } }] },
    ];
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const delta of chunks) res.write(`data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`);
      res.write(`data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] })}\n\n`);
      res.end('data: [DONE]\n\n');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const { port } = server.address() as AddressInfo;
      const llm = openAICompatible({ apiKey: 'k', baseURL: `http://127.0.0.1:${port}/v1`, model: 'm' });
      const events = await collect(llm.stream!(hi, { tools }));
      const one = { id: 'a', type: 'function', function: { name: 'one', arguments: '{"x":1}' } };
      const two = { id: 'b', type: 'function', function: { name: 'two', arguments: '{}' } };
      expect(events).toEqual([
        { type: 'tool_call', call: one },
        { type: 'tool_call', call: two },
        { type: 'done', response: { content: null, tool_calls: [one, two], finish_reason: 'tool_calls' } },
      ]);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  it('cancels the request when the signal fires mid-stream, failing with llm_aborted', async () => {
    stub = await startChatStub({ answer: () => 'a b c d e f', toolCall: () => null, stallAfter: 2 });
    const llm = openAICompatible({ apiKey: 'k', baseURL: stub.baseURL, model: 'm', maxRetries: 0 });
    const controller = new AbortController();
    const seen: string[] = [];
    const err = await (async () => {
      for await (const e of llm.stream!(hi, { tools, signal: controller.signal })) {
        if (e.type === 'text') seen.push(e.delta);
        if (seen.length === 2) controller.abort('enough');
      }
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LlmError);
    expect((err as LlmError).code).toBe('llm_aborted');
    expect(seen).toEqual(['a ', 'b ']);
    await stub.waitForAbort(1);
  });

  it('cancels the request when the reader stops early', async () => {
    stub = await startChatStub({ answer: () => 'a b c d', toolCall: () => null, stallAfter: 1 });
    const llm = openAICompatible({ apiKey: 'k', baseURL: stub.baseURL, model: 'm' });
    for await (const e of llm.stream!(hi, { tools })) if (e.type === 'text') break;
    await stub.waitForAbort(1);
    expect(stub.aborted).toBe(1);
  });

  it('maps an error status to the same LlmError as chat', async () => {
    stub = await startChatStub();
    const llm = openAICompatible({ apiKey: 'k', baseURL: stub.baseURL, model: 'm', maxRetries: 0 });
    const err = await collect(llm.stream!([{ role: 'user', content: '#fail' }], { tools })).catch((e: unknown) => e);
    expect((err as LlmError).code).toBe('llm_bad_request');
  });
});

describe('fallbackLlm.stream', () => {
  it('streams the offline reply in a few pieces that join to what chat answers', async () => {
    const llm = fallbackLlm();
    const events = await collect(llm.stream!(hi));
    const whole = await llm.chat(hi);
    const deltas = events.filter((e) => e.type === 'text').map((e) => (e.type === 'text' ? e.delta : ''));
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.length).toBeLessThanOrEqual(4);
    expect(deltas.join('')).toBe(whole.content);
    expect(events.at(-1)).toEqual({ type: 'done', response: whole });
  });
});
