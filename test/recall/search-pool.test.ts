import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { putDailyRow } from '../../src/recall/storage/lmdb/daily-store.ts';
import { commit, openRecallDbs } from '../../src/recall/storage/lmdb/recall-dbs.ts';
import { createSearchPool, type SearchPool } from '../../src/recall/index.ts';
import { openRecall, type RecallFixture } from '../support/recall-fixture.ts';

/**
 * One environment with a few thousand rows, searched three ways: inline, on the pool (threshold
 * 0 forces it), and on the pool from a recall service with the default threshold. The pool
 * runs real worker threads that open the environment read-only.
 */
let fx: RecallFixture;
let pooled: RecallFixture;
let throughLog: RecallFixture;
let pool: SearchPool;

const U = 'u';
const ROWS = 6_000;

beforeAll(async () => {
  fx = openRecall();
  const dbs = openRecallDbs(fx.env);
  for (let start = 0; start < ROWS; start += 1_000) {
    await commit(dbs, () => {
      for (let i = start; i < start + 1_000; i++) {
        const day = i < ROWS / 2 ? '2026-04-07' : '2026-04-08';
        putDailyRow(dbs, U, { day, ts: `${day}T10:00:00`, role: 'user', content: i % 500 === 0 ? `Needle ${i}` : `hay ${i}`, session_id: 's', session_message_id: i + 1 });
      }
    });
    await fx.memory.append(
      'session/u/s',
      Array.from({ length: 1_000 }, (_, k) => ({ message: { role: 'user' as const, content: (start + k) % 500 === 0 ? `Needle ${start + k}` : `hay ${start + k}` }, meta: { ts: 't' } })),
    );
  }
  pool = createSearchPool({ maxThreads: 1 });
  pooled = openRecall({ dir: fx.dir, pool, poolThreshold: 0 });
  throughLog = openRecall({ dir: fx.dir, directReads: false });
});

afterAll(async () => {
  await pooled.recall.close();
  await pool.close();
  await pooled.close();
  await throughLog.close();
  await fx.close();
});

describe('the search pool', () => {
  it('a pooled daily search returns exactly what the inline search returns', async () => {
    for (const q of [
      { keyword: 'needle', limit: 20 },
      { keyword: 'NEEDLE', limit: 3 },
      { keyword: '', limit: 5 },
      { keyword: 'needle', limit: 20, day: '2026-04-07' },
      { keyword: 'absent', limit: 20 },
    ]) {
      const inline = await fx.recall.searchDaily({ userId: U, ...q });
      const onPool = await pooled.recall.searchDaily({ userId: U, ...q });
      expect(onPool, JSON.stringify(q)).toEqual(inline);
    }
    expect((await pooled.recall.searchDaily({ userId: U, keyword: 'needle' })).map((r) => r.content)).toHaveLength(12);
  });

  it('a pooled session search returns exactly what the inline search returns', async () => {
    for (const q of [{ keyword: 'needle' }, { keyword: '', limit: 7 }, { keyword: 'nothing' }]) {
      const inline = await fx.recall.searchSession({ userId: U, sessionId: 's', ...q });
      const onPool = await pooled.recall.searchSession({ userId: U, sessionId: 's', ...q });
      expect(onPool, JSON.stringify(q)).toEqual(inline);
    }
  });

  it('a session search through the MessageLog (a store outside the environment) returns the same rows', async () => {
    for (const q of [{ keyword: 'needle' }, { keyword: 'NEEDLE 5', limit: 1 }, { keyword: '', limit: 7 }, { keyword: 'nothing' }]) {
      const direct = await fx.recall.searchSession({ userId: U, sessionId: 's', ...q });
      const viaLog = await throughLog.recall.searchSession({ userId: U, sessionId: 's', ...q });
      expect(viaLog, JSON.stringify(q)).toEqual(direct);
    }
    expect((await throughLog.recall.searchSession({ userId: U, sessionId: 's', keyword: 'needle' })).map((r) => r.messageId)).toHaveLength(12);
  });

  it('workers see rows committed after they opened the environment', async () => {
    await pooled.recall.searchDaily({ userId: U, keyword: 'x' });
    await pooled.recall.chat({ userId: U, sessionId: 'fresh', message: 'brand new needle' });
    const hits = await pooled.recall.searchDaily({ userId: U, keyword: 'brand new' });
    expect(hits.map((r) => r.content)).toEqual(['brand new needle', '收到：brand new needle。我已经记录到记忆中。']);
    expect((await pooled.recall.searchSession({ userId: U, sessionId: 'fresh', keyword: 'brand' })).map((r) => r.messageId)).toEqual([1, 2]);
  });

  // An immediate queued right after a search starts runs before the search ends only if the
  // search gave the event loop back (a blocking scan would finish in the microtasks before it).
  const turnsDuring = async (search: () => Promise<unknown>): Promise<boolean> => {
    let turned = false;
    const done = search();
    setImmediate(() => (turned = true));
    return done.then(() => turned);
  };

  it('a large scan runs its newest chunk here and hands the rest to the pool; a common keyword never leaves', async () => {
    const at = pool.completed;
    expect(await pooled.recall.searchDaily({ userId: U, keyword: 'absent' })).toEqual([]);
    expect(await pooled.recall.searchSession({ userId: U, sessionId: 's', keyword: 'absent' })).toEqual([]);
    expect(pool.completed).toBe(at + 2);
    expect(await pooled.recall.searchDaily({ userId: U, keyword: 'hay', limit: 5 })).toHaveLength(5);
    expect(await pooled.recall.searchSession({ userId: U, sessionId: 's', keyword: 'hay', limit: 5 })).toHaveLength(5);
    expect(pool.completed).toBe(at + 2);
  });

  it('without a pool, a large inline scan still lets the event loop turn between chunks', async () => {
    expect(await turnsDuring(() => fx.recall.searchDaily({ userId: U, keyword: 'absent' }))).toBe(true);
    expect(await turnsDuring(() => fx.recall.searchSession({ userId: U, sessionId: 's', keyword: 'absent' }))).toBe(true);
  });

  it('a pooled search of another user finds nothing', async () => {
    expect(await pooled.recall.searchDaily({ userId: 'other', keyword: '' })).toEqual([]);
    expect(await pooled.recall.searchSession({ userId: 'other', sessionId: 's', keyword: '' })).toEqual([]);
  });
});

describe('closing the pool', () => {
  it('a closed pool refuses new jobs with pool_closed, after letting running ones finish', async () => {
    const own = createSearchPool({ maxThreads: 1 });
    const running = own.run({ kind: 'daily', path: fx.dir, userId: U, day: null, keyword: 'needle 5', limit: 2 });
    const closing = own.close();
    await expect(own.run({ kind: 'daily', path: fx.dir, userId: U, day: null, keyword: 'x', limit: 1 })).rejects.toMatchObject({ code: 'pool_closed' });
    expect((await running).map((r) => r.content)).toEqual(['Needle 5000', 'Needle 5500']);
    await closing;
    expect(own.closed).toBe(true);
    expect(own.pending).toBe(0);
  });
});
