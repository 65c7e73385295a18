import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { context, SpanKind, SpanStatusCode, trace, TraceFlags } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { createAgent } from '../../src/agent/agent.ts';
import { defineTool } from '../../src/kernel/tool.ts';
import { openAICompatible } from '../../src/llm/openai-compatible.ts';
import { createInMemoryStore } from '../../src/memory/in-memory/in-memory-store.ts';
import { startRuntime, type Runtime } from '../../src/runtime.ts';
import { startChatStub, type ChatStub } from '../support/chat-completions-stub.ts';
import { startTracing, type Tracing } from '../support/otel.ts';
import { says, scriptedLlm, toolCalls } from '../support/scripted-llm.ts';

// Mnemo's spans as an application's tracer provider records them (an in-memory exporter):
// one trace per chat turn, its model calls, tools and writes inside it, background work linked.

describe('OpenTelemetry traces', () => {
  let tracing: Tracing;
  let stub: ChatStub;
  let runtime: Runtime;
  let dir: string;
  const spans = (): ReadableSpan[] => tracing.exporter.getFinishedSpans();
  const named = (name: string) => spans().filter((s) => s.name === name);
  const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;

  beforeAll(async () => {
    tracing = startTracing();
    stub = await startChatStub();
    dir = mkdtempSync(join(tmpdir(), 'mnemo-otel-'));
    runtime = await startRuntime({
      dataDir: dir,
      name: 'mnemo_otel_test',
      recall: {
        llm: openAICompatible({ apiKey: 'test', baseURL: stub.baseURL, model: 'stub-model', maxRetries: 0 }),
        factsLlm: scriptedLlm([], says('{"facts": []}')),
        summary: { keepLast: 0, maxTokens: 1, llm: scriptedLlm([], says('a summary')) },
      },
    });
  });
  afterAll(async () => {
    await runtime?.stop();
    await stub?.close();
    await tracing?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('makes a chat turn one trace: model calls with GenAI attributes, the tool call, the appends through their commits', async () => {
    tracing.exporter.reset();
    await runtime.recall.chat({ userId: 'u1', sessionId: 's1', message: 'coffee preferences please' });
    const [turn] = named('invoke_agent mnemo');
    expect(turn).toBeDefined();
    expect(turn!.parentSpanContext).toBeUndefined();
    expect(turn!.attributes).toMatchObject({ 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'mnemo', 'gen_ai.conversation.id': 's1' });
    const traceId = turn!.spanContext().traceId;

    // The stub calls a tool, then answers, then titles the session: three model calls.
    const calls = named('chat stub-model');
    expect(calls).toHaveLength(3);
    for (const call of calls) {
      expect(call.spanContext().traceId).toBe(traceId);
      expect(call.kind).toBe(SpanKind.CLIENT);
      expect(call.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'stub-model',
        'gen_ai.usage.input_tokens': expect.any(Number),
        'gen_ai.usage.output_tokens': expect.any(Number),
      });
    }
    expect(calls[0]!.attributes['gen_ai.response.finish_reasons']).toEqual(['tool_calls']);

    const [tool] = named('execute_tool search_session');
    expect(tool!.attributes).toMatchObject({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'search_session', 'gen_ai.tool.call.id': expect.any(String) });
    expect(tool!.spanContext().traceId).toBe(traceId);

    const appends = named('mnemo.memory.append').filter((s) => s.spanContext().traceId === traceId);
    expect(appends).toHaveLength(2);
    for (const append of appends) {
      expect(parentOf(append)).toBe(turn!.spanContext().spanId);
      expect(append.attributes).toEqual({ 'mnemo.memory.messages': 1 });
    }
    // One span an append, its commit included: no span of the commit on its own.
    expect(spans().filter((s) => s.name !== 'mnemo.memory.append' && s.name.startsWith('mnemo.memory'))).toEqual([]);
    // No message text and no user id on any span.
    for (const s of spans()) expect(JSON.stringify(s.attributes)).not.toMatch(/coffee|u1/);
  });

  it('links the turn’s extraction job and summary, each a trace of its own, to the turn', async () => {
    tracing.exporter.reset();
    await runtime.recall.chat({ userId: 'u1', sessionId: 's2', message: 'tea is better' });
    await runtime.recall.extractionIdle();
    // The summary check runs in the background: wait for its span.
    for (let i = 0; i < 200 && named('mnemo.summary').length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    const turn = named('invoke_agent mnemo')[0]!.spanContext();
    for (const name of ['mnemo.extraction', 'mnemo.summary']) {
      const [job] = named(name);
      expect(job, name).toBeDefined();
      expect(job!.parentSpanContext, name).toBeUndefined();
      expect(job!.spanContext().traceId, name).not.toBe(turn.traceId);
      expect(job!.links.map((l) => l.context.spanId), name).toEqual([turn.spanId]);
    }
  });

  it('traces an append to a standalone store, nested in the active span', async () => {
    tracing.exporter.reset();
    const store = createInMemoryStore();
    const tracer = trace.getTracer('test');
    await tracer.startActiveSpan('caller', async (caller) => {
      await store.add('c1', [{ role: 'user', content: 'hello' }, { role: 'assistant', content: 'hi' }]);
      caller.end();
    });
    const [append] = named('mnemo.memory.append');
    expect(append!.attributes).toEqual({ 'mnemo.memory.messages': 2 });
    expect(parentOf(append!)).toBe(named('caller')[0]!.spanContext().spanId);
    await store.close();
  });

  it('rejects an append’s traceContext that is not an OpenTelemetry context', async () => {
    const store = createInMemoryStore();
    await expect(store.append('c1', [{ message: { role: 'user', content: 'hello' } }], { traceContext: 42 as never })).rejects.toMatchObject({
      code: 'invalid_option',
      details: { option: 'traceContext' },
    });
    await store.close();
  });

  it('traces a ranked search with what it found', async () => {
    tracing.exporter.reset();
    await runtime.recall.search({ userId: 'u1', query: 'tea' });
    const [search] = named('mnemo.search');
    expect(search!.attributes).toMatchObject({ 'mnemo.search.ranking': 'bm25', 'mnemo.search.hits': expect.any(Number) });
  });

  it('marks a failed turn with its error code and Mnemo’s own sentence', async () => {
    tracing.exporter.reset();
    await expect(runtime.recall.chat({ userId: 'u1', sessionId: 's3', message: 'please #fail' })).rejects.toMatchObject({ code: 'llm_bad_request' });
    const [turn] = named('invoke_agent mnemo');
    expect(turn!.status.code).toBe(SpanStatusCode.ERROR);
    expect(turn!.attributes['error.type']).toBe('llm_bad_request');
    const [call] = named('chat stub-model');
    expect(call!.status.code).toBe(SpanStatusCode.ERROR);
  });

  /** The turn's spans: the model calls, the tool call, the appends, each the turn's child. */
  const expectTurnTree = (turn: ReadableSpan) => {
    const inTrace = spans().filter((s) => s.spanContext().traceId === turn.spanContext().traceId && s !== turn && s.spanContext().spanId !== parentOf(turn));
    expect(inTrace.map((s) => s.name).sort()).toEqual(['chat stub-model', 'chat stub-model', 'chat stub-model', 'execute_tool search_session', 'mnemo.memory.append', 'mnemo.memory.append']);
    for (const s of inTrace) expect(parentOf(s), s.name).toBe(turn.spanContext().spanId);
  };

  it('makes the application’s active span the turn’s parent, the turn the parent of its model calls, tool and appends', async () => {
    tracing.exporter.reset();
    await trace.getTracer('app').startActiveSpan('POST /chat', async (request) => {
      await runtime.recall.chat({ userId: 'u1', sessionId: 's5', message: 'coffee preferences please' });
      request.end();
    });
    const [request] = named('POST /chat');
    const [turn] = named('invoke_agent mnemo');
    expect(parentOf(turn!)).toBe(request!.spanContext().spanId);
    expectTurnTree(turn!);
  });

  it('nests every span under its turn with no context manager registered: the parents are passed, not activated', async () => {
    await tracing.stop();
    tracing = startTracing({ contextManager: false });
    await runtime.recall.chat({ userId: 'u1', sessionId: 's6', message: 'coffee preferences please' });
    await runtime.recall.extractionIdle();
    for (let i = 0; i < 200 && named('mnemo.summary').length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    const [turn] = named('invoke_agent mnemo');
    expect(turn!.parentSpanContext).toBeUndefined();
    expectTurnTree(turn!);
    for (const name of ['mnemo.extraction', 'mnemo.summary']) {
      expect(named(name)[0]!.links.map((l) => l.context.spanId), name).toEqual([turn!.spanContext().spanId]);
    }
    // The summary's own append is its child.
    const summary = named('mnemo.summary')[0]!.spanContext().spanId;
    expect(named('mnemo.memory.append').filter((s) => parentOf(s) === summary)).toHaveLength(1);
    await tracing.stop();
    tracing = startTracing();
  });

  it('records nothing of a turn whose parent was sampled out: its spans carry that decision to theirs', async () => {
    tracing.exporter.reset();
    const unsampled = trace.setSpanContext(context.active(), { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceFlags: TraceFlags.NONE });
    await context.with(unsampled, () => runtime.recall.chat({ userId: 'u1', sessionId: 's7', message: 'coffee preferences please' }));
    expect(spans().filter((s) => s.name !== 'mnemo.summary' && s.name !== 'mnemo.extraction' && !s.parentSpanContext)).toEqual([]);
    expect(named('invoke_agent mnemo')).toEqual([]);
    expect(named('chat stub-model')).toEqual([]);
  });

  it('makes a tool’s span active for its code only when the application already runs in a context', async () => {
    const seen: (string | undefined)[] = [];
    const agent = createAgent({
      llm: scriptedLlm([toolCalls(['c1', 'probe', {}]), says('done'), toolCalls(['c2', 'probe', {}]), says('done')]),
      tools: [defineTool({ name: 'probe', description: 'reads the active span', parameters: { type: 'object' }, execute: async () => seen.push(trace.getActiveSpan()?.spanContext().spanId) })],
      memory: false,
    });
    tracing.exporter.reset();
    await agent.run('outside any span');
    await trace.getTracer('app').startActiveSpan('job', async (job) => {
      await agent.run('inside the application’s span');
      job.end();
    });
    const [outside, inside] = named('execute_tool probe');
    // Outside, Mnemo switches no context (that would turn AsyncLocalStorage on for the process).
    expect(seen[0]).toBeUndefined();
    expect(parentOf(outside!)).toBeUndefined();
    expect(seen[1]).toBe(inside!.spanContext().spanId);
    expect(parentOf(inside!)).toBe(named('job')[0]!.spanContext().spanId);
  });

  it('is a no-op without a tracer provider', async () => {
    await tracing.stop();
    await runtime.recall.chat({ userId: 'u1', sessionId: 's4', message: 'untraced' });
    expect(trace.getActiveSpan()).toBeUndefined();
    tracing = startTracing();
    await runtime.recall.chat({ userId: 'u1', sessionId: 's4', message: 'traced again' });
    expect(named('invoke_agent mnemo')).toHaveLength(1);
  });
});
