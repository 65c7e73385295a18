/**
 * Ranked recall over one user's history, side by side in one run: Mnemo's BM25 index in LMDB
 * (src/recall/search/) against SQLite FTS5's bm25 (better-sqlite3, `porter unicode61`
 * tokenizer, on disk in the same temp dir) over the same corpus and the same queries.
 *
 * - Corpus: `--size` messages (default 100 000) of one user, 1 000 a day; English-like text
 *   of 6–30 words drawn from a Zipf vocabulary of 30 000 words (deterministic PRNG), with one
 *   message in ten in Chinese (characters drawn Zipf from the common range).
 * - Queries: 200 of two mid-frequency words, 200 of one rare word and one common word
 *   (OR semantics in both systems: FTS5 `a OR b`), top 10 with the row's text.
 * - Upkeep: the time to write the daily rows with the index (a live user) against the same
 *   rows for a user whose index is off (the row writes alone, the same transactions); index
 *   bytes (pages of the four search dbs) against the text's UTF-8 bytes.
 * - Chat turns: 100 conversations × `--turns` offline turns (default 5), all in flight at once,
 *   durable (fsync), for a live user (indexed) and for a user whose index is off: turns/s.
 * - Tokenizer: bigrams against `Intl.Segmenter` on the Chinese rows: tokens/s.
 *
 * The suite's ranked workload (`npm run bench -- --only ranked`, bench/suite/ranked-search-run.ts)
 * is the newer comparison: 1M messages by default, four query classes, MiniSearch beside FTS5,
 * the index built by the bulk rebuild. This script keeps the live-write (per-row) build.
 *
 * Run: `npx tsx bench/search-rank.ts [--size 1000000]`. Prints a table, writes bench/results/search-rank.json.
 */
import { lmdbRecall } from './support/lmdb-recall.ts';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { acquireEnvironment } from '../src/memory/lmdb/lmdb-environment.ts';
import { createLmdbStore } from '../src/memory/lmdb/lmdb-store.ts';
import { createRecall } from '../src/recall/index.ts';
import { putDailyRow } from '../src/recall/storage/lmdb/daily-store.ts';
import { commit, openRecallDbs } from '../src/recall/storage/lmdb/recall-dbs.ts';
import { rankedDocs } from '../src/recall/storage/lmdb/search/bm25-query.ts';
import { queryTerms } from '../src/recall/search/documents.ts';
import { tokenize, tokenizeWithSegmenter } from '../src/recall/search/tokenizer.ts';
import { Samples, type LatencySummary } from './suite/stats.ts';
import { searchCorpus } from './suite/search-corpus.ts';
import { searchDbBytes } from './suite/ranked-search-run.ts';
import { makeTempDir } from './suite/temp-dir.ts';

const sizeArg = process.argv.indexOf('--size');
const SIZE = sizeArg > 0 ? Number(process.argv[sizeArg + 1]) : 100_000;
const BATCH = 2_000;
const USER = 'bench-user';
const OFF_USER = 'bench-off';

// The suite's ranked-search corpus (seed 42), so this script and `--only ranked` index the same text.
const corpus = searchCorpus();
const { message, dayOf } = corpus;

const turnsArg = process.argv.indexOf('--turns');
const TURNS = turnsArg > 0 ? Number(process.argv[turnsArg + 1]) : 5;

