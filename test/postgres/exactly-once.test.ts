import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
