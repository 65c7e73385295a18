import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { afterAll, beforeAll } from 'vitest';
import { createPostgresStore } from '../../src/memory/postgres/index.ts';
import { createPostgresRecallStore } from '../../src/postgres.ts';
import { describeRecallStoreContract } from '../../src/testing.ts';
import { pglitePool } from '../support/pglite-pool.ts';

/**
 * The storage port's conformance suite on the PostgreSQL adapter running on PGlite with the
 * pgvector extension (test/support/pglite-pool.ts): the same adapter code as on a server, with
 * vectors in a pgvector column and `nearest` ordered by `<=>` in SQL. One PGlite instance for
 * the file (it takes seconds to start), a fresh schema per test.
 */
let db: PGlite;
beforeAll(async () => {
  db = await PGlite.create({ extensions: { vector } });
}, 120_000);
afterAll(async () => {
  await db.close();
});

let n = 0;
describeRecallStoreContract('postgres on PGlite with pgvector', async ({ clock, embeddings }) => {
  const pool = pglitePool(db);
  const schema = `contract_${++n}`;
  const transcripts = createPostgresStore({ pool, schema, clock });
  const store = createPostgresRecallStore({ transcripts, embeddings });
  return {
    store,
    async close() {
      await store.close();
      await transcripts.close();
      await pool.query(`DROP SCHEMA ${schema} CASCADE`);
      await pool.end();
    },
  };
});
