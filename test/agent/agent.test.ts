import { describe, expect, it } from 'vitest';
import { createAgent } from '../../src/agent/index.ts';
import { conversationId, createKernel, defineTool, MaxToolCallsError, MaxToolIterationsError, type Tool } from '../../src/kernel/index.ts';
import { LlmError } from '../../src/llm/index.ts';
import { createInMemoryStore } from '../../src/memory/index.ts';
import type { Message } from '../../src/message.ts';
import { defaultProvider, type MemoryProvider } from '../../src/provider/index.ts';
import { scriptedLlm, text, toolCalls } from '../support/scripted-llm.ts';

const u = (c: string): Message => ({ role: 'user', content: c });
const a = (c: string): Message => ({ role: 'assistant', content: c });

const echo = defineTool<{ v: string }>({
  name: 'echo',
  description: 'echoes v',
  parameters: { type: 'object', properties: { v: { type: 'string' } } },
  execute: async ({ v }) => `echo:${v}`,
});

describe('agent.run: memory orchestration', () => {
  it('loads the history BEFORE storing the new user message, so the model sees it once', async () => {
    const store = createInMemoryStore();
    const llm = scriptedLlm([text('a1'), text('a2')]);
    const agent = createAgent({ llm, memory: { store }, conversationId: 'c' });
    await agent.run('u1');
    expect(llm.calls[0]?.messages).toEqual([u('u1')]);
    await agent.run('u2');
    expect(llm.calls[1]?.messages).toEqual([u('u1'), a('a1'), u('u2')]);
    expect(await store.get('c')).toEqual([u('u1'), a('a1'), u('u2'), a('a2')]);
  });

  it('stores the assistant tool-call turn, then the tool results in call order, then the answer', async () => {
    const store = createInMemoryStore();
    const calls = toolCalls(['c1', 'echo', { v: 'x' }], ['c2', 'echo', { v: 'y' }]);
    const agent = createAgent({ llm: scriptedLlm([calls, text('done')]), tools: [echo], memory: { store }, conversationId: 'c' });
    const r = await agent.run('go');
    const expected: Message[] = [
      u('go'),
      { role: 'assistant', content: null, tool_calls: calls.tool_calls! },
      { role: 'tool', tool_call_id: 'c1', content: 'echo:x' },
      { role: 'tool', tool_call_id: 'c2', content: 'echo:y' },
      a('done'),
    ];
    expect(await store.get('c')).toEqual(expected);
    expect(r.messages).toEqual(expected);
    expect(r.iterations).toBe(2);
    expect(r.toolCallsMade.map((t) => [t.id, t.result])).toEqual([['c1', 'echo:x'], ['c2', 'echo:y']]);
    expect(r.response.content).toBe('done');
  });

  it('applies the window only to what is sent; the store keeps everything', async () => {
    const store = createInMemoryStore();
    await store.add('c', [u('u1'), a('a1'), u('u2'), a('a2')]);
    const llm = scriptedLlm([text('a3')]);
    const agent = createAgent({ llm, memory: defaultProvider(store, 2), conversationId: 'c' });
    await agent.run('u3');
    expect(llm.calls[0]?.messages).toEqual([a('a2'), u('u3')]);
    expect(await store.get('c')).toHaveLength(6);
  });

  it('re-applies prepare on every LLM call of a run, to the whole run so far', async () => {
    const store = createInMemoryStore();
    const llm = scriptedLlm([toolCalls(['c1', 'echo', { v: 'x' }]), text('done')]);
    const agent = createAgent({ llm, tools: [echo], memory: defaultProvider(store, 2), conversationId: 'c' });
    await agent.run('go');
    // [user, assistant(tool_calls), tool] windowed to 2: the call turn and its result
    expect(llm.calls[1]?.messages.map((m) => m.role)).toEqual(['assistant', 'tool']);
  });

  it('injects the system prompt first on every call and never stores it', async () => {
    const store = createInMemoryStore();
    const llm = scriptedLlm([text('ok')]);
    const agent = createAgent({ llm, systemPrompt: 'You remember things.', memory: { store }, conversationId: 'c' });
    await agent.run('hi');
    expect(llm.calls[0]?.messages).toEqual([{ role: 'system', content: 'You remember things.' }, u('hi')]);
    expect(await store.get('c')).toEqual([u('hi'), a('ok')]);
  });

  it("the agent's kernel has no memory filter (nothing is stored twice)", () => {
    const agent = createAgent({ llm: scriptedLlm([]), memory: { store: createInMemoryStore() } });
    expect(agent.kernel.filters).toEqual([]);
  });

  it('heals tool calls left without results by an abandoned run before the new user message', async () => {
    const store = createInMemoryStore();
    const dangling = toolCalls(['c1', 'echo', { v: 'x' }], ['c2', 'echo', { v: 'y' }]);
    await store.add('c', [u('earlier'), { role: 'assistant', content: null, tool_calls: dangling.tool_calls! }, { role: 'tool', tool_call_id: 'c1', content: 'echo:x' }]);
    const llm = scriptedLlm([text('ok')]);
    await createAgent({ llm, memory: { store }, conversationId: 'c' }).run('again');
    const stored = await store.get('c');
    expect(stored.slice(3)).toEqual([
      { role: 'tool', tool_call_id: 'c2', content: JSON.stringify({ error: { type: 'cancelled', message: 'the run that made this tool call ended before its result was stored' } }) },
      u('again'),
      a('ok'),
    ]);
    expect(llm.calls[0]?.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'user']);
  });

  it('gives tools the conversation id in their context', async () => {
    const seen: (string | undefined)[] = [];
    const probe = defineTool({ name: 'probe', description: '', parameters: {}, execute: async (_a, ctx) => (seen.push(conversationId(ctx)), 'ok') });
    const agent = createAgent({ llm: scriptedLlm([toolCalls(['c1', 'probe', {}]), text('done')]), tools: [probe], memory: false, conversationId: 'conv-7' });
    await agent.run('go');
    expect(seen).toEqual(['conv-7']);
  });

  it('serializes runs of one agent: a second concurrent run sees the first one’s turn', async () => {
    const store = createInMemoryStore();
    const llm = scriptedLlm([text('a1'), text('a2')]);
    const agent = createAgent({ llm, memory: { store }, conversationId: 'c' });
    await Promise.all([agent.run('u1'), agent.run('u2')]);
    expect(llm.calls[1]?.messages).toEqual([u('u1'), a('a1'), u('u2')]);
  });
});

