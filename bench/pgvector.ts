/**
 * `nearest` on the PostgreSQL recall adapter with pgvector beside its fallback, side by side in
 * one run on the same engine: two PGlite instances (PostgreSQL in WASM, this process), one with
 * the pgvector extension (the adapter finds it: a `vector` column, `<=>` in SQL, candidates
 * rescored with the fallback's arithmetic) and one without (`bytea`, the user's vectors read and
 * scored in JS). Both run the adapter through test/support/pglite-pool.ts. PGlite is slower than a
 * server in absolute terms; the ratio is the point.
 *
 * - Corpus: `--size` facts' vectors of one user (default 5 000), `--dims` dimensions (default
 *   256), random, plus as many of another user; written straight into `recall_vectors` in each
 *   layout (the port's `putVectors` stores the same bytes, through leased jobs).
 * - Queries: `--queries` (default 100) random vectors, top 10, alternating between the two: p50.
 *
 * Run: `npx tsx bench/pgvector.ts [--size 5000] [--dims 256] [--queries 100]`. Prints a table.
 */
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { performance } from 'node:perf_hooks';
import { createPostgresStore } from '../src/memory/postgres/index.ts';
import { createPostgresRecallStore } from '../src/postgres.ts';
import { encodeVector, unit } from '../src/recall/search/vector-codec.ts';
import { pglitePool } from '../test/support/pglite-pool.ts';
import { random, randomVector } from '../test/support/vector-parity.ts';
import { Samples } from './suite/stats.ts';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const SIZE = arg('--size', 5_000);
const DIMS = arg('--dims', 256);
const QUERIES = arg('--queries', 100);

async function open(withVector: boolean) {
  const db = await PGlite.create(withVector ? { extensions: { vector } } : {});
  const pool = pglitePool(db);
  const transcripts = createPostgresStore({ pool, schema: 'bench' });
  const store = createPostgresRecallStore({ transcripts, embeddings: true });
  await store.sessions('u');
  const next = random(1);
  for (const user of ['u', 'other']) {
    for (let from = 0; from < SIZE; from += 500) {
      const values: unknown[] = [];
      const rows: string[] = [];
      for (let id = from + 1; id <= Math.min(SIZE, from + 500); id++) {
        const v = randomVector(next, DIMS);
        const k = values.length;
        if (withVector) {
          values.push(user, id, encodeVector(0, new Float32Array(0)), `[${Array.prototype.join.call(unit(v), ',')}]`);
          rows.push(`($${k + 1}, 'f', $${k + 2}, $${k + 3}, $${k + 4}::vector)`);
        } else {
          values.push(user, id, encodeVector(0, v));
          rows.push(`($${k + 1}, 'f', $${k + 2}, $${k + 3})`);
        }
      }
      await pool.query(`INSERT INTO bench.recall_vectors (user_id, item, id, vector${withVector ? ', embedding' : ''}) VALUES ${rows.join(', ')}`, values);
    }
  }
  await pool.query('ANALYZE bench.recall_vectors');
  const mode = (await pool.query(`SELECT count(*)::int AS n FROM information_schema.columns WHERE table_schema = 'bench' AND table_name = 'recall_vectors' AND column_name = 'embedding'`)).rows[0].n === 1 ? 'pgvector' : 'bytea';
  return {
    store,
    mode,
    async close() {
      await store.close();
      await transcripts.close();
      await pool.end();
      await db.close();
    },
  };
}

const a = await open(true);
const b = await open(false);
const times = { [a.mode]: new Samples(), [b.mode]: new Samples() };
const next = random(2);
let same = 0;
for (let i = 0; i < QUERIES + 5; i++) {
  const q = unit(randomVector(next, DIMS));
  const got: number[][] = [];
  for (const s of [a, b]) {
    const t = performance.now();
    const near = await s.store.nearest('u', { item: 'f', vector: q, filters: {}, limit: 10 });
    if (i >= 5) times[s.mode]!.add(performance.now() - t);
    got.push(near.map((d) => d.id));
  }
  if (JSON.stringify(got[0]) === JSON.stringify(got[1])) same++;
}
const p50 = (m: string) => times[m]!.summary().p50Ms;
console.log(`| nearest top 10, ${SIZE} vectors x ${DIMS} dims, one user (PGlite) | p50 ms |`);
console.log(`|---|---|`);
console.log(`| pgvector (${a.mode}) | ${p50(a.mode).toFixed(2)} |`);
console.log(`| fallback (${b.mode}) | ${p50(b.mode).toFixed(2)} |`);
console.log(`fallback / pgvector: ${(p50(b.mode) / p50(a.mode)).toFixed(2)}x; identical answers ${same} of ${QUERIES + 5}`);
await a.close();
await b.close();
