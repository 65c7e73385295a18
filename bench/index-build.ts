/**
 * `npx tsx bench/index-build.ts [--size 200000] [--repeats 3]`: building the ranked index of one
 * user's history, Mnemo's bulk rebuild against SQLite FTS5 over the same texts
 * (bench/suite/index-build-run.ts; the suite's `index-build` workload runs the same), side by
 * side, alternating (Mnemo, FTS5, Mnemo, FTS5, ...).
 * The corpus is the suite's ranked-search corpus (bench/suite/search-corpus.ts, seed 42); the
 * rows are written first (a user whose rows predate the index), and only the build is timed.
 * Second, a Demo folder import of the same rows (`recall.importDemoFolder`: one user, sessions
 * of 100 rows, each row in its session file and its day's daily file, as the demo writes them),
 * timed whole (transcripts, daily rows, the index), beside the same FTS5 build.
 * Prints the median build seconds and the ratios; writes bench/results/index-build.json.
 *
 *   --baseline DIR   also build with the sources of another checkout at DIR (say, an earlier
 *                    commit's `git archive`, with node_modules linked), in the same alternation:
 *                    before and after in one run.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pathToFileURL } from 'node:url';
import { fts5BuildMs, INDEX_USER as USER, mnemoRebuildMs, type IndexSources } from './suite/index-build-run.ts';
import { searchCorpus } from './suite/search-corpus.ts';
import { withTempDir } from './suite/temp-dir.ts';

const args = process.argv.slice(2);
const arg = (name: string, fallback: number): number => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? Number(args[i + 1]) : fallback;
};
const size = arg('size', 200_000);
const repeats = arg('repeats', 3);

const baselineAt = args.indexOf('--baseline');
const baseline = baselineAt >= 0 ? args[baselineAt + 1] : undefined;

/** What a build and an import need, from the checkout at `root` (each checkout its own module instances). */
async function sourcesAt(root: string) {
  const at = (rel: string) => import(pathToFileURL(join(root, rel)).href);
  const [env, daily, recallDbs, rebuild, store, recall] = await Promise.all([
    at('src/memory/lmdb/lmdb-environment.ts'),
    at('src/recall/storage/lmdb/daily-store.ts'),
    at('src/recall/storage/lmdb/recall-dbs.ts'),
    at('src/recall/storage/lmdb/search/rebuild.ts'),
    at('src/memory/lmdb/lmdb-store.ts'),
    at('src/recall/index.ts'),
  ]);
  const build: IndexSources = {
    acquireEnvironment: env.acquireEnvironment,
    putDailyRow: daily.putDailyRow,
    commit: recallDbs.commit,
    openRecallDbs: recallDbs.openRecallDbs,
    rebuildUserIndex: rebuild.rebuildUserIndex,
  };
  return {
    build,
    acquireEnvironment: build.acquireEnvironment,
    createLmdbStore: store.createLmdbStore as typeof import('../src/memory/lmdb/lmdb-store.ts').createLmdbStore,
    createLmdbRecallStore: recall.createLmdbRecallStore as typeof import('../src/recall/index.ts').createLmdbRecallStore,
    createRecall: recall.createRecall as typeof import('../src/recall/index.ts').createRecall,
  };
}
type Sources = Awaited<ReturnType<typeof sourcesAt>>;
const current = await sourcesAt(fileURLToPath(new URL('..', import.meta.url)));
const before = baseline === undefined ? undefined : await sourcesAt(baseline);

const corpus = searchCorpus(42);
const texts = Array.from({ length: size }, (_, i) => corpus.message(i));

