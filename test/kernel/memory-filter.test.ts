import { describe, expect, it } from 'vitest';
import { createFilter, createKernel, memoryFilter, newContext, withConversationId } from '../../src/kernel/index.ts';
import { LlmError } from '../../src/llm/index.ts';
import { createInMemoryStore } from '../../src/memory/index.ts';
import type { Message } from '../../src/message.ts';
import { scriptedLlm, text, toolCalls } from '../support/scripted-llm.ts';

const u = (c: string): Message => ({ role: 'user', content: c });
const a = (c: string): Message => ({ role: 'assistant', content: c });
const inConversation = (id: string) => withConversationId(newContext(), id);

describe('memoryFilter (kernel-level memory)', () => {
  it('stores the delta, sends the full history, and stores the reply', async () => {
    const store = createInMemoryStore();
    const llm = scriptedLlm([text('hello Zhang San'), text('you are Zhang San')]);
    const kernel = createKernel({ llm, filters: [memoryFilter(store)] });
    const ctx = inConversation('s1');
    await kernel.invokeChat([u('我叫张三')], { context: ctx });
    await kernel.invokeChat([u('我叫什么？')], { context: ctx });
    expect(llm.calls[1]?.messages).toEqual([u('我叫张三'), a('hello Zhang San'), u('我叫什么？')]);
    expect(await store.get('s1')).toEqual([u('我叫张三'), a('hello Zhang San'), u('我叫什么？'), a('you are Zhang San')]);
  });

  it('REPLACES the messages with the history: passing history again does not duplicate it in the prompt', async () => {
    const store = createInMemoryStore();
    await store.add('s1', [u('old')]);
    const llm = scriptedLlm([text('ok')]);
    const kernel = createKernel({ llm, filters: [memoryFilter(store)] });
    await kernel.invokeChat([u('new')], { context: inConversation('s1') });
    expect(llm.calls[0]?.messages).toEqual([u('old'), u('new')]);
  });

  it('passes through and touches nothing without a conversation id', async () => {
    const store = createInMemoryStore();
    await store.add('other', [u('unrelated')]);
    const llm = scriptedLlm([text('ok')]);
    await createKernel({ llm, filters: [memoryFilter(store)] }).invokeChat([u('hi')]);
    expect(llm.calls[0]?.messages).toEqual([u('hi')]);
    expect(await store.get('other')).toEqual([u('unrelated')]);
  });

  it('stores nothing for a null reply', async () => {
    const store = createInMemoryStore();
    const kernel = createKernel({ llm: scriptedLlm([{ content: null }]), filters: [memoryFilter(store)] });
    await kernel.invokeChat([u('hi')], { context: inConversation('s1') });
    expect(await store.get('s1')).toEqual([u('hi')]);
  });

  it('stores tool calls instead of text when a reply has both', async () => {
    const store = createInMemoryStore();
    const reply = { ...toolCalls(['c1', 'f', {}]), content: 'thinking aloud' };
    const kernel = createKernel({ llm: scriptedLlm([reply]), filters: [memoryFilter(store)] });
    await kernel.invokeChat([u('hi')], { context: inConversation('s1') });
    expect(await store.get('s1')).toEqual([u('hi'), { role: 'assistant', content: null, tool_calls: reply.tool_calls }]);
  });

  it('keeps content_blocks in the stored reply', async () => {
    const store = createInMemoryStore();
    const blocks = [{ type: 'thinking', thinking: 'why', signature: 'sig' }];
    const kernel = createKernel({ llm: scriptedLlm([{ content: 'x', content_blocks: blocks }]), filters: [memoryFilter(store)] });
    await kernel.invokeChat([u('hi')], { context: inConversation('s1') });
    expect((await store.get('s1'))[1]).toEqual({ role: 'assistant', content: 'x', content_blocks: blocks });
  });

  it('never stores the system prompt, yet the LLM gets it in front of the history', async () => {
    const store = createInMemoryStore();
    const llm = scriptedLlm([text('ok')]);
    const kernel = createKernel({ llm, filters: [memoryFilter(store)] });
    await kernel.invokeChat([u('hi')], { context: inConversation('s1'), systemPrompts: ['you are terse'] });
    expect(llm.calls[0]?.messages).toEqual([{ role: 'system', content: 'you are terse' }, u('hi')]);
    expect(await store.get('s1')).toEqual([u('hi'), a('ok')]);
  });

  it('inner filters see the expanded history (memory is outermost)', async () => {
    const store = createInMemoryStore();
    await store.add('s1', [u('earlier')]);
    const seen: number[] = [];
    const spy = createFilter('spy', { aroundChat: (req, _s, next) => (seen.push(req.messages.length), next(req)) });
    const kernel = createKernel({ llm: scriptedLlm([text('ok')]), filters: [memoryFilter(store), spy] });
    await kernel.invokeChat([u('now')], { context: inConversation('s1') });
    expect(seen).toEqual([2]);
  });

  it('on an LLM error the delta is stored and no reply is', async () => {
    const store = createInMemoryStore();
    const kernel = createKernel({ llm: scriptedLlm([new LlmError('llm_unavailable', 'down')]), filters: [memoryFilter(store)] });
    await expect(kernel.invokeChat([u('hi')], { context: inConversation('s1') })).rejects.toMatchObject({ code: 'llm_unavailable' });
    expect(await store.get('s1')).toEqual([u('hi')]);
  });

  it('a retry filter outside memory stores the delta twice (the documented re-entry hazard)', async () => {
    const store = createInMemoryStore();
    const retryTwice = createFilter('retry', {
      async aroundChat(req, _s, next) {
        await next(req);
        return next(req);
      },
    });
    const kernel = createKernel({ llm: scriptedLlm(() => text('ok')), filters: [retryTwice, memoryFilter(store)] });
    await kernel.invokeChat([u('hi')], { context: inConversation('s1') });
    expect(await store.get('s1')).toEqual([u('hi'), a('ok'), u('hi'), a('ok')]);
  });
});
