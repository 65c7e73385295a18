import { afterAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/agent/index.ts';
import { fallbackLlm } from '../../src/llm/index.ts';
import type { LlmService } from '../../src/llm/llm-service.ts';
import type { MessageLog } from '../../src/memory/contract/message-log.ts';
import { createInMemoryStore } from '../../src/memory/index.ts';
import type { Message } from '../../src/message.ts';
import {
  InvalidMemoryConfigError,
  SummaryFailedError,
  extractiveSummary,
  summaryConversationId,
  summaryProvider,
  type TokenCounter,
} from '../../src/provider/index.ts';
import { startRuntime } from '../../src/runtime.ts';
import { tempDir } from '../support/runtime-fixtures.ts';
import { scriptedLlm, text, toolCalls } from '../support/scripted-llm.ts';
import { defineTool } from '../../src/kernel/index.ts';

/** One token per character of content: budgets in tests are easy to reason about. */
const chars: TokenCounter = (m) => (typeof m.content === 'string' ? m.content.length : 0);

const isSummaryCall = (messages: readonly Message[]) =>
  messages[0]?.role === 'system' && typeof messages[0].content === 'string' && messages[0].content.startsWith('You maintain the running summary');

/**
 * A model that answers chat turns with `reply <n>` and summarization calls with
 * `S<k>: <the new messages' user lines>`, recording both kinds of call.
 */
function assistantAndSummarizer() {
  const chatCalls: Message[][] = [];
  const summaryCalls: Message[][] = [];
  let replies = 0;
  const llm = scriptedLlm((messages) => {
    if (isSummaryCall(messages)) {
      summaryCalls.push([...messages]);
      const request = messages[1]!.content as string;
      const users = request.split('\n').filter((l) => l.startsWith('user: ')).map((l) => l.slice(6));
      return text(`S${summaryCalls.length}: ${users.join(', ')}`);
    }
    chatCalls.push([...messages]);
    return text(`reply ${++replies}`);
  });
  return { llm, chatCalls, summaryCalls };
}

const turn = (i: number): Message[] => [
  { role: 'user', content: `question ${i}` },
  { role: 'assistant', content: `answer ${i}` },
];

describe('summaryProvider', () => {
  it('sends the system messages, then the latest summary, then every message after what it covers', async () => {
    const store = createInMemoryStore();
    const { llm } = assistantAndSummarizer();
    const provider = summaryProvider(store, { llm, keepLast: 1, maxTokens: 1000, countTokens: chars, model: 'm1' });
    await store.add('c', [{ role: 'system', content: 'be brief' }, ...turn(1), ...turn(2), ...turn(3)]);
    const made = await provider.summarize('c');
    expect(made).toMatchObject({ from: 1, to: 5, model: 'm1', previous: null, method: 'llm' });
    const sent = await provider.prepareHistory('c');
    expect(sent.map((m) => m.role)).toEqual(['system', 'system', 'user', 'assistant']);
    expect(sent[0]).toEqual({ role: 'system', content: 'be brief' });
    expect(sent[1]!.content).toContain('S1: question 1, question 2');
    expect(sent[1]!.content).toContain('messages 1-5');
    expect(sent.slice(2)).toEqual(turn(3));
    // prepare over the whole history gives the same.
    expect(await provider.prepare('c', await store.get('c'))).toEqual(sent);
  });

  it('sends the whole history while there is no summary', async () => {
    const store = createInMemoryStore();
    const provider = summaryProvider(store, { keepLast: 2, maxTokens: 1000, countTokens: chars });
    await store.add('c', [...turn(1), ...turn(2)]);
    expect(await provider.prepareHistory('c')).toEqual([...turn(1), ...turn(2)]);
    expect(await provider.summaries('c')).toEqual([]);
  });

  it('summarizes after a turn, not during it: a turn uses the summary it started with', async () => {
    const store = createInMemoryStore();
    const { llm, chatCalls, summaryCalls } = assistantAndSummarizer();
    // Each turn costs 'question i' + 'reply i' = 17 tokens: with the last turn kept, the pending
    // part is 34 after turn 3 and 51 after turn 4.
    const provider = summaryProvider(store, { llm, keepLast: 1, maxTokens: 40, countTokens: chars });
    const agent = createAgent({ llm, memory: provider, conversationId: 'c' });
    for (let i = 1; i <= 3; i++) {
      await agent.run(`question ${i}`);
      await provider.idle();
    }
    expect(summaryCalls).toHaveLength(0);
    await agent.run('question 4');
    // The turn that crossed the budget was answered without a summary...
    expect(chatCalls[3]!.some((m) => typeof m.content === 'string' && m.content.startsWith('Summary'))).toBe(false);
    await provider.idle();
    // ...and summarized after it: turns 1-3 pending, turn 4 kept.
    expect(summaryCalls).toHaveLength(1);
    const [summary] = await provider.summaries('c');
    expect(summary).toMatchObject({ from: 1, to: 6, text: 'S1: question 1, question 2, question 3' });
    await agent.run('question 5');
    const sent = chatCalls[4]!;
    expect(sent[0]!.role).toBe('system');
    expect(sent[0]!.content).toContain('S1: question 1, question 2, question 3');
    expect(sent.slice(1).map((m) => m.content)).toEqual(['question 4', 'reply 4', 'question 5']);
  });

  it('keeps one summary for every model call of a turn, even when one lands during the turn', async () => {
    const store = createInMemoryStore();
    let releaseSummary!: () => void;
    const summaryGate = new Promise<void>((r) => (releaseSummary = r));
    const chatCalls: Message[][] = [];
    let step = 0;
    const llm: LlmService = {
      async chat(messages) {
        if (isSummaryCall(messages)) {
          await summaryGate;
          return text('SUMMARY');
        }
        chatCalls.push([...messages]);
        step++;
        // The second turn calls a tool first; the summary is released while the tool runs.
        if (step === 2) return toolCalls(['t1', 'release', {}]);
        return text(`reply ${step}`);
      },
    };
    const release = defineTool({
      name: 'release',
      description: 'lets the summary finish',
      parameters: { type: 'object', properties: {} },
      execute: async () => {
        releaseSummary();
        await provider.idle();
        return 'ok';
      },
    });
    const provider = summaryProvider(store, { llm, keepLast: 0, maxTokens: 10, countTokens: chars });
    const agent = createAgent({ llm, tools: [release], memory: provider, conversationId: 'c' });
    await agent.run('a long first question');
    await agent.run('second');
    await provider.idle();
    // The first summary (of turn 1) landed during turn 2; turn 2's end made a second one.
    expect((await provider.summaries('c')).map((s) => [s.text, s.to])).toEqual([
      ['SUMMARY', 2],
      ['SUMMARY', 6],
    ]);
    // Both calls of turn 2 were sent without the summary that landed between them.
    expect(chatCalls[1]!.some((m) => m.content === 'SUMMARY')).toBe(false);
    expect(chatCalls[2]!.some((m) => typeof m.content === 'string' && m.content.includes('SUMMARY'))).toBe(false);
    expect(chatCalls[2]!.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'tool']);
    // The next turn starts from the latest.
    await agent.run('third');
    expect(chatCalls[3]![0]!.content).toContain('SUMMARY');
  });

  it('builds each summary on the previous one and records the id range it adds', async () => {
    const store = createInMemoryStore();
    const { llm, summaryCalls } = assistantAndSummarizer();
    const provider = summaryProvider(store, { llm, keepLast: 1, maxTokens: 1000, countTokens: chars, model: 'gpt-test' });
    await store.add('c', [...turn(1), ...turn(2)]);
    const first = await provider.summarize('c');
    await store.add('c', [...turn(3), ...turn(4)]);
    const second = await provider.summarize('c');
    expect(first).toMatchObject({ id: 1, from: 1, to: 2, previous: null });
    expect(second).toMatchObject({ id: 2, from: 3, to: 6, previous: 1, model: 'gpt-test' });
    expect(Date.parse(second!.at)).not.toBeNaN();
    // The second call was given the first summary and only the messages after it.
    const request = summaryCalls[1]![1]!.content as string;
    expect(request).toContain('Previous summary:\nS1: question 1');
    expect(request).not.toContain('user: question 1');
    expect(request).toContain('user: question 2');
    expect(request).toContain('user: question 3');
    expect(request).not.toContain('question 4');
    expect((await provider.summaries('c')).map((s) => [s.from, s.to])).toEqual([
      [1, 2],
      [3, 6],
    ]);
  });

  it('deletes nothing from the history', async () => {
    const store = createInMemoryStore();
    const { llm } = assistantAndSummarizer();
    const provider = summaryProvider(store, { llm, keepLast: 1, maxTokens: 10, countTokens: chars });
    const agent = createAgent({ llm, memory: provider, conversationId: 'c' });
    for (let i = 1; i <= 6; i++) {
      await agent.run(`question ${i}`);
      await provider.idle();
    }
    expect((await provider.summaries('c')).length).toBeGreaterThan(0);
    const history = await provider.history('c');
    expect(history).toHaveLength(12);
    expect(history.filter((m) => m.role === 'user').map((m) => m.content)).toEqual([1, 2, 3, 4, 5, 6].map((i) => `question ${i}`));
    expect(await store.get('c')).toEqual(history);
  });

  it('summarizes extractively without a model, and never with the offline fallback', async () => {
    const store = createInMemoryStore();
    const provider = summaryProvider(store, { llm: fallbackLlm(), keepLast: 1, maxTokens: 1000, countTokens: chars });
    await store.add('c', [
      { role: 'user', content: 'My name is Ada. I like tea.' },
      { role: 'assistant', content: null, tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      { role: 'tool', content: 'tool output', tool_call_id: 't' },
      { role: 'assistant', content: '你好，Ada！我记住了。' },
      ...turn(2),
    ]);
    const made = await provider.summarize('c');
    expect(made).toMatchObject({ method: 'extractive', model: 'extractive', from: 1, to: 4 });
    expect(made!.text).toBe('User: My name is Ada.\nAssistant: 你好，Ada！');
  });

  it('bounds the extractive summary to maxTokens, shedding the oldest lines first', () => {
    const messages: Message[] = [1, 2, 3, 4].flatMap(turn);
    const summary = extractiveSummary('Previous line.', messages, 40, chars);
    expect(summary.length).toBeLessThanOrEqual(40);
    expect(summary).toBe('User: question 4\nAssistant: answer 4');
  });

  it('does not summarize twice when turns end concurrently', async () => {
    const store = createInMemoryStore();
    const { llm, summaryCalls } = assistantAndSummarizer();
    const a = summaryProvider(store, { llm, keepLast: 1, maxTokens: 20, countTokens: chars });
    const b = summaryProvider(store, { llm, keepLast: 1, maxTokens: 20, countTokens: chars });
    await store.add('c', [1, 2, 3, 4].flatMap(turn).slice(0, -1));
    // Two turns finish at once, on two providers over the same store.
    await Promise.all([
      a.append('c', [{ role: 'assistant', content: 'answer 4' }]),
      b.append('c', [{ role: 'assistant', content: 'again' }]),
      a.append('c', [{ role: 'assistant', content: 'and again' }]),
    ]);
    await Promise.all([a.idle(), b.idle()]);
    expect(summaryCalls).toHaveLength(1);
    expect((await a.summaries('c')).map((s) => [s.from, s.to])).toEqual([[1, 6]]);
  });

  it('logs a failed summarization, never fails the turn, and retries after the next turn', async () => {
    const store = createInMemoryStore();
    const errors: unknown[] = [];
    let fail = true;
    const llm: LlmService = {
      async chat(messages) {
        if (isSummaryCall(messages)) {
          if (fail) return { content: null };
          return text('FIXED');
        }
        return text('ok');
      },
    };
    // Turn 1 costs 16 tokens, over the budget of 10; turns 1 and 2 (33) fit in one step of 40.
    const provider = summaryProvider(store, { llm, keepLast: 0, maxTokens: 10, countTokens: chars, onError: (e) => errors.push(e) });
    const agent = createAgent({ llm, memory: provider, conversationId: 'c' });
    await agent.run('first question');
    await provider.idle();
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(SummaryFailedError);
    expect(await provider.summaries('c')).toEqual([]);
    fail = false;
    await agent.run('second question');
    await provider.idle();
    expect((await provider.summaries('c')).map((s) => [s.text, s.from, s.to])).toEqual([['FIXED', 1, 4]]);
  });

  it('summarizes a long backlog in steps that build on each other', async () => {
    const store = createInMemoryStore();
    const { llm, summaryCalls } = assistantAndSummarizer();
    const provider = summaryProvider(store, { llm, keepLast: 1, maxTokens: 10, countTokens: chars });
    await store.add('c', [1, 2, 3, 4, 5].flatMap(turn));
    await provider.summarize('c');
    // 8 pending messages of 8-10 tokens, steps of at most 40.
    const list = await provider.summaries('c');
    expect(summaryCalls.length).toBe(list.length);
    expect(list.length).toBeGreaterThan(1);
    expect(list[0]!.from).toBe(1);
    for (let i = 1; i < list.length; i++) {
      expect(list[i]!.from).toBe(list[i - 1]!.to + 1);
      expect(list[i]!.previous).toBe(list[i - 1]!.id);
    }
    expect(list[list.length - 1]!.to).toBe(8);
  });

  it('clear forgets the conversation and its summaries', async () => {
    const store = createInMemoryStore();
    const provider = summaryProvider(store, { keepLast: 0, maxTokens: 1000, countTokens: chars });
    await store.add('c', turn(1));
    await provider.summarize('c');
    await provider.clear('c');
    expect(await provider.summaries('c')).toEqual([]);
    expect(await store.get('c')).toEqual([]);
    expect(await store.get(summaryConversationId('c'))).toEqual([]);
  });

  it('refuses a store without ids, bad options and reserved conversation ids', async () => {
    const plain = { get: async () => [], add: async () => {}, clear: async () => {} };
    expect(() => summaryProvider(plain)).toThrow(InvalidMemoryConfigError);
    const store = createInMemoryStore();
    expect(() => summaryProvider(store, { keepLast: -1 })).toThrow(InvalidMemoryConfigError);
    expect(() => summaryProvider(store, { maxTokens: 0 })).toThrow(InvalidMemoryConfigError);
    expect(() => summaryProvider(store, { llm: {} as LlmService })).toThrow(InvalidMemoryConfigError);
    const provider = summaryProvider(store);
    await expect(provider.append('mnemo.summary/x', [{ role: 'user', content: 'hi' }])).rejects.toMatchObject({ code: 'invalid_id' });
    expect(await store.get('mnemo.summary/x')).toEqual([]);
  });

  it('gives a long id a companion within the store limit', async () => {
    const store = createInMemoryStore();
    const id = 'é'.repeat(250);
    expect(summaryConversationId(id)).toMatch(/^mnemo\.summary#[0-9a-f]{64}$/);
    const provider = summaryProvider(store, { keepLast: 0, countTokens: chars });
    await store.add(id, turn(1));
    expect(await provider.summarize(id)).toMatchObject({ to: 2 });
  });
});

describe('summaryProvider on the runtime (LMDB)', () => {
  const dir = tempDir('mnemo-summary-');
  afterAll(() => dir.remove());

  it('keeps summaries across a runtime restart and builds on them', async () => {
    const { llm } = assistantAndSummarizer();
    let runtime = await startRuntime({ dataDir: dir.path, recall: false });
    // 17 tokens a turn, the last one kept: summarized after turn 3 (turns 1-2), then after turn 5 (3-4).
    let provider = summaryProvider(runtime.memory as MessageLog, { llm, keepLast: 1, maxTokens: 30, countTokens: chars, model: 'm' });
    let agent = createAgent({ llm, memory: provider, conversationId: 'long' });
    for (let i = 1; i <= 4; i++) {
      await agent.run(`question ${i}`);
      await provider.idle();
    }
    const before = await provider.summaries('long');
    expect(before).toHaveLength(1);
    await runtime.stop();

    runtime = await startRuntime({ dataDir: dir.path, recall: false });
    provider = summaryProvider(runtime.memory as MessageLog, { llm, keepLast: 1, maxTokens: 30, countTokens: chars, model: 'm' });
    expect(await provider.summaries('long')).toEqual(before);
    const sent = await provider.prepareHistory('long');
    expect(sent[0]!.content).toContain(before[0]!.text);
    expect(sent.slice(1).map((m) => m.content)).toEqual(['question 3', 'reply 3', 'question 4', 'reply 4']);
    agent = createAgent({ llm, memory: provider, conversationId: 'long' });
    for (let i = 5; i <= 6; i++) {
      await agent.run(`question ${i}`);
      await provider.idle();
    }
    const after = await provider.summaries('long');
    expect(after.length).toBe(2);
    expect(after[0]).toEqual(before[0]);
    expect(after[1]).toMatchObject({ previous: after[0]!.id, from: 5, to: 8 });
    expect(await provider.history('long')).toHaveLength(12);
    await runtime.stop();
  });
});
