import { afterEach, describe, expect, it } from 'vitest';
import { openRecall, type RecallFixture } from '../support/recall-fixture.ts';

let fx: RecallFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

const U = 'u1';

/** Stores user rows directly through chat turns (offline), one per message. */
async function say(sessionId: string, ...messages: string[]): Promise<void> {
  for (const message of messages) await fx!.recall.chat({ userId: U, sessionId, message });
}

describe('session search', () => {
  it('case-insensitive substring on content, most recent matches ascending', async () => {
    fx = openRecall();
    await say('s', 'Apple pie', 'banana', 'APPLE tart');
    const hits = await fx.recall.searchSession({ userId: U, sessionId: 's', keyword: '  aPPle ', limit: 2 });
    // Rows: 1 Apple pie, 2 reply, 3 banana, 4 reply, 5 APPLE tart, 6 reply; every reply echoes the message.
    expect(hits.map((r) => r.messageId)).toEqual([5, 6]);
    expect(hits[0]).toEqual({ ts: '2026-04-08T10:00:00', role: 'user', content: 'APPLE tart', messageId: 5, toolCalls: [] });
  });

  it('role, ts and tool outputs are not searched', async () => {
    fx = openRecall();
    await say('s', 'hello');
    expect(await fx.recall.searchSession({ userId: U, sessionId: 's', keyword: 'user' })).toEqual([]);
    expect(await fx.recall.searchSession({ userId: U, sessionId: 's', keyword: '2026' })).toEqual([]);
  });

  it('an empty keyword returns the last N rows; limit is clamped to 1..200', async () => {
    fx = openRecall();
    await say('s', 'a', 'b');
    expect((await fx.recall.searchSession({ userId: U, sessionId: 's', keyword: '', limit: 3 })).map((r) => r.messageId)).toEqual([2, 3, 4]);
    expect((await fx.recall.searchSession({ userId: U, sessionId: 's', keyword: ' ', limit: 0 })).map((r) => r.messageId)).toEqual([4]);
    expect((await fx.recall.searchSession({ userId: U, sessionId: 's', keyword: '', limit: -5 })).map((r) => r.messageId)).toEqual([4]);
    expect(await fx.recall.searchSession({ userId: U, sessionId: 's', keyword: '' })).toHaveLength(4);
  });

  it('limit defaults to 20 and caps at 200', async () => {
    fx = openRecall();
    const rows = Array.from({ length: 250 }, (_, i) => ({ message: { role: 'user' as const, content: `m${i}` }, meta: { ts: 't' } }));
    await fx.memory.append('session/u1/big', rows);
    expect(await fx.recall.searchSession({ userId: U, sessionId: 'big', keyword: 'm' })).toHaveLength(20);
    const capped = await fx.recall.searchSession({ userId: U, sessionId: 'big', keyword: 'm', limit: 1000 });
    expect(capped.map((r) => r.messageId)).toEqual(Array.from({ length: 200 }, (_, i) => i + 51));
  });

  it('a search across more rows than a scan chunk still finds the oldest match', async () => {
    fx = openRecall();
    const rows = Array.from({ length: 4_500 }, (_, i) => ({ message: { role: 'user' as const, content: i === 0 ? 'needle' : 'hay' }, meta: { ts: 't' } }));
    await fx.memory.append('session/u1/long', rows);
    expect((await fx.recall.searchSession({ userId: U, sessionId: 'long', keyword: 'NEEDLE' })).map((r) => r.messageId)).toEqual([1]);
  });

  it('an unknown session gives nothing', async () => {
    fx = openRecall();
    expect(await fx.recall.searchSession({ userId: U, sessionId: 'nope', keyword: '' })).toEqual([]);
  });
});

describe('daily search', () => {
  async function twoDays(): Promise<void> {
    fx!.clock.set('2026-04-07T09:00:00+08:00');
    await say('a', 'swim x');
    fx!.clock.set('2026-04-08T09:00:00+08:00');
    await say('b', 'swim y');
  }

  it('without a day it searches every day; anchors repeat across days and hits say their day', async () => {
    fx = openRecall();
    await twoDays();
    const hits = await fx.recall.searchDaily({ userId: U, keyword: 'SWIM', limit: 2 });
    // The newest two matches: day 7's reply (#2) and day 8's user row (#1)? No: day 8 has #1 user and #2 reply.
    expect(hits.map((r) => [r.day, r.messageId, r.role])).toEqual([
      ['2026-04-08', 1, 'user'],
      ['2026-04-08', 2, 'assistant'],
    ]);
    const all = await fx.recall.searchDaily({ userId: U, keyword: 'swim' });
    expect(all.map((r) => [r.day, r.messageId, r.sessionId])).toEqual([
      ['2026-04-07', 1, 'a'],
      ['2026-04-07', 2, 'a'],
      ['2026-04-08', 1, 'b'],
      ['2026-04-08', 2, 'b'],
    ]);
  });

  it('a valid day searches that day only; a valid day without rows gives nothing', async () => {
    fx = openRecall();
    await twoDays();
    const hits = await fx.recall.searchDaily({ userId: U, keyword: 'swim', day: ' 2026-04-07 ' });
    expect(hits.map((r) => r.content)).toEqual(['swim x', '收到：swim x。我已经记录到记忆中。']);
    expect(await fx.recall.searchDaily({ userId: U, keyword: 'swim', day: '2026-04-01' })).toEqual([]);
  });

  it('an invalid day falls back to every day', async () => {
    fx = openRecall();
    await twoDays();
    for (const day of ['bad', '2026-4-7', '2026-02-30', '../2026-04-07']) {
      expect(await fx.recall.searchDaily({ userId: U, keyword: 'swim', day }), day).toHaveLength(4);
    }
  });

  it('an empty keyword returns the last N rows across days', async () => {
    fx = openRecall();
    await twoDays();
    expect((await fx.recall.searchDaily({ userId: U, keyword: '', limit: 3 })).map((r) => [r.day, r.messageId])).toEqual([
      ['2026-04-07', 2],
      ['2026-04-08', 1],
      ['2026-04-08', 2],
    ]);
  });
});

