/**
 * Import + open + first read in fresh Node processes, the compiled package (dist/esm) against
 * raw lmdb-js on the same files: the measurement behind bench/startup.ts and the suite's
 * `startup` workload. A store of `messages` messages in conversations of `per` is written once
 * with Mnemo (in a child of its own); then, taking turns (a b c a b c ...), fresh children run:
 *   - `mnemo-lmdb`: `import('mnemo')`, `startRuntime({ dataDir })` (the supervision tree, the
 *     journal, recall), `runtime.memory.get(conversation)`;
 *   - `mnemo-store`: `import('mnemo')`, `createLmdbStore({ path })`, `store.get(conversation)`;
 *   - `raw-lmdb`: `import('lmdb')`, `open(dir)` + `openDB('messages')`, a range read of the
 *     same conversation's rows (the same keys and JSON values Mnemo wrote);
 *   - `baseline` (optional): the first, with another build's entry file (before and after).
 * Each child reports import, open and first-read ms (performance.now() inside it), the parent
 * the spawn-to-exit time. Medians. The page cache is warm: a process restart, not a cold boot.
 * Builds dist/ first when it is missing (`npm run build`).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The ways a child can start. */
export type StartupWay = 'mnemo-lmdb' | 'mnemo-store' | 'raw-lmdb' | 'baseline';

export interface StartupOptions {
  messages: number;
  per: number;
  runs: number;
  /** The ways to run, in table order (default: Mnemo's runtime, its store, raw lmdb-js). */
  ways?: readonly StartupWay[];
  /** Another build's `dist/esm/src/index.js`, run as the runtime (`baseline`). */
  baseline?: string;
  /** Told after each round of children. */
  onRound?: (done: number) => void;
}

export interface StartupRow {
  way: StartupWay;
  importMs: number;
  openMs: number;
  readMs: number;
  /** Median of open + read. */
  openReadMs: number;
  /** Median of import + open + read. */
  totalMs: number;
  processMs: number;
  /** Every child read `per` rows. */
  rowsRead: boolean;
}

interface Sample {
  importMs: number;
  openMs: number;
  readMs: number;
  rows: number;
  processMs: number;
}

const report = 'console.log(JSON.stringify({ importMs: t1 - t0, openMs: t2 - t1, readMs: t3 - t2, rows: rows.length }));';

/** The runtime's child script for the build at `entry`. */
const runtimeScript = (entry: string, dir: string, c: string) => `
const t0 = performance.now();
const { startRuntime } = await import(${JSON.stringify(entry)});
const t1 = performance.now();
const runtime = await startRuntime({ dataDir: ${JSON.stringify(dir)} });
const t2 = performance.now();
const rows = await runtime.memory.get(${JSON.stringify(c)});
const t3 = performance.now();
await runtime.stop();
${report}`;

const storeScript = (entry: string, dir: string, c: string) => `
const t0 = performance.now();
const { createLmdbStore } = await import(${JSON.stringify(entry)});
const t1 = performance.now();
const store = createLmdbStore({ path: ${JSON.stringify(dir)} });
const t2 = performance.now();
const rows = await store.get(${JSON.stringify(c)});
const t3 = performance.now();
await store.close();
${report}`;

const rawScript = (dir: string, c: string) => `
const t0 = performance.now();
const { open } = await import('lmdb');
const t1 = performance.now();
const env = open({ path: ${JSON.stringify(dir)}, noSubdir: false, maxDbs: 32 });
const db = env.openDB('messages', { encoding: 'json' });
const t2 = performance.now();
const rows = [];
for (const { value } of db.getRange({ start: [${JSON.stringify(c)}], end: [${JSON.stringify(c)}, Infinity] })) rows.push(value.message);
const t3 = performance.now();
await env.close();
${report}`;

function runChild(script: string): Sample {
  const start = process.hrtime.bigint();
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' });
  const processMs = Number(process.hrtime.bigint() - start) / 1e6;
  if (r.status !== 0) throw new Error(`startup child failed: ${r.stderr}`);
  return { ...(JSON.parse(r.stdout.trim().split('\n').pop()!) as Omit<Sample, 'processMs'>), processMs };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export function runStartup(options: StartupOptions): StartupRow[] {
  const { messages, per, runs } = options;
  const distFile = join(ROOT, 'dist', 'esm', 'src', 'index.js');
  if (!existsSync(distFile)) execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
  const dist = pathToFileURL(distFile).href;
  const baseline = options.baseline === undefined ? undefined : pathToFileURL(options.baseline).href;
  const ways = (options.ways ?? ['mnemo-lmdb', 'mnemo-store', 'raw-lmdb']).filter((w) => w !== 'baseline' || baseline !== undefined);
  const scriptOf = (way: StartupWay, dir: string, c: string): string =>
    way === 'mnemo-lmdb' ? runtimeScript(dist, dir, c) : way === 'baseline' ? runtimeScript(baseline!, dir, c) : way === 'mnemo-store' ? storeScript(dist, dir, c) : rawScript(dir, c);

  const dir = mkdtempSync(join(tmpdir(), 'mnemo-startup-'));
  try {
    const conversations = Math.max(1, Math.floor(messages / per));
    const fill = `
const { startRuntime } = await import(${JSON.stringify(dist)});
const runtime = await startRuntime({ dataDir: ${JSON.stringify(dir)} });
for (let c = 0; c < ${conversations}; c++) {
  await runtime.memory.add('conv-' + c, Array.from({ length: ${per} }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: 'message ' + i + ' of conversation ' + c + ': a few ordinary words of text' })));
}
await runtime.stop();`;
    const filled = spawnSync(process.execPath, ['--input-type=module', '-e', fill], { cwd: ROOT, encoding: 'utf8' });
    if (filled.status !== 0) throw new Error(`startup fill failed: ${filled.stderr}`);
    const conversation = `conv-${Math.floor(conversations / 2)}`;
    const samples = new Map<StartupWay, Sample[]>(ways.map((w) => [w, []]));
    for (let r = 0; r < runs; r++) {
      for (const way of ways) samples.get(way)!.push(runChild(scriptOf(way, dir, conversation)));
      options.onRound?.(r + 1);
    }
    return ways.map((way) => {
      const s = samples.get(way)!;
      return {
        way,
        importMs: median(s.map((x) => x.importMs)),
        openMs: median(s.map((x) => x.openMs)),
        readMs: median(s.map((x) => x.readMs)),
        openReadMs: median(s.map((x) => x.openMs + x.readMs)),
        totalMs: median(s.map((x) => x.importMs + x.openMs + x.readMs)),
        processMs: median(s.map((x) => x.processMs)),
        rowsRead: s.every((x) => x.rows === Math.min(per, messages)),
      };
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
