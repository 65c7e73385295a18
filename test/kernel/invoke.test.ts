import { describe, expect, it } from 'vitest';
import {
  createKernel,
  defineTool,
  MaxToolIterationsError,
  memoryFilter,
  newContext,
  withConversationId,
  type Context,
  type Tool,
} from '../../src/kernel/index.ts';
import { LlmError } from '../../src/llm/index.ts';
import { createInMemoryStore } from '../../src/memory/index.ts';
import type { ChatMemory } from '../../src/memory/contract/chat-memory.ts';
import type { Message } from '../../src/message.ts';
import { scriptedLlm, text, toolCalls } from '../support/scripted-llm.ts';

const u = (c: string): Message => ({ role: 'user', content: c });

const add = defineTool<{ a: number; b: number }>({
  name: 'add',
  description: 'adds two numbers',
  parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } },
  execute: async ({ a, b }) => a + b,
});

/** Records the order tools start and finish in, to show they run one after another. */
function sequenceTool(name: string, log: string[]): Tool {
  return defineTool({
    name,
    description: name,
    parameters: {},
    async execute() {
      log.push(`${name}-start`);
      await new Promise((r) => setTimeout(r, 1));
      log.push(`${name}-end`);
      return name;
    },
  });
}

/** A store that remembers every conversation id ever written, to find the temporary one. */
function watchedStore(): { store: ChatMemory; ids: Set<string> } {
  const inner = createInMemoryStore();
  const ids = new Set<string>();
  return {
    ids,
    store: {
      get: (id) => inner.get(id),
      add: (id, ms) => (ids.add(id), inner.add(id, ms)),
      clear: (id) => inner.clear(id),
    },
  };
}

