import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateText, isStepCount, jsonSchema, streamText, tool, wrapLanguageModel } from 'ai';
import { MockLanguageModelV4, simulateReadableStream } from 'ai/test';
import { startRuntime, type Runtime } from '../../src/runtime.ts';
import { mnemoMiddleware, mnemoTools } from '../../src/ai-sdk/index.ts';
import { InvalidInputError } from '../../src/errors.ts';

// The AI SDK middleware and tools with the SDK's own mock language model, on a real runtime:
// what goes into the prompt before each call, what is stored after it, streamed or not.

const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } };
const stop = { unified: 'stop' as const, raw: 'stop' };
const answer = (text: string) => ({ content: [{ type: 'text' as const, text }], finishReason: stop, usage, warnings: [] });
const callTool = (toolCallId: string, toolName: string, input: unknown) => ({
  content: [{ type: 'tool-call' as const, toolCallId, toolName, input: JSON.stringify(input) }],
  finishReason: { unified: 'tool-calls' as const, raw: 'tool_calls' },
  usage,
  warnings: [],
});
const streamOf = (...parts: unknown[]) => ({ stream: simulateReadableStream({ chunks: parts as never[], chunkDelayInMs: null }) });
const textStream = (...deltas: string[]) =>
  streamOf({ type: 'stream-start', warnings: [] }, { type: 'text-start', id: 't' }, ...deltas.map((delta) => ({ type: 'text-delta', id: 't', delta })), { type: 'text-end', id: 't' }, { type: 'finish', finishReason: stop, usage });

type PromptMessage = { role: string; content: unknown };
const memoryOf = (prompt: readonly PromptMessage[]): string | undefined => {
  const found = prompt.find((m, i) => m.role === 'system' && typeof m.content === 'string' && /^\[(SESSION|LONG_TERM|RECALL)\]/.test(m.content) && i >= 0);
  return found?.content as string | undefined;
};

