import { afterEach, describe, expect, it } from 'vitest';
import { putDailyRow } from '../../src/recall/storage/lmdb/daily-store.ts';
import { commit, openRecallDbs } from '../../src/recall/storage/lmdb/recall-dbs.ts';
import { createSearchPool } from '../../src/recall/index.ts';
import { dropUserIndex, readStats } from '../../src/recall/storage/lmdb/search/search-index.ts';
import { rebuildUserIndex } from '../../src/recall/storage/lmdb/search/rebuild.ts';
import { noteLiveRemoval } from '../../src/recall/storage/lmdb/search/rebuild-watch.ts';
import { INDEX_FORMAT, TAIL } from '../../src/recall/storage/lmdb/search/search-dbs.ts';
import { dailyDoc } from '../../src/recall/search/doc-numbers.ts';
import { encodeChunk } from '../../src/recall/storage/lmdb/search/posting-list.ts';
import { callsTools, says, scriptedLlm, toolCall } from '../support/scripted-llm.ts';
import { itLmdb, openRecall, type RecallFixture } from '../support/recall-fixture.ts';

let fx: RecallFixture | undefined;
const extra: RecallFixture[] = [];
afterEach(async () => {
  for (const f of extra.splice(0)) await f.recall.close();
  await fx?.close();
  fx = undefined;
});

const U = 'u1';

async function say(sessionId: string, ...messages: string[]): Promise<void> {
  for (const message of messages) await fx!.recall.chat({ userId: U, sessionId, message });
}

