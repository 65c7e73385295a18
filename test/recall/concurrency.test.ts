import { afterEach, describe, expect, it } from 'vitest';
import { openRecall, type RecallFixture } from '../support/recall-fixture.ts';
import { scriptedLlm, says } from '../support/scripted-llm.ts';

let fx: RecallFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

const U = 'u';

describe('concurrent turns', () => {
  it('parallel turns on one session give unique, contiguous ids, and every reply follows its message', async () => {
    fx = openRecall();
    const n = 12;
    const replies = await Promise.all(
      Array.from({ length: n }, (_, i) => fx!.recall.chat({ userId: U, sessionId: 's', message: `m${i}` })),
    );
    expect(replies.map((r) => r.reply)).toEqual(Array.from({ length: n }, (_, i) => `收到：m${i}。我已经记录到记忆中。`));
    const rows = await fx.recall.getSessionMessages(U, 's');
    expect(rows.map((r) => r.messageId)).toEqual(Array.from({ length: 2 * n }, (_, i) => i + 1));
    for (let i = 0; i < n; i++) {
      const asked = rows.findIndex((r) => r.content === `m${i}`);
      const answered = rows.findIndex((r) => r.content === `收到：m${i}。我已经记录到记忆中。`);
      expect(asked).toBeGreaterThanOrEqual(0);
      expect(answered).toBeGreaterThan(asked);
    }
    const daily = await fx.recall.dailyMessages(U);
    expect(daily.map((r) => r.messageId)).toEqual(Array.from({ length: 2 * n }, (_, i) => i + 1));
    expect(await fx.recall.dialogueLog(U)).toHaveLength(n);
  });

  it('parallel first turns of many sessions of one user lose no index entry', async () => {
    fx = openRecall();
    const sessions = Array.from({ length: 10 }, (_, i) => `s${i}`);
    await Promise.all(sessions.map((s) => fx!.recall.chat({ userId: U, sessionId: s, message: `hello ${s}` })));
    const listed = await fx.recall.listSessions(U);
    expect(listed.map((c) => c.sessionId).sort()).toEqual([...sessions].sort());
    expect(Object.fromEntries(listed.map((c) => [c.sessionId, c.title]))).toEqual(
      Object.fromEntries(sessions.map((s) => [s, `hello ${s}`])),
    );
    const daily = await fx.recall.dailyMessages(U);
    expect(daily.map((r) => r.messageId)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
  });

  it('two parallel first turns on one session keep one title: the first turn to finish sets it', async () => {
    // Replies to turns; titles name the turn they were asked for, so two titles would differ.
    const llm = scriptedLlm([], (messages) =>
      messages[0]!.role === 'system' ? says('reply') : says(String(messages[0]!.content).includes('first') ? 'T-first' : 'T-second'),
    );
    fx = openRecall({ llm });
    const [a, b] = await Promise.all([
      fx.recall.chat({ userId: U, sessionId: 's', message: 'first' }),
      fx.recall.chat({ userId: U, sessionId: 's', message: 'second' }),
    ]);
    expect(['T-first', 'T-second']).toContain(a.title);
    expect(a.title).toBe(b.title);
    expect((await fx.recall.listSessions(U)).map((c) => c.title)).toEqual([a.title]);
  });

  it('parallel long-term writes each make a version; none is lost', async () => {
    fx = openRecall();
    await Promise.all(Array.from({ length: 8 }, (_, i) => fx!.recall.setLongTerm(U, `doc ${i}`)));
    const history = await fx.recall.longTermHistory(U);
    expect(history.map((v) => v.version)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(new Set(history.map((v) => v.content)).size).toBe(8);
  });

  it('close waits for running turns and refuses new calls with recall_closed', async () => {
    fx = openRecall();
    const running = fx.recall.chat({ userId: U, sessionId: 's', message: 'in flight' });
    const closing = fx.recall.close();
    await expect(fx.recall.chat({ userId: U, sessionId: 's', message: 'late' })).rejects.toMatchObject({ code: 'recall_closed' });
    await closing;
    expect((await running).reply).toBe('收到：in flight。我已经记录到记忆中。');
    expect(await fx.memory.lastId('session/u/s')).toBe(2);
  });
});