/** Writes the rows as a Demo folder (one user) under `root`. */
function writeDemoFolder(root: string): void {
  const u = join(root, USER);
  mkdirSync(join(u, 'sessions'), { recursive: true });
  mkdirSync(join(u, 'daily'), { recursive: true });
  const conversations: Record<string, { title: string; updated_at: string }> = {};
  const days = new Map<string, string[]>();
  for (let start = 0, s = 0; start < size; start += 100, s++) {
    const lines: string[] = [];
    for (let i = start; i < Math.min(size, start + 100); i++) {
      const day = corpus.dayOf(i);
      const ts = `${day}T10:00:00`;
      const role = i % 2 ? 'assistant' : 'user';
      lines.push(JSON.stringify({ ts, role, content: texts[i]!, tags: ['session'], meta: {}, message_id: i - start + 1 }));
      let daily = days.get(day);
      if (daily === undefined) days.set(day, (daily = []));
      daily.push(JSON.stringify({ ts, role, content: texts[i]!, tags: ['daily'], meta: { session_id: `s${s}` }, message_id: daily.length + 1 }));
    }
    writeFileSync(join(u, 'sessions', `s${s}.jsonl`), `${lines.join('\n')}\n`);
    conversations[`s${s}`] = { title: `s${s}`, updated_at: `${corpus.dayOf(start)}T10:00:00` };
  }
  for (const [day, lines] of days) writeFileSync(join(u, 'daily', `${day}.jsonl`), `${lines.join('\n')}\n`);
  writeFileSync(join(u, 'conversations.json'), JSON.stringify(conversations));
}

async function mnemoImport({ acquireEnvironment, createLmdbStore, createLmdbRecallStore, createRecall }: Sources, folder: string): Promise<number> {
  return withTempDir('index-import', async (dir) => {
    const env = acquireEnvironment(dir, { noSync: true, mapSize: 64 * 2 ** 30 });
    const memory = createLmdbStore({ path: dir });
    const store = createLmdbRecallStore({ env, transcripts: memory });
    const recall = createRecall({ store, timeZone: 'UTC' });
    try {
      const t0 = performance.now();
      const report = await recall.importDemoFolder(folder);
      // The index is complete: the first search pays no rebuild.
      await recall.search({ userId: USER, query: 'the' });
      const ms = performance.now() - t0;
      if (report.dailyRows !== size) throw new Error(`imported ${report.dailyRows} daily rows of ${size}`);
      return ms;
    } finally {
      await recall.close();
      await store.close();
      await memory.close();
      await new Promise((r) => setTimeout(r, 0));
      await env.release();
    }
  });
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const mnemo: number[] = [];
const baselineMs: number[] = [];
const fts5: number[] = [];
const imports: number[] = [];
const baselineImports: number[] = [];
await withTempDir('index-folder', async (folder) => {
  writeDemoFolder(folder);
  for (let r = 0; r < repeats; r++) {
    if (before !== undefined) baselineMs.push(await mnemoRebuildMs(before.build, corpus, texts));
    mnemo.push(await mnemoRebuildMs(current.build, corpus, texts));
    fts5.push(await fts5BuildMs(texts));
    if (before !== undefined) baselineImports.push(await mnemoImport(before, folder));
    imports.push(await mnemoImport(current, folder));
    process.stderr.write(`\rrun ${r + 1}/${repeats}`);
  }
});
process.stderr.write('\n');
const m = median(mnemo);
const f = median(fts5);
const line = (label: string, ms: number) => `| ${label} | ${(ms / 1000).toFixed(2)} | ${(ms / f).toFixed(2)}x |\n`;
process.stdout.write(`ranked index build, ${size.toLocaleString('en-US')} rows, median of ${repeats}\n\n| | s | ÷ FTS5 build |\n| --- | ---: | ---: |\n`);
if (before !== undefined) process.stdout.write(line('rebuild, --baseline sources', median(baselineMs)));
process.stdout.write(line('rebuild (rebuildUserIndex)', m));
if (before !== undefined) process.stdout.write(line('Demo folder import, --baseline sources', median(baselineImports)));
process.stdout.write(line('Demo folder import (importDemoFolder, whole)', median(imports)));
process.stdout.write(line('SQLite FTS5 build', f));
const results = join(fileURLToPath(new URL('.', import.meta.url)), 'results');
mkdirSync(results, { recursive: true });
writeFileSync(
  join(results, 'index-build.json'),
  `${JSON.stringify({ date: new Date().toISOString(), command: `npx tsx bench/index-build.ts ${args.join(' ')}`.trim(), size, repeats, mnemoMs: mnemo, fts5Ms: fts5, importMs: imports, ratio: m / f, importRatio: median(imports) / f, ...(before === undefined ? {} : { baseline, baselineMs, baselineImportMs: baselineImports, baselineRatio: median(baselineMs) / f, baselineImportRatio: median(baselineImports) / f }) }, null, 2)}\n`,
);