describe('ranked recall', () => {
  it('finds a natural-language question across sessions and days, best match first, with anchors', async () => {
    fx = openRecall();
    await say('a1', 'We planned the quarterly budget review for Friday', 'The cat knocked over my coffee');
    fx.clock.set('2026-04-09T09:00:00+08:00');
    await say('b2', 'Remind me to renew the passport before the trip to Lisbon');
    const hits = (await fx.recall.search({ userId: U, query: 'when is the budget reviewed?' })).items;
    expect(hits.length).toBeGreaterThan(0);
    expect(hits[0]).toMatchObject({ sessionId: 'a1', messageId: 1, day: '2026-04-08', source: 'session', role: 'user' });
    expect(hits[0]!.snippet).toContain('quarterly budget review');
    expect(hits[0]!.score).toBeGreaterThan(0);
    const other = (await fx.recall.search({ userId: U, query: 'passports for trips' })).items;
    expect(other[0]).toMatchObject({ sessionId: 'b2', messageId: 1, day: '2026-04-09' });
    // The anchor opens the session window as today.
    const window = await fx.recall.sessionWindow({ userId: U, sessionId: 'b2', messageId: other[0]!.messageId, after: 1 });
    expect(window.map((r) => r.messageId)).toEqual([1, 2]);
  });

  it('ranks a row holding the rarer term above one holding only common ones', async () => {
    fx = openRecall();
    await say('s', 'apple apple apple', 'apple pie', 'banana apple', 'zucchini bread');
    const hits = (await fx.recall.search({ userId: U, query: 'zucchini apple', roles: ['user'] })).items;
    expect(hits[0]!.snippet).toBe('zucchini bread');
    expect(hits.map((h) => h.role)).toEqual(hits.map(() => 'user'));
  });

  it('searches Chinese and Japanese by character bigrams', async () => {
    fx = openRecall();
    await say('zh', '我的生日是五月三号', '明天去北京出差');
    await say('ja', '東京の天気は晴れです');
    expect(((await fx.recall.search({ userId: U, query: '生日是哪天' })).items)[0]).toMatchObject({ sessionId: 'zh', messageId: 1 });
    expect(((await fx.recall.search({ userId: U, query: '北京出差' })).items)[0]).toMatchObject({ sessionId: 'zh', messageId: 3 });
    expect(((await fx.recall.search({ userId: U, query: '東京の天気' })).items)[0]).toMatchObject({ sessionId: 'ja', messageId: 1 });
  });

  it('folds case, width and inflection: ＭＥＥＴＩＮＧＳ finds "meeting"', async () => {
    fx = openRecall();
    await say('s', 'Meeting moved to noon');
    expect(((await fx.recall.search({ userId: U, query: 'ＭＥＥＴＩＮＧＳ' })).items)[0]).toMatchObject({ messageId: 1 });
  });

  it('finds nothing for a query of stop words only, or for another user', async () => {
    fx = openRecall();
    await say('s', 'the secret word is xylophone');
    expect((await fx.recall.search({ userId: U, query: 'the is' })).items).toEqual([]);
    expect((await fx.recall.search({ userId: 'u2', query: 'xylophone' })).items).toEqual([]);
    expect((await fx.recall.search({ userId: U, query: 'xylophone' })).items).toHaveLength(2);
  });

  it('a deleted session no longer matches, and the others still do', async () => {
    fx = openRecall();
    await say('gone', 'my locker code is 4711');
    await say('kept', 'the locker is on floor two');
    expect(((await fx.recall.search({ userId: U, query: 'locker' })).items).map((h) => h.sessionId)).toContain('gone');
    await fx.recall.deleteSession(U, 'gone');
    const hits = (await fx.recall.search({ userId: U, query: 'locker 4711' })).items;
    expect(hits.length).toBeGreaterThan(0);
    expect(hits.every((h) => h.sessionId === 'kept')).toBe(true);
  });

  // itLmdb: LMDB's index itself (its posting lists, formats, rebuild transactions, pool).
  itLmdb('removes postings from the middle of a long posting list', async () => {
    fx = openRecall();
    const dbs = openRecallDbs(fx.env);
    await commit(dbs, () => {
      for (let i = 0; i < 400; i++) {
        const s = i % 2 === 0 ? 'even' : 'odd';
        putDailyRow(dbs, U, { day: '2026-04-08', ts: '2026-04-08T10:00:00', role: 'user', content: `common token ${i}`, session_id: s, session_message_id: i + 1 });
      }
    });
    await commit(dbs, () => undefined);
    expect((await fx.recall.search({ userId: U, query: 'common', limit: 100 })).items).toHaveLength(100);
    await fx.recall.deleteSession(U, 'even');
    const left = (await fx.recall.search({ userId: U, query: 'common', limit: 100 })).items;
    expect(left).toHaveLength(100);
    expect(left.every((h) => h.sessionId === 'odd')).toBe(true);
    expect((await fx.recall.search({ userId: U, query: 'common', sessionId: 'even' })).items).toEqual([]);
  });

  it('indexes long-term memory by line, and an undo takes its lines out', async () => {
    fx = openRecall();
    await fx.recall.setLongTerm(U, '- allergic to peanuts\n- prefers window seats');
    const hit = ((await fx.recall.search({ userId: U, query: 'peanut allergy' })).items)[0];
    expect(hit).toMatchObject({ source: 'long_term', sessionId: null, messageId: 1, role: 'memory', snippet: '- allergic to peanuts' });
    await fx.recall.setLongTerm(U, '- prefers aisle seats');
    expect((await fx.recall.search({ userId: U, query: 'peanuts' })).items).toEqual([]);
    await fx.recall.undoLongTerm(U);
    expect(((await fx.recall.search({ userId: U, query: 'peanuts' })).items)[0]).toMatchObject({ source: 'long_term' });
  });

  it('indexes tool-call inputs and outputs, and filters by tool', async () => {
    const llm = scriptedLlm([
      callsTools(toolCall('c1', 'search_daily', { keyword: 'flamingo' })),
      says('nothing about flamingos'),
      says('title'),
    ]);
    fx = openRecall({ llm });
    await fx.recall.chat({ userId: U, sessionId: 's', message: 'what did I say about birds?' });
    const hits = (await fx.recall.search({ userId: U, query: 'flamingo', tool: 'search_daily' })).items;
    expect(hits).toHaveLength(1);
    expect(hits[0]).toMatchObject({ sessionId: 's', messageId: 2, role: 'assistant' });
    expect((await fx.recall.search({ userId: U, query: 'flamingo', tool: 'remember_note' })).items).toEqual([]);
  });

  it('filters by session, day and day range', async () => {
    fx = openRecall();
    await say('s1', 'orchid watering schedule');
    fx.clock.set('2026-04-10T09:00:00+08:00');
    await say('s2', 'orchid repotting');
    const all = async (q: object) => (await fx!.recall.search({ userId: U, query: 'orchid', roles: ['user'], ...q })).items.map((h) => `${h.sessionId}/${h.day}`);
    expect(await all({})).toHaveLength(2);
    expect(await all({ sessionId: 's2' })).toEqual(['s2/2026-04-10']);
    expect(await all({ day: '2026-04-08' })).toEqual(['s1/2026-04-08']);
    expect(await all({ from: '2026-04-09' })).toEqual(['s2/2026-04-10']);
    expect(await all({ to: '2026-04-09' })).toEqual(['s1/2026-04-08']);
  });

  it('rejects bad input with a typed error and reads nothing', async () => {
    fx = openRecall();
    const bad = (input: object) => fx!.recall.search({ userId: U, query: 'x', ...input } as never);
    await expect(bad({ userId: ' x' })).rejects.toMatchObject({ code: 'invalid_id' });
    await expect(bad({ query: 3 })).rejects.toMatchObject({ code: 'invalid_query' });
    await expect(bad({ day: '2026-13-01' })).rejects.toMatchObject({ code: 'invalid_day' });
    await expect(bad({ roles: 'user' })).rejects.toMatchObject({ code: 'invalid_filter' });
    await expect(bad({ limit: 1.5 })).rejects.toMatchObject({ code: 'invalid_filter' });
    await expect(bad({ sessionId: 'a\tb' })).rejects.toMatchObject({ code: 'invalid_id' });
  });

  itLmdb('a row and its postings are written in one transaction: an aborted one leaves neither', async () => {
    fx = openRecall();
    await say('s', 'first row about kayaks');
    const dbs = openRecallDbs(fx.env);
    // A synchronous transaction aborts on a throw (lmdb-js's async one does not roll back a
    // callback's throw), so this shows the postings ride in the row's own transaction.
    expect(() =>
      fx!.env.root.transactionSync(() => {
        putDailyRow(dbs, U, { day: '2026-04-08', ts: '2026-04-08T10:00:00', role: 'user', content: 'kayaks kayaks', session_id: 's', session_message_id: 99 });
        throw new Error('boom');
      }),
    ).toThrow('boom');
    const hits = (await fx.recall.search({ userId: U, query: 'kayaks' })).items;
    expect(hits.map((h) => h.messageId).sort()).toEqual([1, 2]);
    expect(readStats(dbs.search, U)[0]).toBe(2);
  });
});

