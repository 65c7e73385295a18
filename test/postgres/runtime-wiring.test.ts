import { beforeAll, describe, expect, it } from 'vitest';
import { createPostgresStore } from '../../src/memory/postgres/index.ts';
import { startRuntime } from '../../src/runtime.ts';
import { describeMessageLogContract } from '../../src/testing.ts';
import { dropSchema, freshSchema, postgresUrl, SERVER_START_TIMEOUT } from '../support/postgres-server.ts';

// The PostgreSQL store under a runtime, behind the per-conversation actors (short idle time,
// so some tests also cross passivations): the same contract as standalone.
let url: string;
beforeAll(async () => {
  url = await postgresUrl();
}, SERVER_START_TIMEOUT);

describeMessageLogContract('runtime.memory over createPostgresStore', async ({ clock }) => {
  const schema = freshSchema('runtime');
  const store = createPostgresStore({ connectionString: url, schema, clock });
  const runtime = await startRuntime({ name: `pg_${schema}`, storage: { store }, idleMs: 5 });
  return {
    log: runtime.memory,
    close: async () => {
      await runtime.stop();
      await store.close();
      await dropSchema(url, schema);
    },
  };
});

// Two runtimes on one database (as two app servers would be): each serializes its own writes
// through its conversation actors, the database numbers across both.
describe('two runtimes sharing one database', () => {
  it('interleaved appends to one conversation give contiguous ids and no error', async () => {
    const schema = freshSchema('shared');
    const a = await startRuntime({ name: `pg_a_${schema}`, storage: { store: createPostgresStore({ connectionString: url, schema }) } });
    const b = await startRuntime({ name: `pg_b_${schema}`, storage: { store: createPostgresStore({ connectionString: url, schema }) } });
    try {
      const writes: Promise<unknown>[] = [];
      for (let i = 0; i < 40; i++) {
        const runtime = i % 2 === 0 ? a : b;
        writes.push(runtime.memory.add('shared', [{ role: 'user', content: `m${i}` }]));
        if (i % 5 === 0) await writes.at(-1); // let the two actors' views of the last id go stale
      }
      await Promise.all(writes);
      const ids = (await a.memory.range('shared')).map((r) => r.message_id);
      expect(ids).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
      expect((await b.memory.get('shared')).map((m) => m.content).sort()).toEqual(
        Array.from({ length: 40 }, (_, i) => `m${i}`).sort(),
      );
    } finally {
      await a.stop();
      await b.stop();
      await dropSchema(url, schema);
    }
  });

  it('storage: { postgres: url } makes, uses and closes its own store', async () => {
    const runtime = await startRuntime({ name: 'pg_owned', storage: { postgres: url } });
    try {
      await runtime.memory.add('owned-store-check', [{ role: 'user', content: 'hi' }]);
      expect((await runtime.memory.tail('owned-store-check', 1))[0]?.message.content).toBe('hi');
      await runtime.memory.clear('owned-store-check');
    } finally {
      await runtime.stop();
    }
    await expect(runtime.memory.get('owned-store-check')).rejects.toMatchObject({ code: 'store_closed' });
  });
});
