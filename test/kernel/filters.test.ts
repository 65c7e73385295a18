import { describe, expect, it } from 'vitest';
import { createFilter, createKernel, newContext, runChain, type ChatResponse, type Filter } from '../../src/kernel/index.ts';
import type { Message } from '../../src/message.ts';
import { scriptedLlm, text } from '../support/scripted-llm.ts';

const hi: Message[] = [{ role: 'user', content: 'hi' }];

function tracer(name: string, trace: string[]): Filter {
  return createFilter(name, {
    async aroundChat(req, _s, next) {
      trace.push(`${name}-before`);
      const res = await next(req);
      trace.push(`${name}-after`);
      return res;
    },
  });
}

describe('filter chain (onion)', () => {
  it('runs the first listed filter outermost: A-before, B-before, terminal, B-after, A-after', async () => {
    const trace: string[] = [];
    const llm = scriptedLlm(() => (trace.push('terminal'), text('ok')));
    const kernel = createKernel({ llm, filters: [tracer('A', trace), tracer('B', trace)] });
    await kernel.invokeChat(hi);
    expect(trace).toEqual(['A-before', 'B-before', 'terminal', 'B-after', 'A-after']);
  });

  it('skips a filter without a hook for the phase', async () => {
    const trace: string[] = [];
    const toolOnly = createFilter('tool-only', { aroundTool: (req, _s, next) => (trace.push('tool-only'), next(req)) });
    const kernel = createKernel({ llm: scriptedLlm([text('ok')]), filters: [toolOnly, tracer('A', trace)] });
    await kernel.invokeChat(hi);
    expect(trace).toEqual(['A-before', 'A-after']);
  });

  it('lets a filter short-circuit: the inner layers and the LLM are not called, outer post steps still run', async () => {
    const trace: string[] = [];
    const llm = scriptedLlm([text('never')]);
    const cache = createFilter('cache', {
      aroundChat: (req): ChatResponse => (trace.push('cache-hit'), { response: text('cached'), context: req.context }),
    });
    const kernel = createKernel({ llm, filters: [tracer('A', trace), cache, tracer('B', trace)] });
    const { response } = await kernel.invokeChat(hi);
    expect(response.content).toBe('cached');
    expect(trace).toEqual(['A-before', 'cache-hit', 'A-after']);
    expect(llm.calls).toHaveLength(0);
  });

  it('lets a filter retry by calling next again', async () => {
    const llm = scriptedLlm([new Error('flaky'), text('second time')]);
    const retry = createFilter('retry', {
      async aroundChat(req, _s, next) {
        try {
          return await next(req);
        } catch {
          return next(req);
        }
      },
    });
    const kernel = createKernel({ llm, filters: [retry] });
    const { response } = await kernel.invokeChat(hi);
    expect(response.content).toBe('second time');
    expect(llm.calls).toHaveLength(2);
  });

  it('rewrites the request before next and the response after it', async () => {
    const llm = scriptedLlm((ms) => text(`saw ${ms.length}`));
    const f = createFilter('rewrite', {
      async aroundChat(req, _s, next) {
        const res = await next({ ...req, messages: [...req.messages, { role: 'user', content: 'extra' }] });
        return { ...res, response: { ...res.response, content: `${res.response.content}!` } };
      },
    });
    const { response } = await createKernel({ llm, filters: [f] }).invokeChat(hi);
    expect(response.content).toBe('saw 2!');
  });

  it('seeds private state from init and keeps it across calls when the returned context is reused', async () => {
    const counter = createFilter('counter', {
      async aroundChat(req, n, next) {
        const res = await next(req);
        return [res, n + 1];
      },
    }, 10);
    const kernel = createKernel({ llm: scriptedLlm(() => text('ok')), filters: [counter] });
    const first = await kernel.invokeChat(hi);
    expect(first.context.filterStates['counter']).toBe(11);
    const second = await kernel.invokeChat(hi, { context: first.context });
    expect(second.context.filterStates['counter']).toBe(12);
    const fresh = await kernel.invokeChat(hi, { context: newContext() });
    expect(fresh.context.filterStates['counter']).toBe(11);
  });

  it('isolates private state by filter name', async () => {
    const seen: Record<string, unknown> = {};
    const stateful = (name: string, init: string): Filter =>
      createFilter(name, {
        async aroundChat(req, s, next) {
          seen[name] = s;
          return [await next(req), `${s}+`];
        },
      }, init);
    const kernel = createKernel({ llm: scriptedLlm(() => text('ok')), filters: [stateful('x', 'X'), stateful('y', 'Y')] });
    const { context } = await kernel.invokeChat(hi);
    expect(context.filterStates).toEqual({ x: 'X+', y: 'Y+' });
    await kernel.invokeChat(hi, { context });
    expect(seen).toEqual({ x: 'X+', y: 'Y+' });
  });

  it('propagates a terminal error to the caller through the filters', async () => {
    const trace: string[] = [];
    const failing = async (): Promise<never> => {
      throw new Error('terminal failed');
    };
    await expect(
      runChain([tracer('A', trace)], 'aroundChat', failing, { messages: hi, context: newContext(), options: {} }),
    ).rejects.toThrow('terminal failed');
    expect(trace).toEqual(['A-before']);
  });

  it('wraps tool calls in the aroundTool hooks, outermost first', async () => {
    const trace: string[] = [];
    const t = (name: string): Filter =>
      createFilter(name, {
        async aroundTool(req, _s, next) {
          trace.push(`${name}-before`);
          const res = await next({ ...req, args: { ...req.args, [name]: true } });
          trace.push(`${name}-after`);
          return res;
        },
      });
    const echo = { name: 'echo', description: 'echo', parameters: {}, execute: async (args: unknown) => (trace.push('tool'), args) };
    const kernel = createKernel({ llm: scriptedLlm([]), tools: [echo], filters: [t('A'), t('B')] });
    const { result } = await kernel.invokeTool('echo', { v: 1 });
    expect(result).toEqual({ v: 1, A: true, B: true });
    expect(trace).toEqual(['A-before', 'B-before', 'tool', 'B-after', 'A-after']);
  });
});