describe('rebuilding the index', () => {
  itLmdb('rows written before the index are found after an automatic rebuild, scored as if indexed live', async () => {
    fx = openRecall();
    await say('s', 'the red kite flies high', 'a kite festival in May', 'nothing here');
    await fx.recall.setLongTerm(U, 'favourite bird: red kite');
    const live = (await fx.recall.search({ userId: U, query: 'red kite', limit: 20 })).items;
    const dbs = openRecallDbs(fx.env);
    await commit(dbs, () => dropUserIndex(dbs.search, U));
    // Not live any more: writes do not index until the rebuild, which the next search runs.
    await say('s', 'kite surfing lessons');
    const rebuilt = (await fx.recall.search({ userId: U, query: 'red kite', limit: 20 })).items;
    expect(rebuilt.filter((h) => !h.snippet.includes('surfing')).length).toBe(live.length);
    expect(((await fx.recall.search({ userId: U, query: 'surfing' })).items).length).toBeGreaterThan(0);
    expect(await fx.recall.rebuildSearchIndex(U)).toBe(8);
    expect((await fx.recall.search({ userId: U, query: 'red kite', limit: 20 })).items).toEqual(rebuilt);
  });

  itLmdb('an index in the older format (format 1) on disk is dropped and rebuilt: its rows are found, its postings never read', async () => {
    fx = openRecall();
    await say('s', 'the osprey dives for fish', 'an osprey nest on the pole');
    const live = (await fx.recall.search({ userId: U, query: 'osprey nest', limit: 20 })).items;
    const dbs = openRecallDbs(fx.env);
    // What Mnemo wrote before format 2: `live` 1, and chunks of plain (delta, tf, length)
    // postings. This one claims a document the new decoder would misread.
    const old = Buffer.from([1, 0, 5, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 1, 3]);
    await commit(dbs, () => {
      dropUserIndex(dbs.search, U);
      dbs.search.meta.put([U, 'live'], 1);
      dbs.search.meta.put([U, 'docs'], 1);
      dbs.search.postings.put([U, 'osprei', 2 ** 53 - 1], old);
    });
    // Not live in this format: a delete and a write meanwhile leave the old postings alone.
    await say('s', 'osprey chicks fledged');
    const rebuilt = (await fx.recall.search({ userId: U, query: 'osprey nest', limit: 20 })).items;
    const ids = (hits: { messageId: number }[]) => hits.map((h) => h.messageId);
    expect(ids(rebuilt)).toEqual(expect.arrayContaining(ids(live)));
    expect(rebuilt[0]!.messageId).toBe(live[0]!.messageId);
    expect(dbs.search.meta.get([U, 'live'])).toBe(INDEX_FORMAT);
    expect(((await fx.recall.search({ userId: U, query: 'fledged' })).items).length).toBeGreaterThan(0);
    expect(((await fx.recall.search({ userId: U, query: 'osprey', limit: 20 })).items).every((h) => h.messageId > 0 && h.day !== '1900-01-01')).toBe(true);
  });

  itLmdb('an index in format 2 (its totals in three entries) is dropped and rebuilt at the first search', async () => {
    fx = openRecall();
    await say('s', 'the osprey dives for fish', 'an osprey nest on the pole');
    const live = (await fx.recall.search({ userId: U, query: 'osprey nest', limit: 20 })).items;
    const dbs = openRecallDbs(fx.env);
    // What format 2 wrote: `live` 2, `docs` / `length` / `pending`, chunks as now. This chunk
    // names a document with no row.
    const ghost = dailyDoc('2026-01-01', 7)!;
    await commit(dbs, () => {
      dropUserIndex(dbs.search, U);
      dbs.search.meta.put([U, 'live'], 2);
      dbs.search.meta.put([U, 'docs'], 1);
      dbs.search.meta.put([U, 'length'], 3);
      dbs.search.meta.put([U, 'pending'], 0);
      dbs.search.postings.put([U, 'osprei', TAIL], encodeChunk([{ doc: ghost, tf: 1, len: 3 }]));
    });
    const rebuilt = (await fx.recall.search({ userId: U, query: 'osprey nest', limit: 20 })).items;
    expect(rebuilt.map((h) => h.messageId)).toEqual(live.map((h) => h.messageId));
    expect(dbs.search.meta.get([U, 'live'])).toBe(INDEX_FORMAT);
    for (const old of ['docs', 'length', 'pending']) expect(dbs.search.meta.get([U, old])).toBeUndefined();
    expect(readStats(dbs.search, U)[0]).toBe(4); // the two turns' rows, the user's and the reply
    expect(((await fx.recall.search({ userId: U, query: 'osprey', limit: 20 })).items).every((h) => h.day !== '2026-01-01')).toBe(true);
  });

  itLmdb('a rebuild gathering many small transactions (read batches of 7 rows, ~40 postings a transaction) equals the live index, a write during it indexed once', async () => {
    fx = openRecall();
    const words = ['harbour', 'lantern', 'orchard', 'granite', 'meadow', 'falcon', 'copper', 'willow', 'ember', 'canyon'];
    const line = (i: number) => `${words[i % 10]} ${words[(i * 3) % 10]} ${words[(i * 7 + 1) % 10]} note ${i}`;
    for (let i = 0; i < 40; i++) await say(i % 3 === 0 ? 'a' : 'b', line(i));
    const queries = ['harbour lantern', 'falcon', 'copper willow ember', 'note 17', 'canyon meadow'];
    const answers = async () => Promise.all(queries.map(async (query) => (await fx!.recall.search({ userId: U, query, limit: 50 })).items));
    const live = await answers();
    const dbs = openRecallDbs(fx.env);
    const liveStats = readStats(dbs.search, U);
    await commit(dbs, () => dropUserIndex(dbs.search, U));
    expect(await rebuildUserIndex({ dbs, pool: undefined }, U, { rows: 7, postings: 40 })).toBe(liveStats[0]);
    expect(readStats(dbs.search, U).slice(0, 2)).toEqual(liveStats.slice(0, 2));
    expect(await answers()).toEqual(live);
    // Again, with a write landing while the rebuild runs: indexed by itself (the user is live
    // from the rebuild's first transaction on), skipped by the rebuild, counted once.
    await commit(dbs, () => dropUserIndex(dbs.search, U));
    const rebuilding = rebuildUserIndex({ dbs, pool: undefined }, U, { rows: 7, postings: 40 });
    await say('c', 'a quokka in the orchard');
    await rebuilding;
    expect(readStats(dbs.search, U)[0]).toBe(liveStats[0] + 2);
    const ids = (hits: { sessionId: string | null; messageId: number }[][]) => hits.map((h) => h.map((x) => `${x.sessionId}/${x.messageId}`).sort());
    expect(ids(await answers())).toEqual(ids(live));
    // The turn's two rows (the offline reply quotes the message), each once.
    const quokka = (await fx.recall.search({ userId: U, query: 'quokka' })).items;
    expect(quokka.map((h) => h.role).sort()).toEqual(['assistant', 'user']);
  });

  itLmdb('a rebuild holding the terms\' tails across many transactions writes what one transaction writes, and answers as the live index', async () => {
    fx = openRecall();
    const dbs = openRecallDbs(fx.env);
    const words = ['harbour', 'lantern', 'orchard', 'granite', 'meadow', 'falcon', 'copper'];
    // 700 rows over 7 days: 'harbour' in each (6 chunks of 128 and a tail), the others in fewer.
    await commit(dbs, () => {
      for (let i = 0; i < 700; i++) {
        const day = `2026-03-0${1 + Math.floor(i / 100)}`;
        const content = `harbour ${words[i % 7]} ${words[(i * 3) % 7]} ${words[(i * 5) % 7]} note ${i % 50}`;
        putDailyRow(dbs, U, { day, ts: `${day}T10:00:00`, role: 'user', content, session_id: null, session_message_id: null });
      }
    });
    const queries = ['harbour', 'lantern orchard', 'note 17', 'falcon copper meadow'];
    const answers = async () => Promise.all(queries.map(async (query) => (await fx!.recall.search({ userId: U, query, limit: 1000 })).items));
    const live = await answers();
    const postings = () => [...dbs.search.postings.getRange({ start: [U], end: [U, '\uffff'] })].map(({ key, value }) => [key, Buffer.from(value).toString('hex')]);
    await commit(dbs, () => dropUserIndex(dbs.search, U));
    expect(await rebuildUserIndex({ dbs, pool: undefined }, U, { rows: 1000, postings: 1e9 })).toBe(700);
    const once = postings();
    await commit(dbs, () => dropUserIndex(dbs.search, U));
    // Batches of 9 rows, a transaction every ~60 postings: ~115 transactions.
    expect(await rebuildUserIndex({ dbs, pool: undefined }, U, { rows: 9, postings: 60 })).toBe(700);
    expect(postings()).toEqual(once);
    expect(postings().filter(([key]) => (key as unknown[])[1] === 'harbour').length).toBe(6);
    expect(readStats(dbs.search, U).slice(0, 2)).toEqual([700, 700 * 6]);
    expect(await answers()).toEqual(live);
  });

  itLmdb('a rebuild writes no posting of a row removed after it read the row (a session deleted meanwhile)', async () => {
    fx = openRecall();
    for (let i = 0; i < 12; i++) await say(i < 6 ? 'keep' : 'gone', `pelican harbour note ${i}`);
    const dbs = openRecallDbs(fx.env);
    await commit(dbs, () => dropUserIndex(dbs.search, U));
    // Read batches of 7 rows, one transaction for all: the delete lands between the reads and the write.
    const rebuilding = rebuildUserIndex({ dbs, pool: undefined }, U, { rows: 7, postings: 10_000 });
    expect(await fx.recall.deleteSession(U, 'gone')).toBe(true);
    await rebuilding;
    const hits = (await fx.recall.search({ userId: U, query: 'pelican', limit: 50 })).items;
    expect(hits.length).toBe(12); // 'keep': 6 turns, each the message and its offline reply
    expect(hits.every((h) => h.sessionId === 'keep')).toBe(true);
    expect(readStats(dbs.search, U)[0]).toBe(12);
  });

  itLmdb('a rebuild writes no posting of a user erased while it runs (the erasure removes rows without the index hooks)', async () => {
    fx = openRecall();
    for (let i = 0; i < 12; i++) await say('s', `cormorant harbour note ${i}`);
    const dbs = openRecallDbs(fx.env);
    await commit(dbs, () => dropUserIndex(dbs.search, U));
    // Read batches of 7 rows, one transaction for all: the erasure lands between the reads and the write.
    const rebuilding = rebuildUserIndex({ dbs, pool: undefined }, U, { rows: 7, postings: 10_000 });
    // Once the rebuild began (and read its first batch, at once), what the erasure's
    // transaction does to the rows (user-erasure.ts): no index hook runs. Polled every turn of
    // the event loop, so the erasure is queued while the rebuild still has batches to read (it
    // yields a turn after each): its write transaction comes after the erasure's.
    while (dbs.search.meta.get([U, 'live']) !== INDEX_FORMAT) await new Promise((resolve) => setImmediate(resolve));
    await commit(dbs, () => {
      noteLiveRemoval(U);
      for (const key of [...dbs.daily.getKeys({ start: [U], end: [U, '\uffff'] })]) dbs.daily.remove(key);
    });
    await rebuilding;
    expect(readStats(dbs.search, U)[0]).toBe(0);
    expect([...dbs.search.postings.getKeys({ start: [U], end: [U, '\uffff'] })]).toEqual([]);
  });

  itLmdb('a rebuild on the pool, and a ranked query on the pool, match the inline ones', async () => {
    fx = openRecall();
    await say('s', 'alpha beta', 'beta gamma', 'gamma delta alpha');
    const inline = (await fx.recall.search({ userId: U, query: 'alpha gamma', limit: 20 })).items;
    const pool = createSearchPool({ maxThreads: 1 });
    const pooled = openRecall({ dir: fx.dir, pool, rankPoolThreshold: 0 });
    try {
      expect((await pooled.recall.search({ userId: U, query: 'alpha gamma', limit: 20 })).items).toEqual(inline);
      const before = pool.completed;
      expect(await pooled.recall.rebuildSearchIndex(U)).toBe(6);
      // The rows were tokenized on the pool.
      expect(pool.completed).toBeGreaterThan(before);
      expect((await fx.recall.search({ userId: U, query: 'alpha gamma', limit: 20 })).items).toEqual(inline);
    } finally {
      await pooled.recall.close();
      await pool.close();
    }
  });
});