/** Offline chat turns through the recall service, 100 conversations at once: turns/s per user kind. */
async function chatTurns(): Promise<{ indexed: number; unindexed: number }> {
  const dir = makeTempDir('turns');
  const env = acquireEnvironment(dir);
  const memory = createLmdbStore({ path: dir });
  const recall = lmdbRecall({ memory, env, timeZone: 'UTC' });
  const dbs = openRecallDbs(env);
  await commit(dbs, () => dbs.counters.put(['off', 'daily-rows'], 1)); // rows from before the index: not live
  const run = async (user: string) => {
    const t = performance.now();
    await Promise.all(
      Array.from({ length: 100 }, async (_, c) => {
        for (let k = 0; k < TURNS; k++) await recall.chat({ userId: user, sessionId: `c${c}`, message: message(c * TURNS + k) });
      }),
    );
    return (100 * TURNS) / ((performance.now() - t) / 1000);
  };
  const result = { unindexed: 0, indexed: 0 };
  // Alternate, twice each, keep the better (the machine is shared).
  for (let r = 0; r < 2; r++) {
    result.unindexed = Math.max(result.unindexed, await run(r === 0 ? 'off' : 'off'));
    result.indexed = Math.max(result.indexed, await run(r === 0 ? 'on' : 'on'));
  }
  await recall.close();
  await memory.close();
  await new Promise((r) => setTimeout(r, 0));
  await env.release();
  rmSync(dir, { recursive: true, force: true });
  return result;
}

