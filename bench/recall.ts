/**
 * Keyword recall over one user's large history: latency of the search, and how long the event
 * loop stalls while it runs, three ways:
 *
 * - `blocking`: the scan run straight through on the main thread (what a naive port does; the
 *   demo read and scanned whole files synchronously);
 * - `inline`: Mnemo's inline path, the same scan pausing for the event loop every 2 000 rows;
 * - `pooled`: Mnemo's pool path, the scan on a piscina worker reading LMDB directly.
 *
 * Histories: daily rows spread over days (search_daily without a day: every day) and one long
 * session (search_session), at 100k and 1M messages (`--quick`: 10k and 100k). Queries: a
 * keyword that matches nothing (the worst case: every row is read), a rare one (20 hits spread
 * through the history, limit 20: nearly every row is read) and a common one (limit 20: the
 * newest rows answer it). Event-loop delay: `perf_hooks.monitorEventLoopDelay` (1 ms
 * resolution) enabled only while the searches run: the longest time a timer waited behind
 * the search.
 *
 * Run: `npx tsx bench/recall.ts [--quick]`. Prints a table and writes bench/results/recall.json.
 */
import { lmdbRecall } from './support/lmdb-recall.ts';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { median } from './suite/stats.ts';
import { makeTempDir } from './suite/temp-dir.ts';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { acquireEnvironment } from '../src/memory/lmdb/lmdb-environment.ts';
import { createLmdbStore } from '../src/memory/lmdb/lmdb-store.ts';
import { MESSAGES_DB } from '../src/memory/lmdb/lmdb-table.ts';
import { putDailyRow } from '../src/recall/storage/lmdb/daily-store.ts';
import { commit, openRecallDbs } from '../src/recall/storage/lmdb/recall-dbs.ts';
import { runThrough, scanDaily, scanSession, type RawSessionRecord } from '../src/recall/storage/lmdb/search/search-scan.ts';
import { openRawText } from '../src/recall/storage/lmdb/recall-dbs.ts';
import { createRecall, createSearchPool, type Recall } from '../src/recall/index.ts';

const quick = process.argv.includes('--quick');
const SIZES = quick ? [10_000, 100_000] : [100_000, 1_000_000];
const ROWS_PER_DAY = 1_000;
const RUNS = 3;
const USER = 'bench-user';
const SESSION = 'long';

type Mode = 'blocking' | 'inline' | 'pooled';
type Scope = 'daily' | 'session';
interface Query {
  name: 'none' | 'rare' | 'common';
  keyword: string;
}
const QUERIES: Query[] = [
  { name: 'none', keyword: 'zz-absent-zz' },
  { name: 'rare', keyword: 'needle' },
  { name: 'common', keyword: 'weather' },
];

interface Figure {
  scope: Scope;
  messages: number;
  query: Query['name'];
  mode: Mode;
  hits: number;
  medianMs: number;
  loopDelayMaxMs: number;
  loopDelayP99Ms: number;
}

function content(i: number, n: number): string {
  if (i % Math.floor(n / 20) === 7) return `found the needle at ${i}`;
  return i % 3 === 0 ? `talked about the weather, item ${i}` : `ordinary message number ${i} with some text in it`;
}

async function load(dir: string, n: number): Promise<void> {
  const env = acquireEnvironment(dir, { noSync: true });
  const store = createLmdbStore({ path: dir });
  const dbs = openRecallDbs(env);
  const batch = 10_000;
  for (let start = 0; start < n; start += batch) {
    await commit(dbs, () => {
      for (let i = start; i < Math.min(n, start + batch); i++) {
        const day = dayOf(Math.floor(i / ROWS_PER_DAY));
        putDailyRow(dbs, USER, {
          day,
          ts: `${day}T12:00:00`,
          role: i % 2 === 0 ? 'user' : 'assistant',
          content: content(i, n),
          session_id: SESSION,
          session_message_id: i + 1,
        });
      }
    });
    await store.append(
      `session/${USER}/${SESSION}`,
      Array.from({ length: Math.min(batch, n - start) }, (_, k) => ({
        message: { role: (start + k) % 2 === 0 ? ('user' as const) : ('assistant' as const), content: content(start + k, n) },
        meta: { ts: '2026-01-01T12:00:00' },
      })),
    );
  }
  await store.close();
  await new Promise((r) => setTimeout(r, 0));
  await env.release();
}

function dayOf(k: number): string {
  return new Date(Date.UTC(2020, 0, 1) + k * 86_400_000).toISOString().slice(0, 10);
}

async function measure(run: () => Promise<number>): Promise<{ hits: number; medianMs: number; loopDelayMaxMs: number; loopDelayP99Ms: number }> {
  const times: number[] = [];
  let hits = 0;
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  await run(); // warm: the pool's thread start and the page cache are not what is measured
  histogram.enable();
  // The monitor's first tick only sets its baseline; let it tick a few times before the searches.
  await new Promise((r) => setTimeout(r, 50));
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    hits = await run();
    times.push(performance.now() - t0);
    // Let the monitor tick between searches, so it reports one search's stall, not three.
    await new Promise((r) => setTimeout(r, 5));
  }
  // Let the monitor's timer fire once after the last search, so a final stall is recorded.
  await new Promise((r) => setTimeout(r, 20));
  histogram.disable();
  return {
    hits,
    medianMs: round(median(times)),
    loopDelayMaxMs: round(histogram.max / 1e6),
    loopDelayP99Ms: round(histogram.percentile(99) / 1e6),
  };
}

