import { afterEach, describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../src/errors.ts';
import { openRecall, type RecallFixture } from '../support/recall-fixture.ts';

let fx: RecallFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

describe('per-user memory fails closed', () => {
  async function aliceHasASecret(): Promise<void> {
    await fx!.recall.chat({ userId: 'alice', sessionId: 'shared-id', message: 'my secret is 42' });
    await fx!.recall.setLongTerm('alice', 'alice likes tea');
  }

  it("another user's calls with the same session id reach nothing", async () => {
    fx = openRecall();
    await aliceHasASecret();
    const r = fx.recall;
    expect(await r.getSessionMessages('bob', 'shared-id')).toEqual([]);
    expect(await r.searchSession({ userId: 'bob', sessionId: 'shared-id', keyword: 'secret' })).toEqual([]);
    expect(await r.searchSession({ userId: 'bob', sessionId: 'shared-id', keyword: '' })).toEqual([]);
    expect(await r.searchDaily({ userId: 'bob', keyword: 'secret' })).toEqual([]);
    expect(await r.sessionWindow({ userId: 'bob', sessionId: 'shared-id', messageId: 1, after: 5 })).toEqual([]);
    expect(await r.dailyWindow({ userId: 'bob', messageId: 1, after: 5 })).toEqual([]);
    expect(await r.dailyMessages('bob')).toEqual([]);
    expect(await r.listSessions('bob')).toEqual([]);
    expect(await r.getLongTerm('bob')).toBe('');
    expect(await r.dialogueLog('bob')).toEqual([]);
    expect(await r.deleteSession('bob', 'shared-id')).toBe(false);
    expect(await r.getSessionMessages('alice', 'shared-id')).toHaveLength(2);
  });

  it("a user whose id prefixes another's sees none of the other's rows", async () => {
    fx = openRecall();
    await fx.recall.chat({ userId: 'ab', sessionId: 's', message: 'from ab' });
    await fx.recall.chat({ userId: 'a', sessionId: 'bs', message: 'from a' });
    expect((await fx.recall.searchDaily({ userId: 'a', keyword: 'from' })).map((r) => r.content)).toEqual([
      'from a',
      '收到：from a。我已经记录到记忆中。',
    ]);
    expect((await fx.recall.listSessions('a')).map((c) => c.sessionId)).toEqual(['bs']);
  });

  it("a turn's tools are bound to its user and session", async () => {
    fx = openRecall();
    await aliceHasASecret();
    await fx.recall.chat({ userId: 'bob', sessionId: 'b', message: 'hello' });
    const tools = fx.recall.memoryTools('bob', 'b');
    const run = (name: string, args: Record<string, unknown>) => tools.find((t) => t.name === name)!.execute(args as never, {} as never);
    expect(await run('search_daily', { keyword: 'secret' })).toBe('no matched daily messages');
    expect(await run('search_session', { keyword: 'secret' })).toBe('no matched session messages');
    expect(await run('get_session_window', { message_id: 1, after: 3 })).not.toContain('secret');
    await run('remember_note', { note: 'bob likes coffee' });
    expect(await fx.recall.getLongTerm('alice')).toBe('alice likes tea');
    expect(await fx.recall.getLongTerm('bob')).toBe('bob likes coffee');
  });

  it("deleting one user's session leaves the other user's session of the same id", async () => {
    fx = openRecall();
    await aliceHasASecret();
    await fx.recall.chat({ userId: 'bob', sessionId: 'shared-id', message: 'bob here' });
    await fx.recall.deleteSession('bob', 'shared-id');
    expect(await fx.recall.getSessionMessages('alice', 'shared-id')).toHaveLength(2);
    expect(await fx.recall.searchDaily({ userId: 'alice', keyword: 'secret' })).toHaveLength(2);
  });
});

describe('bad ids are refused with invalid_id, and nothing is written', () => {
  const bad = ['a\u0000b', 'a\nb', '', 'x'.repeat(129), ' padded', 'padded '];

  it.each(bad)('chat with user id %j', async (id) => {
    fx = openRecall();
    const err = await fx.recall.chat({ userId: id, sessionId: 's', message: 'x' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidInputError);
    expect((err as InvalidInputError).code).toBe('invalid_id');
  });

  it.each(bad)('chat with session id %j', async (id) => {
    fx = openRecall();
    await expect(fx.recall.chat({ userId: 'u', sessionId: id, message: 'x' })).rejects.toMatchObject({ code: 'invalid_id' });
    expect(await fx.recall.dailyMessages('u')).toEqual([]);
    expect(await fx.recall.listSessions('u')).toEqual([]);
  });

  it('every entry point checks its ids', async () => {
    fx = openRecall();
    const r = fx.recall;
    const calls: Promise<unknown>[] = [
      r.listSessions('a\nb'),
      r.createSession(''),
      r.getSessionMessages('u', ' x'),
      r.deleteSession('u', 'a\tb'),
      r.searchSession({ userId: 'u', sessionId: 's ', keyword: '' }),
      r.searchDaily({ userId: '\u0000u', keyword: '' }),
      r.sessionWindow({ userId: 'u', sessionId: 'x\u0000', messageId: 1 }),
      r.dailyWindow({ userId: 'x'.repeat(129), messageId: 1 }),
      r.getLongTerm(''),
      r.setLongTerm(' u', 'x'),
      r.undoLongTerm('a\rb'),
      r.longTermHistory('\u007f'),
      r.dialogueLog('u', '\ts'),
      r.dailyMessages('u\n'),
    ];
    for (const call of calls) await expect(call).rejects.toMatchObject({ code: 'invalid_id' });
    expect(() => r.memoryTools('u', '')).toThrow(InvalidInputError);
  });
});