async function main(): Promise<void> {
  const turns = await chatTurns();
  const dir = makeTempDir('search');
  const lease = acquireEnvironment(dir, { noSync: true, mapSize: 64 * 2 ** 30 });
  const dbs = openRecallDbs(lease);
  const sqlite = new Database(join(dir, 'fts.sqlite'));
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = OFF');
  sqlite.exec(`CREATE VIRTUAL TABLE t USING fts5(content, tokenize = 'porter unicode61')`);
  const insert = sqlite.prepare('INSERT INTO t(rowid, content) VALUES (?, ?)');

  const texts: string[] = [];
  for (let i = 0; i < SIZE; i++) texts.push(message(i));
  let textBytes = 0;
  for (const t of texts) textBytes += Buffer.byteLength(t);

  // The index's upkeep: the same rows written for a user whose index is off (rows only) and
  // for a live user (rows + postings), alternating batches so both see the same conditions.
  await commit(dbs, () => dbs.counters.put([OFF_USER, 'daily-rows'], 1)); // has "old" rows: not live
  let withIndexMs = 0;
  let withoutIndexMs = 0;
  for (let start = 0; start < SIZE; start += BATCH) {
    const end = Math.min(SIZE, start + BATCH);
    const write = (user: string) =>
      commit(dbs, () => {
        for (let i = start; i < end; i++) {
          const day = dayOf(i);
          putDailyRow(dbs, user, { day, ts: `${day}T10:00:00`, role: i % 2 ? 'assistant' : 'user', content: texts[i]!, session_id: 's', session_message_id: i + 1 });
        }
      });
    let t0 = performance.now();
    await write(OFF_USER);
    withoutIndexMs += performance.now() - t0;
    t0 = performance.now();
    await write(USER);
    withIndexMs += performance.now() - t0;
  }
  let t0 = performance.now();
  sqlite.transaction(() => {
    for (let i = 0; i < SIZE; i++) insert.run(i + 1, texts[i]!);
  })();
  const ftsBuildMs = performance.now() - t0;
  const indexBytesByDb = searchDbBytes(dbs.search);
  const indexBytes = Object.values(indexBytesByDb).reduce((a, b) => a + b, 0);

  // Queries.
  const queries: string[] = [];
  const { mid, rare, common } = corpus;
  for (let i = 0; i < 200; i++) queries.push(`${mid()} ${mid()}`);
  for (let i = 0; i < 200; i++) queries.push(`${rare()} ${common()}`);
  const ftsQuery = sqlite.prepare('SELECT rowid, content, bm25(t) AS score FROM t WHERE t MATCH ? ORDER BY score LIMIT 10');

  const mnemo = { mid: new Samples(), rare: new Samples() };
  const fts = { mid: new Samples(), rare: new Samples() };
  let agree = 0;
  for (let round = 0; round < 2; round++) {
    queries.forEach((q, i) => {
      const kind = i < 200 ? 'mid' : 'rare';
      let s = performance.now();
      const hits = rankedDocs(dbs, { userId: USER, terms: queryTerms(q), filters: {}, limit: 10 });
      if (round === 1) mnemo[kind].add(performance.now() - s);
      s = performance.now();
      const rows = ftsQuery.all(q.split(' ').map((w) => `"${w}"`).join(' OR ')) as { rowid: number }[];
      if (round === 1) fts[kind].add(performance.now() - s);
      if (round === 1 && hits[0]?.row && rows[0] && (hits[0].row.sessionMessageId ?? hits[0].row.id) === rows[0].rowid) agree++;
    });
  }

  // Tokenizers on the Chinese rows.
  const zh = texts.filter((_, i) => i % 10 === 9).slice(0, 5_000);
  t0 = performance.now();
  let bigramTokens = 0;
  for (const t of zh) bigramTokens += tokenize(t).length;
  const bigramMs = performance.now() - t0;
  t0 = performance.now();
  let segTokens = 0;
  for (const t of zh) segTokens += tokenizeWithSegmenter(t).length;
  const segMs = performance.now() - t0;

  const result = {
    size: SIZE,
    textBytes,
    indexBytes,
    indexBytesByDb,
    indexToText: indexBytes / textBytes,
    writeRowsOnlyMs: withoutIndexMs,
    writeRowsWithIndexMs: withIndexMs,
    upkeepShareOfRowWrite: (withIndexMs - withoutIndexMs) / withIndexMs,
    ftsBuildMs,
    chatTurnsPerSecond: turns,
    chatTurnCostOfIndex: 1 - turns.indexed / turns.unindexed,
    query: { mnemo: { mid: mnemo.mid.summary(), rare: mnemo.rare.summary() }, fts5: { mid: fts.mid.summary(), rare: fts.rare.summary() } },
    topHitAgreement: agree / queries.length,
    tokenizer: {
      bigram: { rows: zh.length, tokens: bigramTokens, ms: bigramMs },
      segmenter: { rows: zh.length, tokens: segTokens, ms: segMs },
    },
  };
  const ms = (s: LatencySummary) => `${s.p50Ms.toFixed(3)} / ${s.p99Ms.toFixed(3)}`;
  console.log(`## Ranked search, ${SIZE.toLocaleString('en')} messages of one user\n`);
  console.log('| query (p50 / p99 ms) | Mnemo BM25 (LMDB) | SQLite FTS5 bm25 |');
  console.log('|---|---|---|');
  console.log(`| two mid-frequency words | ${ms(result.query.mnemo.mid)} | ${ms(result.query.fts5.mid)} |`);
  console.log(`| rare word + common word | ${ms(result.query.mnemo.rare)} | ${ms(result.query.fts5.rare)} |`);
  console.log(`\nindex ${(indexBytes / 2 ** 20).toFixed(1)} MiB for ${(textBytes / 2 ** 20).toFixed(1)} MiB of text (${result.indexToText.toFixed(2)}x): ${Object.entries(indexBytesByDb).map(([k, v]) => `${k} ${(v / 2 ** 20).toFixed(1)}`).join(', ')}`);
  console.log(`daily rows written: ${withoutIndexMs.toFixed(0)} ms without the index, ${withIndexMs.toFixed(0)} ms with it (index: ${(result.upkeepShareOfRowWrite * 100).toFixed(0)}% of the write time); FTS5 build ${ftsBuildMs.toFixed(0)} ms`);
  console.log(`chat turns at 100 conversations: ${turns.unindexed.toFixed(0)}/s unindexed, ${turns.indexed.toFixed(0)}/s indexed (${(result.chatTurnCostOfIndex * 100).toFixed(0)}% fewer)`);
  console.log(`same top hit as FTS5: ${(result.topHitAgreement * 100).toFixed(0)}% of queries`);
  console.log(`Chinese tokenizing, ${zh.length} rows: bigrams ${bigramMs.toFixed(0)} ms (${bigramTokens} tokens), Intl.Segmenter ${segMs.toFixed(0)} ms (${segTokens} tokens)`);

  const out = join(dirname(fileURLToPath(import.meta.url)), 'results', 'search-rank.json');
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify(result, null, 2) + '\n');
  sqlite.close();
  await new Promise((r) => setTimeout(r, 0));
  await lease.release();
  rmSync(dir, { recursive: true, force: true });
}

await main();
