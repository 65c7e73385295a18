/**
 * `npx tsx bench/index-build.ts [--size 200000] [--repeats 3]`: building the ranked index of one
 * user's history, Mnemo's bulk rebuild (`rebuildUserIndex`, search/rebuild.ts, on the main
 * thread: no search pool) against SQLite FTS5 (`porter unicode61`, WAL, synchronous OFF, one
 * transaction) over the same texts, side by side, alternating (Mnemo, FTS5, Mnemo, FTS5, ...).
 * The corpus is the suite's ranked-search corpus (bench/suite/search-corpus.ts, seed 42); the
 * rows are written first (a user whose rows predate the index), and only the build is timed.
 * Prints the median build seconds and the ratio; writes bench/results/index-build.json.
 *
 *   --baseline DIR   also build with the sources of another checkout at DIR (say, an earlier
 *                    commit's `git archive`, with node_modules linked), in the same alternation:
 *                    before and after in one run.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { pathToFileURL } from 'node:url';
import { searchCorpus } from './suite/search-corpus.ts';
import { withTempDir } from './suite/temp-dir.ts';

const args = process.argv.slice(2);
const arg = (name: string, fallback: number): number => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? Number(args[i + 1]) : fallback;
};
const size = arg('size', 200_000);
const repeats = arg('repeats', 3);
const USER = 'bench-user';

const baselineAt = args.indexOf('--baseline');
const baseline = baselineAt >= 0 ? args[baselineAt + 1] : undefined;

/** The four functions a build needs, from the checkout at `root` (each checkout its own module instances). */
async function sourcesAt(root: string) {
  const at = (rel: string) => import(pathToFileURL(join(root, rel)).href);
  const [env, daily, recallDbs, rebuild] = await Promise.all([
    at('src/memory/lmdb/lmdb-environment.ts'),
    at('src/recall/storage/lmdb/daily-store.ts'),
    at('src/recall/storage/lmdb/recall-dbs.ts'),
    at('src/recall/storage/lmdb/search/rebuild.ts'),
  ]);
  return {
    acquireEnvironment: env.acquireEnvironment as typeof import('../src/memory/lmdb/lmdb-environment.ts').acquireEnvironment,
    putDailyRow: daily.putDailyRow as typeof import('../src/recall/storage/lmdb/daily-store.ts').putDailyRow,
    commit: recallDbs.commit as typeof import('../src/recall/storage/lmdb/recall-dbs.ts').commit,
    openRecallDbs: recallDbs.openRecallDbs as typeof import('../src/recall/storage/lmdb/recall-dbs.ts').openRecallDbs,
    rebuildUserIndex: rebuild.rebuildUserIndex as typeof import('../src/recall/storage/lmdb/search/rebuild.ts').rebuildUserIndex,
  };
}
type Sources = Awaited<ReturnType<typeof sourcesAt>>;
const current = await sourcesAt(fileURLToPath(new URL('..', import.meta.url)));
const before = baseline === undefined ? undefined : await sourcesAt(baseline);

const corpus = searchCorpus(42);
const texts = Array.from({ length: size }, (_, i) => corpus.message(i));

async function mnemoBuild({ acquireEnvironment, openRecallDbs, commit, putDailyRow, rebuildUserIndex }: Sources): Promise<number> {
  return withTempDir('index-build', async (dir) => {
    const lease = acquireEnvironment(dir, { noSync: true, mapSize: 64 * 2 ** 30 });
    const dbs = openRecallDbs(lease);
    try {
      await commit(dbs, () => dbs.counters.put([USER, 'daily-rows'], 1));
      for (let start = 0; start < size; start += 5_000) {
        await commit(dbs, () => {
          for (let i = start; i < Math.min(size, start + 5_000); i++) {
            const day = corpus.dayOf(i);
            putDailyRow(dbs, USER, { day, ts: `${day}T10:00:00`, role: i % 2 ? 'assistant' : 'user', content: texts[i]!, session_id: 's', session_message_id: i + 1 });
          }
        });
      }
      const t0 = performance.now();
      const indexed = await rebuildUserIndex({ dbs, pool: undefined }, USER);
      const ms = performance.now() - t0;
      // A row without a term (one in a few thousand of the corpus) is no document.
      if (indexed < size * 0.99) throw new Error(`rebuild indexed ${indexed} of ${size}`);
      return ms;
    } finally {
      await new Promise((r) => setTimeout(r, 0));
      await lease.release();
    }
  });
}

function fts5Build(): Promise<number> {
  return withTempDir('index-build-fts5', async (dir) => {
    const sqlite = new Database(join(dir, 'fts.sqlite'));
    try {
      sqlite.pragma('journal_mode = WAL');
      sqlite.pragma('synchronous = OFF');
      sqlite.exec(`CREATE VIRTUAL TABLE t USING fts5(content, tokenize = 'porter unicode61')`);
      const insert = sqlite.prepare('INSERT INTO t(rowid, content) VALUES (?, ?)');
      const t0 = performance.now();
      sqlite.transaction(() => {
        for (let i = 0; i < size; i++) insert.run(i + 1, texts[i]!);
      })();
      return performance.now() - t0;
    } finally {
      sqlite.close();
    }
  });
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const mnemo: number[] = [];
const baselineMs: number[] = [];
const fts5: number[] = [];
for (let r = 0; r < repeats; r++) {
  if (before !== undefined) baselineMs.push(await mnemoBuild(before));
  mnemo.push(await mnemoBuild(current));
  fts5.push(await fts5Build());
  process.stderr.write(`\rrun ${r + 1}/${repeats}`);
}
process.stderr.write('\n');
const m = median(mnemo);
const f = median(fts5);
process.stdout.write(`ranked index build, ${size.toLocaleString('en-US')} rows, median of ${repeats}\n\n| | build s | ÷ FTS5 |\n| --- | ---: | ---: |\n`);
if (before !== undefined) {
  const b = median(baselineMs);
  process.stdout.write(`| Mnemo, --baseline sources | ${(b / 1000).toFixed(2)} | ${(b / f).toFixed(2)}x |\n`);
}
process.stdout.write(`| Mnemo rebuildUserIndex | ${(m / 1000).toFixed(2)} | ${(m / f).toFixed(2)}x |\n| SQLite FTS5 | ${(f / 1000).toFixed(2)} | 1.00x |\n`);
const results = join(fileURLToPath(new URL('.', import.meta.url)), 'results');
mkdirSync(results, { recursive: true });
writeFileSync(
  join(results, 'index-build.json'),
  `${JSON.stringify({ date: new Date().toISOString(), command: `npx tsx bench/index-build.ts ${args.join(' ')}`.trim(), size, repeats, mnemoMs: mnemo, fts5Ms: fts5, ratio: m / f, ...(before === undefined ? {} : { baseline, baselineMs, baselineRatio: median(baselineMs) / f }) }, null, 2)}\n`,
);