function round(x: number): number {
  return Math.round(x * 100) / 100;
}

async function benchSize(n: number): Promise<Figure[]> {
  const dir = makeTempDir('recall');
  const figures: Figure[] = [];
  try {
    const t0 = performance.now();
    await load(dir, n);
    console.log(`  loaded ${n.toLocaleString('en')} daily rows + ${n.toLocaleString('en')} session rows in ${Math.round(performance.now() - t0)} ms`);

    const env = acquireEnvironment(dir, { noSync: true });
    const store = createLmdbStore({ path: dir });
    const pool = createSearchPool({ maxThreads: 1 });
    const inline: Recall = lmdbRecall({ memory: store, env, });
    const pooled: Recall = lmdbRecall({ memory: store, env, pool, poolThreshold: 0 });
    const dbs = openRecallDbs(env);
    const messages = {
      json: env.root.openDB<RawSessionRecord, [string, number]>(MESSAGES_DB, { encoding: 'json' }),
      text: openRawText<[string, number]>(env.root, MESSAGES_DB),
    };
    const conversationId = `session/${USER}/${SESSION}`;

    for (const q of QUERIES) {
      const daily: Record<Mode, () => Promise<number>> = {
        blocking: async () => runThrough(scanDaily({ json: dbs.daily, text: dbs.dailyText }, USER, null, q.keyword, 20)).length,
        inline: async () => (await inline.searchDaily({ userId: USER, keyword: q.keyword, limit: 20 })).length,
        pooled: async () => (await pooled.searchDaily({ userId: USER, keyword: q.keyword, limit: 20 })).length,
      };
      const session: Record<Mode, () => Promise<number>> = {
        blocking: async () => runThrough(scanSession(messages, conversationId, q.keyword, 20)).length,
        inline: async () => (await inline.searchSession({ userId: USER, sessionId: SESSION, keyword: q.keyword, limit: 20 })).length,
        pooled: async () => (await pooled.searchSession({ userId: USER, sessionId: SESSION, keyword: q.keyword, limit: 20 })).length,
      };
      for (const [scope, runs] of [['daily', daily], ['session', session]] as const) {
        for (const mode of ['blocking', 'inline', 'pooled'] as const) {
          const m = await measure(runs[mode]);
          figures.push({ scope, messages: n, query: q.name, mode, ...m });
          console.log(
            `  ${scope.padEnd(7)} ${q.name.padEnd(6)} ${mode.padEnd(8)} hits ${String(m.hits).padStart(3)}  median ${String(m.medianMs).padStart(9)} ms  loop delay max ${String(m.loopDelayMaxMs).padStart(8)} ms  p99 ${String(m.loopDelayP99Ms).padStart(8)} ms`,
          );
        }
      }
    }
    await inline.close();
    await pooled.close();
    await pool.close();
    await store.close();
    await new Promise((r) => setTimeout(r, 0));
    await env.release();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return figures;
}

function ratios(figures: Figure[]) {
  const out: { scope: Scope; messages: number; query: string; pooledOverInlineLatency: number; pooledOverBlockingLatency: number; blockingOverPooledLoopDelay: number }[] = [];
  for (const f of figures.filter((x) => x.mode === 'pooled')) {
    const same = (mode: Mode) => figures.find((x) => x.scope === f.scope && x.messages === f.messages && x.query === f.query && x.mode === mode)!;
    const inline = same('inline');
    const blocking = same('blocking');
    out.push({
      scope: f.scope,
      messages: f.messages,
      query: f.query,
      pooledOverInlineLatency: round(f.medianMs / inline.medianMs),
      pooledOverBlockingLatency: round(f.medianMs / blocking.medianMs),
      blockingOverPooledLoopDelay: round(blocking.loopDelayMaxMs / Math.max(f.loopDelayMaxMs, 0.01)),
    });
  }
  return out;
}

async function main(): Promise<void> {
  console.log(
    `recall search bench (${quick ? 'quick' : 'full'}): ${RUNS} runs per figure, node ${process.version}, ${availableParallelism()} cores (${cpus()[0]?.model ?? '?'}), load average ${loadavg().map((x) => x.toFixed(1)).join(' ')}`,
  );
  const figures: Figure[] = [];
  for (const n of SIZES) {
    console.log(`\n${n.toLocaleString('en')} messages of one user`);
    figures.push(...(await benchSize(n)));
  }
  const r = ratios(figures);
  console.log('\nratios (pooled/inline latency, pooled/blocking latency, blocking/pooled max loop delay)');
  for (const x of r) {
    console.log(`  ${x.scope.padEnd(7)} ${String(x.messages).padStart(8)} ${x.query.padEnd(6)} ${String(x.pooledOverInlineLatency).padStart(6)}  ${String(x.pooledOverBlockingLatency).padStart(6)}  ${String(x.blockingOverPooledLoopDelay).padStart(8)}`);
  }
  const file = join(dirname(fileURLToPath(import.meta.url)), 'results', 'recall.json');
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(
    file,
    `${JSON.stringify({ bench: 'recall', quick, node: process.version, cores: availableParallelism(), loadAverage: loadavg(), runsPerFigure: RUNS, date: new Date().toISOString(), figures, ratios: r }, null, 2)}\n`,
  );
  console.log(`\nwrote ${file}`);
}

await main();
