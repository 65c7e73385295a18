import { describe, expect, it } from 'vitest';
import {
  conversationId,
  createFilter,
  createKernel,
  defineTool,
  newContext,
  NoLlmServiceError,
  ToolNotFoundError,
  withConversationId,
} from '../../src/kernel/index.ts';
import { LlmError } from '../../src/llm/index.ts';
import type { Message } from '../../src/message.ts';
import { scriptedLlm, text } from '../support/scripted-llm.ts';

const hi: Message[] = [{ role: 'user', content: 'hi' }];

describe('kernel.invokeChat', () => {
  it('without an LLM service fails with no_llm_service', async () => {
    const err = await createKernel({}).invokeChat(hi).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NoLlmServiceError);
    expect((err as NoLlmServiceError).code).toBe('no_llm_service');
  });

  it('returns the response and the context', async () => {
    const ctx = withConversationId(newContext(), 'c-1');
    const { response, context } = await createKernel({ llm: scriptedLlm([text('hello')]) }).invokeChat(hi, { context: ctx });
    expect(response.content).toBe('hello');
    expect(conversationId(context)).toBe('c-1');
  });

  it('injects the system prompts innermost: user filters never see them, the LLM does', async () => {
    const seenByFilter: Message[][] = [];
    const spy = createFilter('spy', { aroundChat: (req, _s, next) => (seenByFilter.push([...req.messages]), next(req)) });
    const llm = scriptedLlm([text('ok')]);
    await createKernel({ llm, filters: [spy] }).invokeChat(hi, { systemPrompts: ['be brief', { role: 'system', content: 'in Chinese' }] });
    expect(seenByFilter[0]).toEqual(hi);
    expect(llm.calls[0]?.messages).toEqual([
      { role: 'system', content: 'be brief' },
      { role: 'system', content: 'in Chinese' },
      ...hi,
    ]);
  });

  it("advertises the kernel's tools to the LLM with tool choice auto", async () => {
    const clock = defineTool({ name: 'clock', description: 'now', parameters: { type: 'object' }, execute: async () => 'noon' });
    const llm = scriptedLlm([text('ok')]);
    await createKernel({ llm, tools: [clock] }).invokeChat(hi);
    expect(llm.calls[0]?.options?.tools).toEqual([{ name: 'clock', description: 'now', parameters: { type: 'object' } }]);
    expect(llm.calls[0]?.options?.toolChoice).toBe('auto');
  });

  it('turns a plain error from a custom LLM service into an llm_error', async () => {
    const err = await createKernel({ llm: scriptedLlm([new Error('socket closed')]) }).invokeChat(hi).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LlmError);
    expect((err as LlmError).code).toBe('llm_error');
  });

  it('passes an LlmError through with its own code', async () => {
    const llm = scriptedLlm([new LlmError('llm_rate_limited', 'slow down')]);
    const err = await createKernel({ llm }).invokeChat(hi).catch((e: unknown) => e);
    expect((err as LlmError).code).toBe('llm_rate_limited');
  });
});

describe('kernel.invokeTool', () => {
  it('runs the tool with its arguments and the context', async () => {
    const seen: unknown[] = [];
    const t = defineTool<{ x: number }>({
      name: 'double',
      description: 'doubles x',
      parameters: { type: 'object', properties: { x: { type: 'number' } } },
      execute: async (args, ctx) => (seen.push(conversationId(ctx)), args.x * 2),
    });
    const { result } = await createKernel({ tools: [t] }).invokeTool('double', { x: 21 }, withConversationId(newContext(), 'c-9'));
    expect(result).toBe(42);
    expect(seen).toEqual(['c-9']);
  });

  it('an unknown tool fails with tool_not_found', async () => {
    const err = await createKernel({}).invokeTool('nope', {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolNotFoundError);
    expect((err as ToolNotFoundError).code).toBe('tool_not_found');
    expect((err as ToolNotFoundError).toolName).toBe('nope');
  });

  it("a tool's error propagates from invokeTool", async () => {
    const t = defineTool({ name: 'bad', description: '', parameters: {}, execute: async () => Promise.reject(new Error('broken')) });
    await expect(createKernel({ tools: [t] }).invokeTool('bad', {})).rejects.toThrow('broken');
  });

  it('rejects two tools with the same name', () => {
    const t = defineTool({ name: 'x', description: '', parameters: {}, execute: async () => 1 });
    expect(() => createKernel({ tools: [t, t] })).toThrow(/two tools/);
  });
});
