import { afterEach, describe, expect, it } from 'vitest';
import type { LlmResponse, LlmService } from '../../src/llm/llm-service.ts';
import type { Message } from '../../src/message.ts';
import { listSummaries, summaryConversationId } from '../../src/provider/summary-record.ts';
import { sessionConversationId } from '../../src/recall/recall-ids.ts';
import { openRecall, type RecallFixture } from '../support/recall-fixture.ts';
import { says } from '../support/scripted-llm.ts';

let fx: RecallFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

const U = 'u';
const S = 's1';
const C = sessionConversationId(U, S);
const long = (i: number) => `turn ${i}: ${'the quick brown fox jumps over the lazy dog '.repeat(6)}`;

/** The summary requests (a system instruction, no tools) answered by `summary`, the rest by `reply`. */
function modelWith(
  summary: (messages: readonly Message[]) => Promise<string> | string,
  reply = 'ok',
): LlmService & { summaryCalls: number; summarySignals: (AbortSignal | undefined)[] } {
  const llm = {
    summaryCalls: 0,
    summarySignals: [] as (AbortSignal | undefined)[],
    async chat(messages: readonly Message[], options?: { tools?: unknown; signal?: AbortSignal }): Promise<LlmResponse> {
      if (options?.tools === undefined && messages[0]?.role === 'system') {
        llm.summaryCalls++;
        llm.summarySignals.push(options?.signal);
        return says(await summary(messages));
      }
      return says(options?.tools === undefined ? 'A title' : reply);
    },
  };
  return llm;
}

const summarizeJobs = (f: RecallFixture) => f.store.jobs.counts('summarize', U);

