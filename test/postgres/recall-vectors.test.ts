import { beforeAll, describe, expect, it } from 'vitest';
import { createPostgresStore } from '../../src/memory/postgres/index.ts';
import { createPostgresRecallStore } from '../../src/postgres.ts';
import { dropSchema, freshSchema, postgresUrl, SERVER_START_TIMEOUT } from '../support/postgres-server.ts';
import { expectFallbackOrder, seedVectors } from '../support/vector-parity.ts';
import pg from 'pg';

/**
 * Vectors on a PostgreSQL server without pgvector (this machine's): the fallback, `bytea` and
 * cosine in JS, gives the order test/support/vector-parity.ts computes, the same check the
 * pgvector path passes on PGlite (test/pglite/pgvector.test.ts): same ids, same order.
 */
let url: string;
beforeAll(async () => {
  url = await postgresUrl();
}, SERVER_START_TIMEOUT);

describe('vectors without pgvector', () => {
  it("stay in bytea, and nearest gives the fallback's order: ties, other dimensions, a zero vector, filters", async () => {
    const schema = freshSchema('recall_vectors');
    const transcripts = createPostgresStore({ connectionString: url, schema });
    const store = createPostgresRecallStore({ transcripts, embeddings: true });
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const available = (await client.query(`SELECT count(*)::int AS n FROM pg_available_extensions WHERE name = 'vector'`)).rows[0].n as number;
      const seeded = await seedVectors(store, { turns: 60, facts: 40, seed: 7 });
      const columns = (await client.query(`SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'recall_vectors' ORDER BY 1`, [schema])).rows.map((r) => r.column_name);
      // A server with pgvector takes the other path (a column `embedding`); this check is of the fallback.
      if (available === 0) expect(columns).toEqual(['id', 'item', 'user_id', 'vector']);
      await expectFallbackOrder(store, seeded, { queries: 12, seed: 11, limit: 10 });
    } finally {
      await client.end();
      await store.close();
      await transcripts.close();
      await dropSchema(url, schema);
    }
  });
});
