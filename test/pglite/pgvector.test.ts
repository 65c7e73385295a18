import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresStore } from '../../src/memory/postgres/index.ts';
import { createPostgresRecallStore } from '../../src/postgres.ts';
import { dailyDoc } from '../../src/recall/search/doc-numbers.ts';
import { encodeVector, textHash } from '../../src/recall/search/vector-codec.ts';
import { ALICE, DAY1, LONG_MS, turn } from '../../src/recall/storage-contract/contract-kit.ts';
import type { RecallStore } from '../../src/recall/storage/recall-store.ts';
import { pglitePool } from '../support/pglite-pool.ts';
import { DIMS, expectedNearest, expectFallbackOrder, random, randomVector, seedVectors } from '../support/vector-parity.ts';

/**
 * The PostgreSQL recall adapter where pgvector is installed (PGlite with the real extension,
 * through test/support/pglite-pool.ts): vectors go to a pgvector column, `nearest` orders by
 * `<=>` in SQL and gives the fallback's order (test/support/vector-parity.ts; the same check runs
 * on the server without pgvector in test/postgres/recall-vectors.test.ts), a schema filled by the
 * fallback is converted when it opens with the extension, and an HNSW index is built and used
 * when the table and the user are large (here made small by the `hnsw` option).
 */
let db: PGlite;
beforeAll(async () => {
  db = await PGlite.create({ extensions: { vector } });
}, 120_000);
afterAll(async () => {
  await db.close();
});

let n = 0;
async function open(options: { schema?: string; hnsw?: { tableRows: number; userRows: number } } = {}) {
  const pool = pglitePool(db);
  const schema = options.schema ?? `pgvector_${++n}`;
  const transcripts = createPostgresStore({ pool, schema });
  const store = createPostgresRecallStore({ transcripts, embeddings: true, ...(options.hnsw === undefined ? {} : { hnsw: options.hnsw }) });
  await store.sessions(ALICE);
  return {
    store,
    pool,
    schema,
    async close() {
      await store.close();
      await transcripts.close();
      await pool.end();
    },
  };
}

const columns = async (schema: string) =>
  (await db.query<{ column_name: string; udt_name: string }>(`SELECT column_name, udt_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'recall_vectors' ORDER BY 1`, [schema])).rows;

