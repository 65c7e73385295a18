import { afterEach, describe, expect, it } from 'vitest';
import type { LlmResponse, LlmService } from '../../src/llm/llm-service.ts';
import { openRecall, type RecallFixture } from '../support/recall-fixture.ts';

// recall.chat({ ..., idempotencyKey }): a retried turn returns the stored reply without a
// second model call, even while the first attempt is still running.

let fx: RecallFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

const U = 'demo-user';

/** An LLM that counts its calls and answers `reply <n>` once `release()` is called. */
function gatedLlm() {
  let calls = 0;
  let open: () => void = () => {};
  const gate = new Promise<void>((resolve) => (open = resolve));
  const llm: LlmService = {
    async chat(): Promise<LlmResponse> {
      calls++;
      const n = calls;
      await gate;
      return { content: `reply ${n}` };
    },
  };
  return { llm, calls: () => calls, release: () => open() };
}

describe('chat with an idempotency key', () => {
  it('a retry after the turn answered returns the stored reply, with no second model call and no new rows', async () => {
    const g = gatedLlm();
    g.release();
    fx = openRecall({ llm: g.llm });
    const first = await fx.recall.chat({ userId: U, sessionId: 's', message: 'hello', idempotencyKey: 'turn-1' });
    const callsAfterFirst = g.calls();
    const retry = await fx.recall.chat({ userId: U, sessionId: 's', message: 'hello', idempotencyKey: 'turn-1' });
    expect(retry).toEqual(first);
    expect(g.calls()).toBe(callsAfterFirst);
    expect((await fx.recall.getSessionMessages(U, 's')).map((r) => r.content)).toEqual(['hello', 'reply 1']);
    expect(await fx.recall.dialogueLog(U, 's')).toHaveLength(1);
  });

  it('a retry concurrent with the first attempt awaits it: one model call, one pair of rows', async () => {
    const g = gatedLlm();
    fx = openRecall({ llm: g.llm });
    const a = fx.recall.chat({ userId: U, sessionId: 's', message: 'hello', idempotencyKey: 'k' });
    const b = fx.recall.chat({ userId: U, sessionId: 's', message: 'hello', idempotencyKey: 'k' });
    g.release();
    const [ra, rb] = await Promise.all([a, b]);
    expect(rb).toEqual(ra);
    expect(ra.reply).toBe('reply 1');
    const rows = await fx.recall.getSessionMessages(U, 's');
    expect(rows.map((r) => r.content)).toEqual(['hello', 'reply 1']);
  });

  it('different keys are different turns', async () => {
    fx = openRecall();
    await fx.recall.chat({ userId: U, sessionId: 's', message: 'one', idempotencyKey: 'a' });
    await fx.recall.chat({ userId: U, sessionId: 's', message: 'one', idempotencyKey: 'b' });
    expect(await fx.recall.getSessionMessages(U, 's')).toHaveLength(4);
  });

  it('keyed turns leave only their rows to a session search (the raw LMDB scan)', async () => {
    fx = openRecall();
    for (const k of ['a', 'b', 'c']) await fx.recall.chat({ userId: U, sessionId: 's', message: `tea ${k}`, idempotencyKey: k });
    const found = await fx.recall.searchSession({ userId: U, sessionId: 's', keyword: '', limit: 50 });
    expect(found.map((r) => r.message_id)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('a bad key is rejected with invalid_option before anything is stored', async () => {
    fx = openRecall();
    const error = await fx.recall.chat({ userId: U, sessionId: 's', message: 'x', idempotencyKey: '' }).catch((e: { code: string }) => e.code);
    expect(error).toBe('invalid_option');
    expect(await fx.recall.getSessionMessages(U, 's')).toEqual([]);
  });

  it('deleting the session forgets its keys', async () => {
    fx = openRecall();
    await fx.recall.chat({ userId: U, sessionId: 's', message: 'one', idempotencyKey: 'a' });
    await fx.recall.deleteSession(U, 's');
    await fx.recall.chat({ userId: U, sessionId: 's', message: 'one', idempotencyKey: 'a' });
    expect(await fx.recall.getSessionMessages(U, 's')).toHaveLength(2);
  });
});