describe('agent.run: tools', () => {
  /** Two tools that each wait for the other to start: they finish only if run concurrently. */
  function rendezvous(): Tool[] {
    let release: () => void = () => undefined;
    const bothStarted = new Promise<void>((r) => (release = r));
    let started = 0;
    const make = (name: string, delay: number): Tool =>
      defineTool({
        name,
        description: name,
        parameters: {},
        async execute() {
          if (++started === 2) release();
          const gone = await Promise.race([bothStarted.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 5_000))]);
          await new Promise((r) => setTimeout(r, delay));
          return `${name}:${gone ? 'together' : 'alone'}`;
        },
      });
    return [make('slow', 20), make('fast', 0)];
  }

  it('runs one turn’s tool calls concurrently by default, with results in call order', async () => {
    const llm = scriptedLlm([toolCalls(['c1', 'slow', {}], ['c2', 'fast', {}]), text('done')]);
    const r = await createAgent({ llm, tools: rendezvous(), memory: false }).run('go');
    expect(r.toolCallsMade.map((t) => t.result)).toEqual(['slow:together', 'fast:together']);
    expect(llm.calls[1]?.messages.filter((m) => m.role === 'tool').map((m) => m.tool_call_id)).toEqual(['c1', 'c2']);
  });

  it('runs them one after another with parallelTools: false', async () => {
    const log: string[] = [];
    const step = (name: string): Tool =>
      defineTool({ name, description: '', parameters: {}, execute: async () => (log.push(`${name}-start`), await new Promise((r) => setTimeout(r, 1)), log.push(`${name}-end`), name) });
    const llm = scriptedLlm([toolCalls(['c1', 'p', {}], ['c2', 'q', {}]), text('done')]);
    await createAgent({ llm, tools: [step('p'), step('q')], memory: false, parallelTools: false }).run('go');
    expect(log).toEqual(['p-start', 'p-end', 'q-start', 'q-end']);
  });

  it('turns tool failures into error content and goes on', async () => {
    const broken = defineTool({ name: 'broken', description: '', parameters: {}, execute: async () => Promise.reject(new Error('nope')) });
    const llm = scriptedLlm([toolCalls(['c1', 'broken', {}], ['c2', 'ghost', {}]), text('sorry')]);
    const r = await createAgent({ llm, tools: [broken], memory: false }).run('go');
    expect(r.response.content).toBe('sorry');
    expect(r.toolCallsMade.map((t) => JSON.parse(t.result).error.type)).toEqual(['tool_error', 'tool_not_found']);
  });

  it('stops at maxToolIterations (default 10) after running and storing the last batch', async () => {
    const store = createInMemoryStore();
    const llm = scriptedLlm((_ms, i) => toolCalls([`c${i}`, 'echo', { v: String(i) }]));
    const agent = createAgent({ llm, tools: [echo], memory: { store }, conversationId: 'c' });
    const err = await agent.run('loop').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MaxToolIterationsError);
    expect(llm.calls).toHaveLength(10);
    const stored = await store.get('c');
    expect(stored.at(-2)).toEqual({ role: 'tool', tool_call_id: 'c9', content: 'echo:9' });
    expect(stored.at(-1)).toMatchObject({ role: 'assistant', content: '', error: { code: 'max_tool_iterations' } });
  });

  it('stops at maxToolIterations by the same rule as kernel.invoke: the same LLM calls, the same tools run, the same error', async () => {
    const outcome = async (run: (llm: ReturnType<typeof scriptedLlm>, tool: Tool) => Promise<unknown>) => {
      let ran = 0;
      const count = defineTool({ name: 'count', description: '', parameters: {}, execute: async () => ++ran });
      const llm = scriptedLlm((_ms, i) => toolCalls([`c${i}`, 'count', {}]));
      const err = (await run(llm, count).catch((e: unknown) => e)) as MaxToolIterationsError;
      return { code: err.code, calls: llm.calls.length, ran, made: err.toolCallsMade.map((t) => t.id) };
    };
    for (const limit of [1, 2, 4]) {
      const viaAgent = await outcome((llm, tool) => createAgent({ llm, tools: [tool], memory: false, maxToolIterations: limit }).run('x'));
      const viaKernel = await outcome((llm, tool) => createKernel({ llm, tools: [tool] }).invoke([u('x')], { maxToolIterations: limit }));
      expect(viaAgent).toEqual(viaKernel);
      expect(viaAgent).toMatchObject({ code: 'max_tool_iterations', calls: limit, ran: limit });
    }
  });

  it('honours a custom maxToolIterations', async () => {
    const llm = scriptedLlm((_ms, i) => toolCalls([`c${i}`, 'echo', { v: 'x' }]));
    await expect(createAgent({ llm, tools: [echo], memory: false, maxToolIterations: 2 }).run('x')).rejects.toMatchObject({
      code: 'max_tool_iterations',
    });
    expect(llm.calls).toHaveLength(2);
  });

  it('stops with max_tool_calls once the budget is spent, before calling the model again', async () => {
    const llm = scriptedLlm((_ms, i) => toolCalls([`a${i}`, 'echo', { v: 'x' }], [`b${i}`, 'echo', { v: 'y' }]));
    const err = await createAgent({ llm, tools: [echo], memory: false, maxToolCalls: 3 }).run('x').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MaxToolCallsError);
    expect((err as MaxToolCallsError).toolCallsMade).toHaveLength(4);
    expect(llm.calls).toHaveLength(2);
  });

  it('aborts on an LLM error; the user message stays stored, an error marker after it (Mnemo’s sentence, not the provider’s)', async () => {
    const store = createInMemoryStore();
    const agent = createAgent({ llm: scriptedLlm([new LlmError('llm_unavailable', 'down')]), memory: { store }, conversationId: 'c' });
    await expect(agent.run('hi')).rejects.toMatchObject({ code: 'llm_unavailable' });
    expect(await store.get('c')).toEqual([u('hi'), { role: 'assistant', content: '', error: { code: 'llm_unavailable', message: 'the model provider is unavailable; try again later' } }]);
    expect(await agent.lastResponse()).toBeUndefined();
  });

  it('never sends a failed turn again: after two failures the model sees one user message, not three', async () => {
    const store = createInMemoryStore();
    const down = new LlmError('llm_unavailable', 'down');
    const llm = scriptedLlm([down, down, text('ok'), text('ok2')]);
    const agent = createAgent({ llm, memory: { store }, conversationId: 'c' });
    await expect(agent.run('q')).rejects.toMatchObject({ code: 'llm_unavailable' });
    await expect(agent.run('q')).rejects.toMatchObject({ code: 'llm_unavailable' });
    await agent.run('q');
    expect(llm.calls[2]?.messages).toEqual([u('q')]);
    await agent.run('next');
    expect(llm.calls[3]?.messages).toEqual([u('q'), a('ok'), u('next')]);
    expect((await store.get('c')).map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user', 'assistant', 'user', 'assistant']);
  });

  it('closes a failed turn whole: tool calls it made are answered, then the marker; none of it is sent again', async () => {
    const store = createInMemoryStore();
    const llm = scriptedLlm((_ms, i) => (i < 2 ? toolCalls([`c${i}`, 'echo', { v: 'x' }]) : text('fine')));
    const agent = createAgent({ llm, tools: [echo], memory: { store }, conversationId: 'c', maxToolIterations: 2 });
    await expect(agent.run('loop')).rejects.toMatchObject({ code: 'max_tool_iterations' });
    const stored = await store.get('c');
    expect(stored.at(-1)).toMatchObject({ role: 'assistant', content: '', error: { code: 'max_tool_iterations' } });
    await agent.run('again');
    expect(llm.calls.at(-1)?.messages).toEqual([u('again')]);
  });

  it('is not created without an LLM service (no_llm_service)', () => {
    expect(() => createAgent({ llm: undefined as never, memory: false })).toThrow(expect.objectContaining({ code: 'no_llm_service' }));
  });

  it('rejects bad loop limits at creation', () => {
    const llm = scriptedLlm([]);
    expect(() => createAgent({ llm, memory: false, maxToolIterations: 0 })).toThrow(/maxToolIterations/);
    expect(() => createAgent({ llm, memory: false, maxToolCalls: 0 })).toThrow(/maxToolCalls/);
    expect(() => createAgent({ llm, memory: false, conversationId: '' })).toThrow(/conversationId/);
  });
});