describe('mnemo/ai-sdk', () => {
  let runtime: Runtime;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mnemo-ai-sdk-'));
    runtime = await startRuntime({ dataDir: dir, name: 'mnemo_ai_sdk_test', recall: { language: 'en' } });
  });
  afterAll(async () => {
    await runtime?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('puts the session window and the ranked facts in the prompt, and stores each turn', async () => {
    await runtime.recall.remember('u1', { text: 'favourite city is Porto', key: 'city' });
    const mock = new MockLanguageModelV4({ doGenerate: [answer('Noted: you like tea.'), answer('You said tea.')] });
    const model = wrapLanguageModel({ model: mock, middleware: mnemoMiddleware({ runtime, userId: 'u1', sessionId: 'chat1' }) });

    await generateText({ model, system: 'You are helpful.', prompt: 'I like tea' });
    const first = mock.doGenerateCalls[0]!.prompt as PromptMessage[];
    // The app's system message first, then the memory (the facts: the session is empty yet).
    expect(first.map((m) => m.role)).toEqual(['system', 'system', 'user']);
    expect(first[0]!.content).toBe('You are helpful.');
    expect(memoryOf(first)).toBe('[LONG_TERM]\nfavourite city is Porto');

    await generateText({ model, prompt: 'what do I like?' });
    expect(memoryOf(mock.doGenerateCalls[1]!.prompt as PromptMessage[])).toBe(
      '[SESSION]\nuser: I like tea\nassistant: Noted: you like tea.\n[LONG_TERM]\nfavourite city is Porto',
    );

    const rows = await runtime.recall.sessionMessages('u1', 'chat1');
    expect(rows.map((r) => [r.role, r.content])).toEqual([
      ['user', 'I like tea'],
      ['assistant', 'Noted: you like tea.'],
      ['user', 'what do I like?'],
      ['assistant', 'You said tea.'],
    ]);
    expect((await runtime.recall.dailyMessages('u1')).map((r) => r.sessionId)).toEqual(['chat1', 'chat1', 'chat1', 'chat1']);
    expect((await runtime.recall.search({ userId: 'u1', query: 'tea' })).items.map((h) => h.sessionId)).toContain('chat1');
    const [log] = await runtime.recall.dialogueLog('u1', 'chat1');
    expect(log!.memoryContext).toBe('[LONG_TERM]\nfavourite city is Porto');
  });

  it('stores a multi-step turn once, with its tool calls and results', async () => {
    const mock = new MockLanguageModelV4({ doGenerate: [callTool('c1', 'weather', { city: 'Oslo' }), answer('Rain in Oslo.')] });
    const model = wrapLanguageModel({ model: mock, middleware: mnemoMiddleware({ runtime, userId: 'u1', sessionId: 'tools1' }) });
    const weather = tool({ inputSchema: jsonSchema<{ city: string }>({ type: 'object', properties: { city: { type: 'string' } } }), execute: async ({ city }) => `rain in ${city}` });
    const result = await generateText({ model, prompt: 'weather in Oslo?', tools: { weather }, stopWhen: isStepCount(3) });
    expect(result.text).toBe('Rain in Oslo.');
    // The second step is sent the same memory (nothing stored in between).
    expect(memoryOf(mock.doGenerateCalls[1]!.prompt as PromptMessage[])).toBe(memoryOf(mock.doGenerateCalls[0]!.prompt as PromptMessage[]));
    const rows = await runtime.recall.sessionMessages('u1', 'tools1');
    expect(rows.map((r) => [r.role, r.content])).toEqual([['user', 'weather in Oslo?'], ['assistant', 'Rain in Oslo.']]);
    expect(rows[1]!.toolCalls).toEqual([{ name: 'weather', input: '{"city": "Oslo"}', output: 'rain in Oslo' }]);
  });

  it('stores a streamed turn when its stream ends, tool steps included', async () => {
    const toolStream = streamOf(
      { type: 'stream-start', warnings: [] },
      { type: 'tool-call', toolCallId: 'c9', toolName: 'clock', input: '{}' },
      { type: 'finish', finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage },
    );
    const mock = new MockLanguageModelV4({ doStream: [textStream('Hel', 'lo ', 'there'), toolStream, textStream('It is ', 'noon.')] });
    const model = wrapLanguageModel({ model: mock, middleware: mnemoMiddleware({ runtime, userId: 'u2', sessionId: 'stream1' }) });

    const first = streamText({ model, prompt: 'hi' });
    let seen = '';
    for await (const delta of first.textStream) seen += delta;
    expect(seen).toBe('Hello there');
    expect((await runtime.recall.sessionMessages('u2', 'stream1')).map((r) => r.content)).toEqual(['hi', 'Hello there']);

    const clock = tool({ inputSchema: jsonSchema({ type: 'object', properties: {} }), execute: async () => 'noon' });
    const second = streamText({ model, prompt: 'what time is it?', tools: { clock }, stopWhen: isStepCount(3) });
    expect(await second.text).toBe('It is noon.');
    const rows = await runtime.recall.sessionMessages('u2', 'stream1');
    expect(rows.slice(2).map((r) => [r.role, r.content])).toEqual([['user', 'what time is it?'], ['assistant', 'It is noon.']]);
    expect(rows[3]!.toolCalls).toEqual([{ name: 'clock', input: '{}', output: 'noon' }]);
    // The third model call saw the first turn in its window.
    expect(memoryOf(mock.doStreamCalls[2]!.prompt as PromptMessage[])).toContain('assistant: Hello there');
  });

  it('adds ranked recall across sessions with recall: n, each hit with its anchor', async () => {
    const mock = new MockLanguageModelV4({ doGenerate: answer('ok') });
    const model = wrapLanguageModel({ model: mock, middleware: mnemoMiddleware({ runtime, userId: 'u1', sessionId: 'other', recall: 3, sessionRows: 0 }) });
    await generateText({ model, prompt: 'remind me about the Oslo weather' });
    const memory = memoryOf(mock.doGenerateCalls[0]!.prompt as PromptMessage[])!;
    expect(memory).toMatch(/\[RECALL\]\n\[\d{4}-\d{2}-\d{2}\] session tools1 #\d+ (user|assistant): /);
    expect(memory).not.toContain('[SESSION]');
  });

  it('gives the memory tools as AI SDK tools, for one user, with the library’s errors', async () => {
    const mock = new MockLanguageModelV4({
      doGenerate: [callTool('r1', 'remember', { text: 'allergic to nuts', key: 'allergy' }), callTool('s1', 'search_memory', { query: 'nuts', day: 'soon' }), answer('done')],
    });
    const result = await generateText({ model: mock, prompt: 'note my allergy', tools: mnemoTools({ runtime, userId: 'u3' }), stopWhen: isStepCount(4) });
    expect((await runtime.recall.listFacts('u3')).map((f) => f.text)).toEqual(['allergic to nuts']);
    expect(await runtime.recall.listFacts('u1').then((facts) => facts.map((f) => f.text))).not.toContain('allergic to nuts');
    const outputs = result.steps.flatMap((s) => s.content).filter((c) => c.type === 'tool-result' || c.type === 'tool-error');
    expect(outputs.map((c) => c.type)).toEqual(['tool-result', 'tool-error']);
    expect((outputs[1] as { error: unknown }).error).toMatchObject({ code: 'invalid_day' });
  });

  it('refuses bad options when made', () => {
    expect(() => mnemoMiddleware({ runtime, userId: ' u', sessionId: 's' })).toThrow(InvalidInputError);
    expect(() => mnemoMiddleware({ runtime, userId: 'u', sessionId: 's', recall: 1.5 })).toThrow(/recall must be an integer/);
    expect(() => mnemoTools({ runtime, userId: '' })).toThrow(InvalidInputError);
  });
});
