/**
 * The cost of a hybrid query beside a BM25 one, side by side in one run over the same rows:
 * `recall.search` without embeddings (BM25, src/recall/search/) and with them (BM25 + the
 * query's embedding from a loopback endpoint + a brute-force cosine scan of the user's vectors,
 * fused by RRF: src/recall/embeddings/).
 *
 * - Corpus: `--size` daily rows of one user (default 20 000), 6-30 words of a Zipf-ish
 *   vocabulary of 5 000 words (deterministic PRNG). The endpoint is the tests' embeddings stub
 *   (test/support/embeddings-stub.ts: hashed words, `--dims` dimensions, default 256), so the
 *   endpoint's own cost is a loopback HTTP round trip and a few microseconds of hashing: a real
 *   model adds its inference time to every hybrid query.
 * - Drain: the rows are written past the service, the first query queues them (the backfill),
 *   and the time until the queue is empty gives rows embedded per second (batches of 64).
 * - Queries: 200 of two words, run alternately (BM25, hybrid, BM25, ...), top 10: p50 / p99.
 *
 * Run: `npx tsx bench/hybrid-search.ts [--size 20000] [--dims 256]`. Prints a table, writes
 * bench/results/hybrid-search.json.
 */
import { lmdbRecall } from './support/lmdb-recall.ts';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { acquireEnvironment } from '../src/memory/lmdb/lmdb-environment.ts';
import { createLmdbStore } from '../src/memory/lmdb/lmdb-store.ts';
import { createRecall } from '../src/recall/index.ts';
import { putDailyRow } from '../src/recall/storage/lmdb/daily-store.ts';
import { commit, openRecallDbs } from '../src/recall/storage/lmdb/recall-dbs.ts';
import { startEmbeddingsStub } from '../test/support/embeddings-stub.ts';
import { createEmbeddingsClient } from '../src/recall/embeddings/embeddings-client.ts';
import { resolveEmbeddingsOptions } from '../src/recall/embeddings/embeddings-options.ts';
import { Samples } from './suite/stats.ts';
import { prng } from './suite/records.ts';
import { makeTempDir, removeDir } from './suite/temp-dir.ts';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const SIZE = arg('--size', 20_000);
const DIMS = arg('--dims', 256);
const USER = 'bench-user';
const rand = prng(7);
const VOCAB = Array.from({ length: 5_000 }, (_, i) => `w${i.toString(36)}x`);
const word = () => VOCAB[Math.floor(VOCAB.length * rand() ** 3)]!;

async function main(): Promise<void> {
  const dir = makeTempDir('hybrid');
  const stub = await startEmbeddingsStub({ dims: DIMS });
  const env = acquireEnvironment(dir, { noSync: true });
  const memory = createLmdbStore({ path: dir });
  const bm25 = lmdbRecall({ memory, env, });
  const hybrid = lmdbRecall({
    memory,
    env,
    embeddings: { baseURL: stub.baseURL, apiKey: 'k', model: 'stub', requestsPerMinute: 1e9, burst: 1e6, retryBaseMs: 1 },
  });
  try {
    const dbs = openRecallDbs(env);
    for (let start = 0; start < SIZE; start += 2_000) {
      await commit(dbs, () => {
        for (let i = start; i < Math.min(SIZE, start + 2_000); i++) {
          const day = new Date(Date.UTC(2026, 0, 1) + Math.floor(i / 1_000) * 86_400_000).toISOString().slice(0, 10);
          const text = Array.from({ length: 6 + Math.floor(rand() * 25) }, word).join(' ');
          putDailyRow(dbs, USER, { day, ts: `${day}T10:00:00`, role: 'user', content: text, session_id: null, session_message_id: null });
        }
      });
    }
    const drainStart = performance.now();
    await hybrid.search({ userId: USER, query: 'warm up' });
    await hybrid.embeddingsIdle();
    const drainMs = performance.now() - drainStart;
    const samples = { bm25: new Samples(), hybrid: new Samples(), embed: new Samples() };
    const client = createEmbeddingsClient(resolveEmbeddingsOptions({ baseURL: stub.baseURL, apiKey: 'k', model: 'stub' }));
    for (let i = 0; i < 20; i++) await bm25.search({ userId: USER, query: `${word()} ${word()}` });
    for (let i = 0; i < 200; i++) {
      const query = `${word()} ${word()}`;
      const pair: ['bm25' | 'hybrid', typeof bm25][] = [
        ['bm25', bm25],
        ['hybrid', hybrid],
      ];
      for (const [name, service] of i % 2 === 0 ? pair : pair.reverse()) {
        const t = performance.now();
        const hits = await service.search({ userId: USER, query, limit: 10 });
        samples[name].add(performance.now() - t);
        if (name === 'hybrid' && hits.ranking !== 'hybrid') throw new Error(`hybrid query answered ${hits.ranking}`);
      }
      const t = performance.now();
      await client.embed([query]);
      samples.embed.add(performance.now() - t);
    }
    const b = samples.bm25.summary();
    const h = samples.hybrid.summary();
    const e = samples.embed.summary();
    const result = { size: SIZE, dims: DIMS, drain: { ms: drainMs, rowsPerSecond: SIZE / (drainMs / 1000), requests: stub.requests }, bm25: b, hybrid: h, queryEmbedding: e, p50Ratio: h.p50Ms / b.p50Ms };
    console.log(`## Hybrid query cost, ${SIZE.toLocaleString('en')} rows of one user, ${DIMS}-d vectors (loopback stub)\n`);
    console.log('| query, top 10 | p50 ms | p99 ms |');
    console.log('|---|---|---|');
    console.log(`| BM25 | ${b.p50Ms.toFixed(3)} | ${b.p99Ms.toFixed(3)} |`);
    console.log(`| hybrid (BM25 + query embedding + cosine scan, RRF) | ${h.p50Ms.toFixed(3)} | ${h.p99Ms.toFixed(3)} |`);
    console.log(`| of which: the query's embedding alone (loopback round trip) | ${e.p50Ms.toFixed(3)} | ${e.p99Ms.toFixed(3)} |`);
    console.log(`\nhybrid / BM25 p50: ${result.p50Ratio.toFixed(1)}x; drain: ${SIZE} rows embedded in ${drainMs.toFixed(0)} ms (${result.drain.rowsPerSecond.toFixed(0)} rows/s, ${stub.requests} requests)`);
    const out = join(dirname(fileURLToPath(import.meta.url)), 'results', 'hybrid-search.json');
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await hybrid.close();
    await bm25.close();
    await memory.close();
    await new Promise((r) => setTimeout(r, 0));
    await env.release();
    await stub.close();
    removeDir(dir);
  }
}

await main();