describe('windows', () => {
  it('session window: before/after in rows, clipped at the edges, negatives as 0', async () => {
    fx = openRecall();
    await say('s', 'a', 'b', 'c');
    const ids = async (messageId: unknown, before: number, after: number) =>
      (await fx!.recall.sessionWindow({ userId: U, sessionId: 's', messageId: messageId as number, before, after })).map((r) => r.messageId);
    expect(await ids(3, 1, 1)).toEqual([2, 3, 4]);
    expect(await ids(1, 5, 1)).toEqual([1, 2]);
    expect(await ids(6, 1, 9)).toEqual([5, 6]);
    expect(await ids(3, -4, -1)).toEqual([3]);
    expect(await ids('3', 0, 1)).toEqual([3, 4]);
  });

  it('session window: an unknown or invalid anchor gives nothing', async () => {
    fx = openRecall();
    await say('s', 'a');
    for (const anchor of [0, -1, 3, 99, 'x', 2.5, true]) {
      expect(await fx.recall.sessionWindow({ userId: U, sessionId: 's', messageId: anchor as number, before: 1, after: 1 }), String(anchor)).toEqual([]);
    }
  });

  it('daily window: an empty day means today in the configured zone', async () => {
    fx = openRecall();
    fx.clock.set('2026-04-07T09:00:00+08:00');
    await say('a', 'yesterday');
    fx.clock.set('2026-04-08T09:00:00+08:00');
    await say('a', 'today');
    const today = await fx.recall.dailyWindow({ userId: U, messageId: 1, after: 5 });
    expect(today.map((r) => [r.day, r.content.slice(0, 5)])).toEqual([
      ['2026-04-08', 'today'],
      ['2026-04-08', '收到：to'],
    ]);
    const earlier = await fx.recall.dailyWindow({ userId: U, messageId: 2, before: 1, day: '2026-04-07' });
    expect(earlier.map((r) => r.messageId)).toEqual([1, 2]);
    expect(await fx.recall.dailyWindow({ userId: U, messageId: 1, day: 'not-a-day' })).toEqual([]);
    expect(await fx.recall.dailyWindow({ userId: U, messageId: 9 })).toEqual([]);
  });

  it('daily window counts rows across the holes a deleted session leaves', async () => {
    fx = openRecall();
    await say('keep', 'k1');
    await say('gone', 'g1');
    await say('keep', 'k2');
    // Day rows: 1 k1, 2 reply, 3 g1, 4 reply, 5 k2, 6 reply.
    await fx.recall.deleteSession(U, 'gone');
    const rows = await fx.recall.dailyWindow({ userId: U, messageId: 5, before: 1, after: 0 });
    expect(rows.map((r) => r.messageId)).toEqual([2, 5]);
    expect((await fx.recall.dailyMessages(U)).map((r) => r.messageId)).toEqual([1, 2, 5, 6]);
  });

  it('after a deletion, a new daily row continues the numbering instead of reusing an id', async () => {
    fx = openRecall();
    await say('keep', 'k1');
    await say('gone', 'g1');
    await fx.recall.deleteSession(U, 'gone');
    await say('keep', 'k2');
    expect((await fx.recall.dailyMessages(U)).map((r) => r.messageId)).toEqual([1, 2, 5, 6]);
  });
});

describe('deleting a conversation', () => {
  it('its rows, daily rows, log rows and index entry go; other sessions stay', async () => {
    fx = openRecall();
    await say('keep', 'k');
    await say('gone', 'g');
    expect(await fx.recall.deleteSession(U, 'gone')).toBe(true);
    expect(await fx.recall.getSessionMessages(U, 'gone')).toEqual([]);
    expect((await fx.recall.listSessions(U)).map((c) => c.sessionId)).toEqual(['keep']);
    expect((await fx.recall.dailyMessages(U)).every((r) => r.sessionId === 'keep')).toBe(true);
    expect((await fx.recall.dialogueLog(U)).map((l) => l.sessionId)).toEqual(['keep']);
    expect(await fx.recall.getSessionMessages(U, 'keep')).toHaveLength(2);
  });

  it('deleting an unknown session is harmless and says false', async () => {
    fx = openRecall();
    expect(await fx.recall.deleteSession(U, 'never')).toBe(false);
  });

  it('a deleted session id starts over at 1 with a fresh title', async () => {
    fx = openRecall();
    await say('s', 'first life');
    await fx.recall.deleteSession(U, 's');
    const again = await fx.recall.chat({ userId: U, sessionId: 's', message: 'second life' });
    expect(again.title).toBe('second life');
    expect((await fx.recall.getSessionMessages(U, 's')).map((r) => r.messageId)).toEqual([1, 2]);
  });
});

describe('recent session rows', () => {
  it('the recent-session tool returns the last max(1, rounds) * 2 rows', async () => {
    fx = openRecall();
    await say('s', 'a', 'b', 'c');
    const tool = fx.recall.memoryTools(U, 's').find((t) => t.name === 'get_recent_session')!;
    const ctx = {} as never;
    expect(String(await tool.execute({ rounds: 1 }, ctx)).split('\n').map((l) => l.split(' ')[0])).toEqual(['#5', '#6']);
    expect(String(await tool.execute({ rounds: 0 }, ctx)).split('\n')).toHaveLength(2);
    expect(String(await tool.execute({}, ctx)).split('\n')).toHaveLength(6);
  });
});
