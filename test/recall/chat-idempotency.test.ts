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
    expect(found.map((r) => r.messageId)).toEqual([1, 2, 3, 4, 5, 6]);
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

  describe('a retry of a failed keyed turn', () => {
    /** An LLM that fails its first `failures` calls, then answers `reply <n>` and records what it was sent. */
    function flakyLlm(failures: number) {
      let calls = 0;
      const prompts: string[] = [];
      const llm: LlmService = {
        async chat(messages): Promise<LlmResponse> {
          calls++;
          prompts.push(messages.map((m) => (typeof m.content === 'string' ? m.content : '')).join('\n'));
          if (calls <= failures) throw Object.assign(new Error('upstream 502'), { code: 'llm_error' });
          return { content: `reply ${calls}` };
        },
      };
      return { llm, calls: () => calls, prompts };
    }
    const rows = async () => (await fx!.recall.getSessionMessages(U, 's')).map((r) => [r.role, r.content, r.error === undefined ? 'ok' : 'error']);

    it('stores the message again before the reply, so the reply follows the message it answers', async () => {
      const g = flakyLlm(1);
      fx = openRecall({ llm: g.llm });
      await expect(fx.recall.chat({ userId: U, sessionId: 's', message: 'hello', idempotencyKey: 'k' })).rejects.toThrow();
      const answered = await fx.recall.chat({ userId: U, sessionId: 's', message: 'hello', idempotencyKey: 'k' });
      expect(answered.reply).toBe('reply 2');
      expect(await rows()).toEqual([
        ['user', 'hello', 'ok'],
        ['assistant', '', 'error'],
        ['user', 'hello', 'ok'],
        ['assistant', 'reply 2', 'ok'],
      ]);
    });

    it('is then exactly-once like any keyed turn: a further retry gets the reply, no model call, no rows', async () => {
      const g = flakyLlm(2);
      fx = openRecall({ llm: g.llm });
      for (let i = 0; i < 2; i++) await expect(fx.recall.chat({ userId: U, sessionId: 's', message: 'hello', idempotencyKey: 'k' })).rejects.toThrow();
      const answered = await fx.recall.chat({ userId: U, sessionId: 's', message: 'hello', idempotencyKey: 'k' });
      const calls = g.calls();
      expect(await fx.recall.chat({ userId: U, sessionId: 's', message: 'hello', idempotencyKey: 'k' })).toEqual(answered);
      expect(g.calls()).toBe(calls);
      expect((await rows()).map(([role, , state]) => `${role}:${state}`)).toEqual(['user:ok', 'assistant:error', 'user:ok', 'assistant:error', 'user:ok', 'assistant:ok']);
    });

    it('leaves the failed attempt out of the next turn\'s context and keeps the answered one', async () => {
      const g = flakyLlm(1);
      fx = openRecall({ llm: g.llm });
      await expect(fx.recall.chat({ userId: U, sessionId: 's', message: 'my cat is Mochi', idempotencyKey: 'k' })).rejects.toThrow();
      await fx.recall.chat({ userId: U, sessionId: 's', message: 'my cat is Mochi', idempotencyKey: 'k' });
      await fx.recall.chat({ userId: U, sessionId: 's', message: 'what is my cat called?' });
      const context = g.prompts.at(-1)!;
      expect(context.match(/my cat is Mochi/g)).toHaveLength(1);
      expect(context).toContain('reply 2');
    });
  });
});
