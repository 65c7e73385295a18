import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { createPostgresStore, type PostgresStore } from '../../src/memory/postgres/index.ts';
import { dropSchema, freshSchema, postgresUrl, SERVER_START_TIMEOUT } from '../support/postgres-server.ts';

// Idempotency keys and forks between stores that share one PostgreSQL schema (each with its own
// pool, as two processes would): the database, not one process, makes them exactly-once.

let url: string;
let schema: string;
let a: PostgresStore;
let b: PostgresStore;
beforeAll(async () => {
  url = await postgresUrl();
  schema = freshSchema('exactly');
  a = createPostgresStore({ connectionString: url, schema });
  b = createPostgresStore({ connectionString: url, schema });
}, SERVER_START_TIMEOUT);
afterAll(async () => {
  await a?.close();
  await b?.close();
  if (url) await dropSchema(url, schema);
});

const user = (content: string) => ({ role: 'user' as const, content });

describe('two stores on one schema', () => {
  it('store a batch once when both append it under one key at the same moment', async () => {
    const tries = await Promise.all(
      Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? a : b).append('c', [{ message: user('once') }, { message: user('twice?') }], { idempotencyKey: 'k' })),
    );
    for (const t of tries) expect(t.map((r) => r.message_id)).toEqual([1, 2]);
    expect(await a.get('c')).toEqual([user('once'), user('twice?')]);
  });

  it('see each other\'s forks, and a clear through one keeps the other\'s fork whole', async () => {
    await a.add('src', [user('1'), user('2'), user('3')]);
    await b.fork('src', 2, 'branch');
    await a.add('branch', [user('b3')]);
    expect(await b.get('branch')).toEqual([user('1'), user('2'), user('b3')]);
    await b.clear('src');
    expect(await a.get('branch')).toEqual([user('1'), user('2'), user('b3')]);
    expect((await a.tail('branch', 2)).map((r) => r.message_id)).toEqual([2, 3]);
  });
});

describe('keyed appends are group-committed', () => {
  /** A store over its own pool, counting the connections its writes check out (one per transaction). */
  async function countingStore(): Promise<{ store: PostgresStore; checkouts: () => number; pool: pg.Pool }> {
    const pool = new pg.Pool({ connectionString: url, max: 10 });
    const store = createPostgresStore({ pool, schema });
    await store.migrate();
    let n = 0;
    pool.on('acquire', () => n++);
    return { store, checkouts: () => n, pool };
  }

  it('commit keyed appends to many conversations issued together in a few transactions, not one each', async () => {
    const { store, checkouts, pool } = await countingStore();
    try {
      const stored = await Promise.all(Array.from({ length: 40 }, (_, i) => store.append(`group-${i}`, [{ message: user(`m${i}`) }], { idempotencyKey: `g${i}` })));
      for (const records of stored) expect(records.map((r) => r.message_id)).toEqual([1]);
      // Two batches may be in flight at once; 40 one-transaction-per-key appends would be 40.
      expect(checkouts()).toBeLessThanOrEqual(4);
    } finally {
      await store.close();
      await pool.end();
    }
  });

  it('answer the taken keys of a grouped batch from storage and append the rest, in order', async () => {
    const { store, pool } = await countingStore();
    try {
      await Promise.all([0, 1, 2].map((i) => store.append(`mix-${i}`, [{ message: user(`first ${i}`) }], { idempotencyKey: 'once' })));
      // Retries of the three, a fresh key on each, and a plain append, all in one turn.
      const [retries, fresh, plain] = await Promise.all([
        Promise.all([0, 1, 2].map((i) => store.append(`mix-${i}`, [{ message: user(`retry ${i}`) }], { idempotencyKey: 'once' }))),
        Promise.all([0, 1, 2].map((i) => store.append(`mix-${i}`, [{ message: user(`new ${i}`) }, { message: user(`new ${i}b`) }], { idempotencyKey: 'two' }))),
        store.append('mix-0', [{ message: user('plain') }]),
      ]);
      for (const [i, r] of retries.entries()) expect(r.map((x) => [x.message_id, x.message])).toEqual([[1, user(`first ${i}`)]]);
      for (const r of fresh) expect(r.map((x) => x.message_id)).toEqual([2, 3]);
      expect(plain.map((x) => x.message_id)).toEqual([4]);
      expect(await b.get('mix-0')).toEqual([user('first 0'), user('new 0'), user('new 0b'), user('plain')]);
      expect(await b.get('mix-2')).toEqual([user('first 2'), user('new 2'), user('new 2b')]);
    } finally {
      await store.close();
      await pool.end();
    }
  });

  it('store one key sent twice in one turn once, and give both the same records', async () => {
    const [x, y] = await Promise.all([a.append('dup', [{ message: user('x') }], { idempotencyKey: 'd' }), a.append('dup', [{ message: user('y') }], { idempotencyKey: 'd' })]);
    expect(x).toEqual(y);
    expect(await b.get('dup')).toEqual([user('x')]);
  });

  it('keep a key exactly-once when two stores send it in grouped batches with other conversations', async () => {
    const tries = await Promise.all(
      Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? a : b).append(i % 3 === 0 ? 'shared' : `own-${i}`, [{ message: user(`t${i}`) }], { idempotencyKey: 'shared-key' })),
    );
    const shared = tries.filter((_, i) => i % 3 === 0);
    for (const t of shared) expect(t).toEqual(shared[0]);
    expect(await a.get('shared')).toHaveLength(1);
  });
});