describe('rolling summaries of recall sessions', () => {
  it('are on by default, offline extractive: a long session gets one in the background and later turns send it as [SUMMARY] before [SESSION]', async () => {
    fx = openRecall();
    for (let i = 1; i <= 12; i++) await fx.recall.chat({ userId: U, sessionId: S, message: long(i) });
    await fx.recall.summaryIdle();
    const summaries = await fx.recall.summaries(U, S);
    expect(summaries.length).toBeGreaterThan(0);
    expect(summaries[0]).toMatchObject({ id: 1, method: 'extractive', model: 'extractive', from: 1, previous: null });
    // The Demo's labels (recall's default language is the Demo's Chinese).
    expect(summaries[0]!.text).toContain('用户：turn 1:');
    await fx.recall.chat({ userId: U, sessionId: S, message: 'and now?' });
    const last = (await fx.recall.dialogueLog(U, S)).at(-1)!;
    expect(last.memoryContext.startsWith(`[SUMMARY]\n${(await fx.recall.summaries(U, S)).at(-1)!.text}\n[SESSION]\n`)).toBe(true);
    // The window is still the Demo's: the last 6 rows.
    expect(last.memoryContext.split('[SESSION]\n')[1]!.split('\n')).toHaveLength(6);
  });

  it('a short session keeps the Demo’s context exactly: no job, no summary, no [SUMMARY]', async () => {
    fx = openRecall();
    for (let i = 1; i <= 6; i++) await fx.recall.chat({ userId: U, sessionId: S, message: long(i) });
    await fx.recall.summaryIdle();
    expect(await fx.memory.lastId(summaryConversationId(C))).toBe(0);
    expect((await fx.recall.dialogueLog(U, S)).every((row) => row.memoryContext.startsWith('[SESSION]\n'))).toBe(true);
    expect((await summarizeJobs(fx)).pending).toBe(0);
  });

  it('summary: false turns them off: no job is queued and no summary made, however long the session', async () => {
    fx = openRecall({ summary: false });
    for (let i = 1; i <= 12; i++) await fx.recall.chat({ userId: U, sessionId: S, message: long(i) });
    expect((await summarizeJobs(fx)).pending).toBe(0);
    expect(await fx.recall.summaries(U, S)).toEqual([]);
    expect((await fx.recall.dialogueLog(U, S)).some((row) => row.memoryContext.includes('[SUMMARY]'))).toBe(false);
  });

  it('maxTokens sizes them: the summary is due sooner and no summary is longer than it', async () => {
    fx = openRecall({ summary: { keepLast: 1, maxTokens: 30 } });
    for (let i = 1; i <= 4; i++) await fx.recall.chat({ userId: U, sessionId: S, message: long(i) });
    await fx.recall.summaryIdle();
    const summaries = await fx.recall.summaries(U, S);
    expect(summaries.length).toBeGreaterThan(0);
    const { o200kTokenCounter } = await import('../../src/provider/token-counter.ts');
    const count = await o200kTokenCounter();
    for (const s of summaries) expect(count({ role: 'assistant', content: s.text }) - count({ role: 'assistant', content: '' })).toBeLessThanOrEqual(30);
  });

  it('with a model: the model writes them, in the background; the turn that queued the job answered before it', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const llm = modelWith(async () => {
      await gate;
      return 'summary of the early turns';
    });
    fx = openRecall({ llm, summary: { keepLast: 1, maxTokens: 40 } });
    for (let i = 1; i <= 4; i++) await fx.recall.chat({ userId: U, sessionId: S, message: long(i) });
    // Every turn answered although the summarization the second one queued still waits for the
    // model (the worker takes the job when the queue tells it: at once on LMDB, by NOTIFY or its
    // next poll on PostgreSQL).
    for (const deadline = Date.now() + 20_000; llm.summaryCalls === 0 && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 10));
    expect(llm.summaryCalls).toBe(1);
    expect(await fx.memory.lastId(summaryConversationId(C))).toBe(0);
    release();
    await fx.recall.summaryIdle();
    expect((await fx.recall.summaries(U, S))[0]).toEqual(
      expect.objectContaining({ id: 1, text: 'summary of the early turns', method: 'llm', from: 1, previous: null }),
    );
  });

  it('a failed summary is retried by the job queue, the error kept as Mnemo’s sentence', async () => {
    let fail = true;
    const llm = modelWith(() => {
      if (fail) throw new Error('provider words: quota exceeded for key sk-123');
      return 'the summary';
    });
    fx = openRecall({ llm, summary: { keepLast: 1, maxTokens: 40 } });
    const warned: string[] = [];
    const warn = console.warn;
    console.warn = (line: string) => void warned.push(line);
    try {
      for (let i = 1; i <= 3; i++) await fx.recall.chat({ userId: U, sessionId: S, message: long(i) });
      await fx.recall.summaryIdle();
    } finally {
      console.warn = warn;
    }
    const counts = await summarizeJobs(fx);
    expect(counts).toMatchObject({ pending: 1, retrying: 1 });
    expect(warned.join('\n')).not.toContain('sk-123');
    fail = false;
    // A due turn queues the job afresh: it runs at once.
    await fx.recall.chat({ userId: U, sessionId: S, message: long(4) });
    await fx.recall.summaryIdle();
    expect((await fx.recall.summaries(U, S)).map((s) => s.text)).toEqual(['the summary']);
    expect((await summarizeJobs(fx)).pending).toBe(0);
  });

  it('nothing summarized before an erasure is stored after it: the job’s write is refused, the model call aborted', async () => {
    let entered: () => void = () => {};
    const inCall = new Promise<void>((r) => (entered = r));
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const llm = modelWith(async () => {
      entered();
      await gate;
      return 'SECRET summary';
    });
    fx = openRecall({ llm, summary: { keepLast: 1, maxTokens: 40 } });
    for (let i = 1; i <= 3; i++) await fx.recall.chat({ userId: U, sessionId: S, message: long(i) });
    await inCall;
    await fx.recall.eraseUser(U);
    expect(llm.summarySignals[0]?.aborted).toBe(true);
    // The user starts over in the same session (its entry numbered as the erased one was)
    // before the model answers: the summary of the erased rows is still not stored.
    await fx.recall.chat({ userId: U, sessionId: S, message: 'hello again' });
    release();
    await fx.recall.summaryIdle();
    expect(await fx.memory.lastId(summaryConversationId(C))).toBe(0);
    expect(await fx.recall.summaries(U, S)).toEqual([]);
  });

  it('a summary made while its session is deleted is not stored, nor for a session made anew under the same id', async () => {
    let entered: () => void = () => {};
    const inCall = new Promise<void>((r) => (entered = r));
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const llm = modelWith(async () => {
      entered();
      await gate;
      return 'summary of the deleted session';
    });
    fx = openRecall({ llm, summary: { keepLast: 1, maxTokens: 40 } });
    for (let i = 1; i <= 3; i++) await fx.recall.chat({ userId: U, sessionId: S, message: long(i) });
    await inCall;
    expect(await fx.recall.deleteSession(U, S)).toBe(true);
    await fx.recall.chat({ userId: U, sessionId: S, message: 'a new session under the old id' });
    release();
    await fx.recall.summaryIdle();
    expect(await fx.recall.summaries(U, S)).toEqual([]);
  });

  it('deleting a session deletes its summaries', async () => {
    fx = openRecall({ summary: { keepLast: 1, maxTokens: 40 } });
    for (let i = 1; i <= 4; i++) await fx.recall.chat({ userId: U, sessionId: S, message: long(i) });
    await fx.recall.summaryIdle();
    expect(await fx.memory.lastId(summaryConversationId(C))).toBeGreaterThan(0);
    expect(await fx.recall.deleteSession(U, S)).toBe(true);
    expect(await fx.memory.lastId(summaryConversationId(C))).toBe(0);
  });

  it('a fork starts from the source’s summaries up to its fork point, and its next turn sends the last of them', async () => {
    let n = 0;
    const llm = modelWith(() => `summary ${++n}`);
    fx = openRecall({ llm, summary: { keepLast: 1, maxTokens: 40 } });
    for (let i = 1; i <= 8; i++) {
      await fx.recall.chat({ userId: U, sessionId: S, message: long(i) });
      await fx.recall.summaryIdle();
    }
    const source = await fx.recall.summaries(U, S);
    expect(source.length).toBeGreaterThan(2);
    const point = source[1]!.to + 1;
    const forked = await fx.recall.forkSession(U, S, point);
    const carried = source.filter((s) => s.to <= point);
    expect(await fx.recall.summaries(U, forked)).toEqual(carried);
    await fx.recall.chat({ userId: U, sessionId: forked, message: 'in the branch' });
    await fx.recall.summaryIdle();
    const [log] = await fx.recall.dialogueLog(U, forked);
    expect(log!.memoryContext.startsWith(`[SUMMARY]\n${carried.at(-1)!.text}\n[SESSION]\n`)).toBe(true);
    const branch = await fx.recall.summaries(U, forked);
    expect(branch.slice(0, carried.length)).toEqual(carried);
    // A fork before the first summary's end starts with none.
    const early = await fx.recall.forkSession(U, S, 1);
    expect(await fx.recall.summaries(U, early)).toEqual([]);
    // The source is untouched, and deleting it leaves the fork's summaries as they were.
    expect(await fx.recall.summaries(U, S)).toEqual(source);
    await fx.recall.deleteSession(U, S);
    expect(await listSummaries(fx.memory, sessionConversationId(U, forked))).toEqual(branch);
  });

  it('refuses invalid summary options when the service is created', () => {
    expect(() => openRecall({ summary: { keepLast: -1 } })).toThrow(/keepLast/);
    expect(() => openRecall({ summary: { maxTokens: 0 } })).toThrow(/maxTokens/);
  });
});
