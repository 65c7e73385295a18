import { afterEach, describe, expect, it } from 'vitest';
import type { LlmResponse, LlmService } from '../../src/llm/llm-service.ts';
import { createSummarizer } from '../../src/provider/summarizer.ts';
import { summaryConversationId } from '../../src/provider/summary-record.ts';
import { sessionConversationId } from '../../src/recall/recall-ids.ts';
import { openRecall, type RecallFixture } from '../support/recall-fixture.ts';

let fx: RecallFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

const U = 'u';
const S = 's1';
const C = sessionConversationId(U, S);
const long = (i: number) => `turn ${i}: ${'the quick brown fox jumps over the lazy dog '.repeat(6)}`;

describe('rolling summaries of recall sessions', () => {
  it('is off by default: no summary is written and the context has no [SUMMARY]', async () => {
    fx = openRecall();
    for (let i = 1; i <= 6; i++) await fx.recall.chat({ userId: U, sessionId: S, message: long(i) });
    await createSummarizer(fx.memory).idle();
    expect(await fx.memory.lastId(summaryConversationId(C))).toBe(0);
    const log = await fx.recall.dialogueLog(U, S);
    expect(log.every((row) => !row.memoryContext.includes('[SUMMARY]'))).toBe(true);
  });

  it('summarizes the older part after a turn and sends the latest summary as [SUMMARY] before [SESSION]', async () => {
    fx = openRecall({ summary: { keepLast: 1, maxTokens: 60 } });
    for (let i = 1; i <= 5; i++) {
      await fx.recall.chat({ userId: U, sessionId: S, message: long(i) });
      await createSummarizer(fx.memory).settled(C);
    }
    const summaries = await createSummarizer(fx.memory).summaries(C);
    expect(summaries.length).toBeGreaterThan(0);
    const latest = summaries.at(-1)!;
    await fx.recall.chat({ userId: U, sessionId: S, message: 'and now?' });
    const last = (await fx.recall.dialogueLog(U, S)).at(-1)!;
    expect(last.memoryContext.startsWith(`[SUMMARY]\n${latest.text}\n[SESSION]\n`)).toBe(true);
  });

  it('never delays the reply: the turn answers while the summarizing model is still busy', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    let calls = 0;
    const slow: LlmService = {
      async chat(): Promise<LlmResponse> {
        calls++;
        await gate;
        return { content: 'summary of the early turns' };
      },
    };
    fx = openRecall({ summary: { keepLast: 1, maxTokens: 40, llm: slow } });
    for (let i = 1; i <= 4; i++) await fx.recall.chat({ userId: U, sessionId: S, message: long(i) });
    // Every turn answered although the summarization it started is still waiting for the model.
    expect(calls).toBe(1);
    expect(await fx.memory.lastId(summaryConversationId(C))).toBe(0);
    release();
    await createSummarizer(fx.memory).idle();
    expect((await createSummarizer(fx.memory).latest(C))?.text).toBe('summary of the early turns');
  });

  it('deleting a session deletes its summaries', async () => {
    fx = openRecall({ summary: { keepLast: 1, maxTokens: 40 } });
    for (let i = 1; i <= 4; i++) await fx.recall.chat({ userId: U, sessionId: S, message: long(i) });
    await createSummarizer(fx.memory).idle();
    expect(await fx.memory.lastId(summaryConversationId(C))).toBeGreaterThan(0);
    expect(await fx.recall.deleteSession(U, S)).toBe(true);
    expect(await fx.memory.lastId(summaryConversationId(C))).toBe(0);
  });

  it('refuses invalid summary options when the service is created', () => {
    expect(() => openRecall({ summary: { keepLast: -1 } })).toThrow(/keepLast/);
  });
});
