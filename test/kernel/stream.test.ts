import { describe, expect, it } from 'vitest';
import { createAgent } from '../../src/agent/index.ts';
import { createKernel, defineTool, memoryFilter, newContext, withConversationId, type StreamEvent } from '../../src/kernel/index.ts';
import { LlmError } from '../../src/llm/index.ts';
import type { LlmResponse } from '../../src/llm/index.ts';
import { createInMemoryStore } from '../../src/memory/index.ts';
import type { Message } from '../../src/message.ts';
import { scriptedLlm, streamingLlm, text, toolCalls } from '../support/scripted-llm.ts';

const u = (c: string): Message => ({ role: 'user', content: c });

const echo = defineTool<{ v: string }>({
  name: 'echo',
  description: 'echoes v',
  parameters: { type: 'object', properties: { v: { type: 'string' } } },
  execute: async ({ v }) => `echo:${v}`,
});

async function collect<R>(events: AsyncIterable<StreamEvent<R>>): Promise<StreamEvent<R>[]> {
  const out: StreamEvent<R>[] = [];
  for await (const e of events) out.push(e);
  return out;
}

/** Events without the `done` payload, for order checks. */
function shape<R>(events: StreamEvent<R>[]): unknown[] {
  return events.map((e) => (e.type === 'done' ? 'done' : e.type === 'text' ? `text:${e.delta}` : e.type === 'tool_call' ? `call:${e.call.name}` : `result:${e.output}`));
}

const withUsage = (r: LlmResponse, n: number): LlmResponse => ({
  ...r,
  usage: { prompt_tokens: n, completion_tokens: n, total_tokens: 2 * n },
});