describe('pgvector', () => {
  it('an hnsw option that is not a positive integer is refused (invalid_option) before anything opens', async () => {
    const pool = pglitePool(db);
    for (const hnsw of [{ tableRows: 0 }, { userRows: 1.5 }, { userRows: Number.NaN }]) {
      expect(() => createPostgresRecallStore({ pool, hnsw })).toThrow(expect.objectContaining({ code: 'invalid_option' }));
    }
    await pool.end();
  });

  it('the schema gets a vector column; a stored vector keeps only its hash in bytea', async () => {
    const { store, schema, close } = await open();
    try {
      expect(await columns(schema)).toEqual([
        { column_name: 'embedding', udt_name: 'vector' },
        { column_name: 'id', udt_name: 'int8' },
        { column_name: 'item', udt_name: 'text' },
        { column_name: 'user_id', udt_name: 'text' },
        { column_name: 'vector', udt_name: 'bytea' },
      ]);
      await turn(store, { message: 'north', reply: 'east' });
      const jobs = await store.jobs.lease('embed', { limit: 10, leaseMs: LONG_MS });
      const writes = await Promise.all(
        jobs.map(async (job, i) => ({ item: 'd' as const, id: job.payload.id, hash: textHash((await store.itemText(ALICE, 'd', job.payload.id))!), vector: new Float32Array([3, 4 * i]), job })),
      );
      expect(await store.putVectors(ALICE, writes)).toBe(2);
      const rows = (await db.query<{ id: number; bytes: number; embedding: string }>(`SELECT id, octet_length(vector) AS bytes, embedding::text AS embedding FROM ${schema}.recall_vectors ORDER BY id`)).rows;
      expect(rows.map((r) => [r.bytes, r.embedding])).toEqual([
        [4, '[1,0]'],
        [4, '[0.6,0.8]'],
      ]);
    } finally {
      await close();
    }
  });

  it("nearest gives the fallback's order: ties, other dimensions, a zero vector, filters", async () => {
    const { store, close } = await open();
    try {
      const seeded = await seedVectors(store, { turns: 60, facts: 40, seed: 7 });
      await expectFallbackOrder(store, seeded, { queries: 12, seed: 11, limit: 10 });
      // Everything, in order (the page grows past the first fetch).
      const query = randomVector(random(3));
      expect((await store.nearest(ALICE, { item: 'd', vector: query, filters: {}, limit: 500 })).map((d) => d.id)).toEqual(expectedNearest(seeded, 'd', query, 500));
    } finally {
      await close();
    }
  });

  it('a schema the fallback filled is converted when it opens with pgvector', async () => {
    const first = await open();
    const { schema } = first;
    let seeded;
    try {
      // The fallback's layout (no embedding column, the floats in bytea), and rows written in it.
      await first.pool.query(`ALTER TABLE ${schema}.recall_vectors DROP COLUMN embedding`);
      await first.pool.query(`DROP INDEX ${schema}.recall_vectors_unconverted`);
      seeded = await seedVectorsByHand(first.store, first.pool, schema);
    } finally {
      await first.close();
    }
    const reopened = await open({ schema });
    try {
      expect((await columns(schema)).map((c) => c.column_name)).toContain('embedding');
      const left = (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${schema}.recall_vectors WHERE octet_length(vector) > 4 OR embedding IS NULL`)).rows[0]!.n;
      expect(left).toBe(0);
      const query = new Float32Array([1, 0.5, 0, 0, 0, 0, 0, 0]);
      expect((await reopened.store.nearest(ALICE, { item: 'd', vector: query, filters: {}, limit: 10 })).map((d) => d.id)).toEqual(expectedNearest(seeded, 'd', query, 10));
    } finally {
      await reopened.close();
    }
  });

  it('an HNSW index is built once the table is large, and a large user searches through it', async () => {
    const rule = { tableRows: 60, userRows: 50 };
    const first = await open({ hnsw: rule });
    const { schema } = first;
    let seeded;
    try {
      seeded = await seedVectors(first.store, { turns: 40, facts: 0, seed: 5 });
    } finally {
      await first.close();
    }
    await db.query(`ANALYZE ${schema}.recall_vectors`);
    const second = await open({ schema, hnsw: rule });
    try {
      const index = async () => (await db.query<{ indexdef: string }>(`SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND indexname = $2`, [schema, `recall_vectors_hnsw_${DIMS}`])).rows;
      for (let i = 0; i < 200 && (await index()).length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 50));
      expect((await index())[0]?.indexdef).toMatch(/USING hnsw .*vector_cosine_ops\) WHERE \(vector_dims\(embedding\) = 8\)/);
      // ALICE has 80 vectors of documents (≥ userRows): approximate search through the index; on
      // a set this small it finds the exact neighbours (other dimensions and the zero vector aside).
      const query = randomVector(random(9));
      const keep = (doc: number) => seeded.vectors.get(`d:${doc}`)!.length === DIMS && seeded.vectors.get(`d:${doc}`)!.some((x) => x !== 0);
      // The index's scans, as the statistics count them (flushed first).
      const scans = async () => {
        await db.query('SELECT pg_stat_force_next_flush()');
        await db.query('SELECT pg_stat_clear_snapshot()');
        return Number((await db.query<{ n: string }>(`SELECT COALESCE(sum(idx_scan), 0)::int AS n FROM pg_stat_user_indexes WHERE schemaname = $1 AND indexrelname = $2`, [schema, `recall_vectors_hnsw_${DIMS}`])).rows[0]!.n);
      };
      const before = await scans();
      expect((await second.store.nearest(ALICE, { item: 'd', vector: query, filters: {}, limit: 5 })).map((d) => d.id)).toEqual(expectedNearest(seeded, 'd', query, 5, keep));
      expect(await scans()).toBeGreaterThan(before);
      // BOB has two: exact, not through the index.
      const after = await scans();
      await second.store.nearest('bob', { item: 'd', vector: query, filters: {}, limit: 5 });
      expect(await scans()).toBe(after);
    } finally {
      await second.close();
    }
  });
});

/** Two turns' rows with vectors written in the fallback's layout (`encodeVector` bytes), their jobs completed. */
async function seedVectorsByHand(store: RecallStore, pool: { query: (text: string, values: unknown[]) => Promise<unknown> }, schema: string) {
  await turn(store, { message: 'north', reply: 'east' });
  await turn(store, { message: 'south', reply: 'west' });
  const vectors = new Map<string, Float32Array>();
  const days = new Map<number, string>();
  const next = random(21);
  for (const r of await store.dailyDay(ALICE, DAY1)) {
    const doc = dailyDoc(r.day, r.id)!;
    const v = randomVector(next);
    vectors.set(`d:${doc}`, v);
    days.set(doc, r.day);
    await pool.query(`INSERT INTO ${schema}.recall_vectors (user_id, item, id, vector) VALUES ($1, 'd', $2, $3)`, [ALICE, doc, encodeVector(textHash(r.content), v)]);
  }
  return { vectors, days };
}