describe('kernel.invoke: the tool loop', () => {
  it('returns the answer directly when the model calls no tool', async () => {
    const r = await createKernel({ llm: scriptedLlm([text('42')]) }).invoke([u('q')]);
    expect(r.response.content).toBe('42');
    expect(r.iterations).toBe(1);
    expect(r.toolCallsMade).toEqual([]);
  });

  it('full mode (no memory): each call gets the whole exchange accumulated so far', async () => {
    const llm = scriptedLlm([toolCalls(['c1', 'add', { a: 1, b: 2 }]), text('3')]);
    const r = await createKernel({ llm, tools: [add] }).invoke([u('1+2?')]);
    expect(r.response.content).toBe('3');
    expect(llm.calls[1]?.messages).toEqual([
      u('1+2?'),
      { role: 'assistant', content: null, tool_calls: toolCalls(['c1', 'add', { a: 1, b: 2 }]).tool_calls },
      { role: 'tool', tool_call_id: 'c1', name: 'add', content: '3' },
    ]);
    expect(r.toolCallsMade).toEqual([{ id: 'c1', name: 'add', args: { a: 1, b: 2 }, result: '3', ok: true }]);
  });

  it('delta mode (memory filter): each call sends only what is new, and the store ends [user, assistant(tool_calls), tool..., assistant]', async () => {
    const store = createInMemoryStore();
    const llm = scriptedLlm([toolCalls(['c1', 'add', { a: 1, b: 2 }], ['c2', 'add', { a: 3, b: 4 }]), text('3 and 7')]);
    const kernel = createKernel({ llm, tools: [add], filters: [memoryFilter(store)] });
    await kernel.invoke([u('sums?')], { context: withConversationId(newContext(), 's1') });
    const assistantCalls = { role: 'assistant', content: null, tool_calls: toolCalls(['c1', 'add', { a: 1, b: 2 }], ['c2', 'add', { a: 3, b: 4 }]).tool_calls };
    const results = [
      { role: 'tool', tool_call_id: 'c1', name: 'add', content: '3' },
      { role: 'tool', tool_call_id: 'c2', name: 'add', content: '7' },
    ];
    expect(await store.get('s1')).toEqual([u('sums?'), assistantCalls, ...results, { role: 'assistant', content: '3 and 7' }]);
    // the second call was sent the full history, expanded by the memory filter from the delta
    expect(llm.calls[1]?.messages).toEqual([u('sums?'), assistantCalls, ...results]);
  });

  it('delta mode keeps memory across invokes with the same conversation id', async () => {
    const store = createInMemoryStore();
    const llm = scriptedLlm([text('hi Zhang San'), text('Zhang San')]);
    const kernel = createKernel({ llm, filters: [memoryFilter(store)] });
    const ctx = withConversationId(newContext(), 'session-1');
    await kernel.invoke([u('我叫张三')], { context: ctx });
    await kernel.invoke([u('我叫什么？')], { context: ctx });
    expect(llm.calls[1]?.messages.map((m) => m.content)).toEqual(['我叫张三', 'hi Zhang San', '我叫什么？']);
  });

  it('without a conversation id, delta mode uses a temporary conv_ id, cleared afterwards but still in the returned context', async () => {
    const { store, ids } = watchedStore();
    const llm = scriptedLlm([toolCalls(['c1', 'add', { a: 1, b: 1 }]), text('2')]);
    const r = await createKernel({ llm, tools: [add], filters: [memoryFilter(store)] }).invoke([u('1+1')]);
    const id = r.context.conversationId!;
    expect(id).toMatch(/^conv_[0-9a-f]{12}_[0-9a-f]{20}$/);
    expect([...ids]).toEqual([id]);
    expect(await store.get(id)).toEqual([]);
    expect(llm.calls[1]?.messages).toHaveLength(3); // the loop still had its context within the call
  });

  it('clears the temporary conversation even when the LLM fails', async () => {
    const { store, ids } = watchedStore();
    const llm = scriptedLlm([toolCalls(['c1', 'add', { a: 1, b: 1 }]), new LlmError('llm_unavailable', 'down')]);
    const kernel = createKernel({ llm, tools: [add], filters: [memoryFilter(store)] });
    await expect(kernel.invoke([u('1+1')])).rejects.toMatchObject({ code: 'llm_unavailable' });
    const [id] = [...ids];
    expect(id).toBeDefined();
    expect(await store.get(id!)).toEqual([]);
  });

  it('runs tools one after another, in call order', async () => {
    const log: string[] = [];
    const llm = scriptedLlm([toolCalls(['1', 'first', {}], ['2', 'second', {}], ['3', 'third', {}]), text('done')]);
    const kernel = createKernel({ llm, tools: ['first', 'second', 'third'].map((n) => sequenceTool(n, log)) });
    const r = await kernel.invoke([u('go')]);
    expect(log).toEqual(['first-start', 'first-end', 'second-start', 'second-end', 'third-start', 'third-end']);
    expect(r.toolCallsMade.map((c) => c.result)).toEqual(['first', 'second', 'third']);
  });

  it('turns a failing tool and an unknown tool into error content and goes on', async () => {
    const broken = defineTool({ name: 'broken', description: '', parameters: {}, execute: async () => Promise.reject(new Error('disk full')) });
    const llm = scriptedLlm([toolCalls(['c1', 'broken', {}], ['c2', 'missing', {}]), text('sorry')]);
    const r = await createKernel({ llm, tools: [broken] }).invoke([u('go')]);
    expect(r.response.content).toBe('sorry');
    const results = llm.calls[1]?.messages.filter((m) => m.role === 'tool').map((m) => JSON.parse(m.content as string));
    expect(results).toEqual([
      { error: { type: 'tool_error', message: 'disk full' } },
      { error: { type: 'tool_not_found', message: 'tool not found: missing' } },
    ]);
    expect(r.toolCallsMade.map((c) => c.ok)).toEqual([false, false]);
  });

  it('aborts on an LLM error', async () => {
    const llm = scriptedLlm([toolCalls(['c1', 'add', { a: 1, b: 1 }]), new LlmError('llm_auth', 'no')]);
    await expect(createKernel({ llm, tools: [add] }).invoke([u('x')])).rejects.toMatchObject({ code: 'llm_auth' });
    expect(llm.calls).toHaveLength(2);
  });

  it('reaching maxToolIterations runs the last batch of tools, then throws max_tool_iterations', async () => {
    let ran = 0;
    const count = defineTool({ name: 'count', description: '', parameters: {}, execute: async () => ++ran });
    const llm = scriptedLlm((_ms, i) => toolCalls([`c${i}`, 'count', {}]));
    const err = await createKernel({ llm, tools: [count] }).invoke([u('loop')], { maxToolIterations: 3 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MaxToolIterationsError);
    expect((err as MaxToolIterationsError).code).toBe('max_tool_iterations');
    expect(llm.calls).toHaveLength(3);
    expect(ran).toBe(3);
    expect((err as MaxToolIterationsError).toolCallsMade).toHaveLength(3);
  });

  it('in delta mode, the last batch of results at max_tool_iterations is not stored', async () => {
    const store = createInMemoryStore();
    const llm = scriptedLlm((_ms, i) => toolCalls([`c${i}`, 'add', { a: i, b: 0 }]));
    const kernel = createKernel({ llm, tools: [add], filters: [memoryFilter(store)] });
    await expect(kernel.invoke([u('x')], { context: withConversationId(newContext(), 's'), maxToolIterations: 1 })).rejects.toBeInstanceOf(
      MaxToolIterationsError,
    );
    expect((await store.get('s')).map((m) => m.role)).toEqual(['user', 'assistant']);
  });

  it('takes maxToolIterations from the call, then the kernel settings, then 10', async () => {
    const forever = () => scriptedLlm((_ms, i) => toolCalls([`c${i}`, 'add', { a: 0, b: 0 }]));
    const calls = async (settings: { maxToolIterations?: number }, opt?: number): Promise<number> => {
      const llm = forever();
      const kernel = createKernel({ llm, tools: [add], settings });
      await kernel.invoke([u('x')], opt === undefined ? {} : { maxToolIterations: opt }).catch(() => undefined);
      return llm.calls.length;
    };
    expect(await calls({ maxToolIterations: 4 }, 2)).toBe(2);
    expect(await calls({ maxToolIterations: 4 })).toBe(4);
    expect(await calls({})).toBe(10);
  });

  it('rejects a maxToolIterations that is not an integer >= 1', async () => {
    const kernel = createKernel({ llm: scriptedLlm([text('x')]) });
    await expect(kernel.invoke([u('x')], { maxToolIterations: 0 })).rejects.toMatchObject({ code: 'invalid_option' });
  });

  it('threads the context from tool filters into the next chat call', async () => {
    const llm = scriptedLlm([toolCalls(['c1', 'add', { a: 1, b: 1 }]), text('ok')]);
    const seen: Context[] = [];
    const kernel = createKernel({
      llm,
      tools: [add],
      filters: [
        {
          name: 'tool-counter',
          init: 0,
          hooks: {
            aroundTool: async (req, n, next) => [await next(req), (n as number) + 1],
            aroundChat: (req, _s, next) => (seen.push(req.context), next(req)),
          },
        },
      ],
    });
    const r = await kernel.invoke([u('x')]);
    expect(seen.map((c) => c.filterStates['tool-counter'])).toEqual([undefined, 1]);
    expect(r.context.filterStates['tool-counter']).toBe(1);
  });
});