describe('agent memory helpers', () => {
  it('messages, addMessage, clearMessages and lastResponse work on the stored history', async () => {
    const store = createInMemoryStore();
    const llm = scriptedLlm([toolCalls(['c1', 'echo', { v: 'x' }]), text('final'), toolCalls(['c2', 'echo', { v: 'y' }]), text('again')]);
    const agent = createAgent({ llm, tools: [echo], memory: { store }, conversationId: 'c' });
    await agent.run('go');
    expect((await agent.lastResponse())?.content).toBe('final');
    await agent.addMessage(a('added by hand'));
    expect((await agent.messages()).at(-1)).toEqual(a('added by hand'));
    expect((await agent.lastResponse())?.content).toBe('added by hand');
    await agent.clearMessages();
    expect(await agent.messages()).toEqual([]);
    expect(await agent.lastResponse()).toBeUndefined();
  });

  it('lastResponse skips tool-call-only assistant turns', async () => {
    const store = createInMemoryStore();
    await store.add('c', [u('q'), a('text'), { role: 'assistant', content: null, tool_calls: toolCalls(['c1', 'echo', {}]).tool_calls! }]);
    const agent = createAgent({ llm: scriptedLlm([]), memory: { store }, conversationId: 'c' });
    expect(await agent.lastResponse()).toEqual(a('text'));
  });

  it('has a conv_ id by default and keeps a given one', () => {
    expect(createAgent({ llm: scriptedLlm([]), memory: false }).conversationId).toMatch(/^conv_[0-9a-f]{12}_[0-9a-f]{20}$/);
    expect(createAgent({ llm: scriptedLlm([]), memory: false, conversationId: 'mine' }).conversationId).toBe('mine');
  });
});