describe('kernel.stream: the tool loop, streamed', () => {
  it('yields text deltas, the tool call and its result, more deltas, then done with the summed usage', async () => {
    const llm = streamingLlm([withUsage(toolCalls(['c1', 'echo', { v: 'x' }]), 1), withUsage(text('all done now'), 2)]);
    const events = await collect(createKernel({ llm, tools: [echo] }).stream([u('go')]));
    expect(shape(events)).toEqual(['call:echo', 'result:echo:x', 'text:all ', 'text:done ', 'text:now', 'done']);
    const done = events.at(-1)!;
    expect(done.type === 'done' && done.response.content).toBe('all done now');
    expect(done.type === 'done' && done.usage).toEqual({ prompt_tokens: 3, completion_tokens: 3, total_tokens: 6 });
    expect(done.type === 'done' && done.result.iterations).toBe(2);
    expect(done.type === 'done' && done.result.toolCallsMade.map((c) => c.result)).toEqual(['echo:x']);
    const call = events[0]!;
    expect(call.type === 'tool_call' && call.call).toEqual({ id: 'c1', name: 'echo', args: { v: 'x' } });
    expect(events[1]).toEqual({ type: 'tool_result', callId: 'c1', name: 'echo', output: 'echo:x', ok: true });
  });

  it('streams a service without stream() as one delta from chat, and reports no usage when none came', async () => {
    const events = await collect(createKernel({ llm: scriptedLlm([text('whole reply')]) }).stream([u('q')]));
    expect(shape(events)).toEqual(['text:whole reply', 'done']);
    expect(events.at(-1)).not.toHaveProperty('usage');
  });

  it('stores exactly what invoke stores, through the memory filter', async () => {
    const script = () => [toolCalls(['c1', 'echo', { v: 'y' }]), text('answer')];
    const streamed = createInMemoryStore();
    const invoked = createInMemoryStore();
    const ctx = withConversationId(newContext(), 'conv');
    await collect(createKernel({ llm: streamingLlm(script()), tools: [echo], filters: [memoryFilter(streamed)] }).stream([u('go')], { context: ctx }));
    await createKernel({ llm: scriptedLlm(script()), tools: [echo], filters: [memoryFilter(invoked)] }).invoke([u('go')], { context: ctx });
    expect(await streamed.get('conv')).toEqual(await invoked.get('conv'));
    expect((await streamed.get('conv')).map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
  });

  it('throws the LLM error from the iteration, after the events already made, with no done', async () => {
    const llm = streamingLlm([toolCalls(['c1', 'echo', { v: 'x' }]), new LlmError('llm_unavailable', 'down')]);
    const seen: string[] = [];
    const err = await (async () => {
      for await (const e of createKernel({ llm, tools: [echo] }).stream([u('go')])) seen.push(e.type);
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LlmError);
    expect(seen).toEqual(['tool_call', 'tool_result']);
  });

  it('aborts the model call when the consumer stops reading, and stores no reply', async () => {
    const store = createInMemoryStore();
    let sawAbort = false;
    const llm = streamingLlm([text('one two three four five six')]);
    const inner = llm.stream!.bind(llm);
    llm.stream = (messages, options) => {
      options?.signal?.addEventListener('abort', () => (sawAbort = true));
      return inner(messages, options);
    };
    const kernel = createKernel({ llm, filters: [memoryFilter(store)] });
    const ctx = withConversationId(newContext(), 'cut');
    for await (const e of kernel.stream([u('talk')], { context: ctx })) {
      if (e.type === 'text') break;
    }
    expect(sawAbort).toBe(true);
    expect(await store.get('cut')).toEqual([u('talk')]);
  });

  it('starts nothing until read', async () => {
    const llm = scriptedLlm([text('x')]);
    createKernel({ llm }).stream([u('q')]);
    await new Promise((r) => setTimeout(r, 5));
    expect(llm.calls).toHaveLength(0);
  });
});

describe('agent.stream: the agent run, streamed', () => {
  it('yields the run as events and stores the same history as run()', async () => {
    const script = () => [toolCalls(['c1', 'echo', { v: 'a' }], ['c2', 'echo', { v: 'b' }]), text('both echoed')];
    const streamedStore = createInMemoryStore();
    const runStore = createInMemoryStore();
    const streamed = createAgent({ llm: streamingLlm(script()), tools: [echo], memory: { store: streamedStore }, conversationId: 'c' });
    const ran = createAgent({ llm: scriptedLlm(script()), tools: [echo], memory: { store: runStore }, conversationId: 'c' });
    const events = await collect(streamed.stream('go'));
    const result = await ran.run('go');
    expect(events.filter((e) => e.type === 'tool_call')).toHaveLength(2);
    expect(events.filter((e) => e.type === 'tool_result').map((e) => e.type === 'tool_result' && e.output).sort()).toEqual(['echo:a', 'echo:b']);
    expect(events.filter((e) => e.type === 'text').map((e) => e.type === 'text' && e.delta).join('')).toBe('both echoed');
    const done = events.at(-1)!;
    expect(done.type).toBe('done');
    expect(done.type === 'done' && done.result.messages).toEqual(result.messages);
    expect(await streamedStore.get('c')).toEqual(await runStore.get('c'));
  });

  it('cut short, keeps the user message, drops the reply being written and marks the turn failed', async () => {
    const store = createInMemoryStore();
    const agent = createAgent({ llm: streamingLlm([text('a long reply in many words')]), memory: { store }, conversationId: 'c' });
    const got: string[] = [];
    for await (const e of agent.stream('hello')) {
      if (e.type === 'text') got.push(e.delta);
      if (got.length === 2) break;
    }
    expect(got).toEqual(['a ', 'long ']);
    // The failed-turn rule: the user message stays and an error marker follows it.
    expect(await store.get('c')).toEqual([u('hello'), { role: 'assistant', content: '', error: { code: 'llm_aborted', message: 'the model call was cancelled' } }]);
    // The agent is usable again at once: the cut run has settled.
    const next = createAgent({ llm: streamingLlm([text('fine')]), memory: { store }, conversationId: 'c' });
    expect((await next.run('again')).response.content).toBe('fine');
  });
});