describe('the search_memory tool', () => {
  it('gives the model ranked, dated hits across sessions', async () => {
    fx = openRecall({ language: 'en' });
    await say('old1', 'my dentist appointment is on the 14th');
    const tool = fx.recall.memoryTools(U, 'other').find((t) => t.name === 'search_memory')!;
    const out = String(await tool.execute({ query: 'dentist appointment' }, {} as never));
    expect(out.split('\n')[0]).toMatch(/^\[2026-04-08\] session old1 #1 user \(score \d+\.\d\d\): my dentist appointment is on the 14th$/);
    expect(await tool.execute({ query: 'volcano' }, {} as never)).toBe('no matched memory');
    expect(tool.description).toMatch(/^Ranked search over ALL past sessions/);
  });

  it('speaks Chinese by default (the server language): description, hit labels and the empty answer', async () => {
    fx = openRecall();
    await say('old1', 'my dentist appointment is on the 14th');
    const tool = fx.recall.memoryTools(U, 'other').find((t) => t.name === 'search_memory')!;
    const out = String(await tool.execute({ query: 'dentist appointment' }, {} as never));
    expect(out.split('\n')[0]).toMatch(/^\[2026-04-08\] 会话 old1 #1 user（相关度 \d+\.\d\d）：my dentist appointment is on the 14th$/);
    expect(await tool.execute({ query: 'volcano' }, {} as never)).toBe('没有匹配的记忆');
    expect(tool.description).toMatch(/^按相关度检索/);
  });
});
