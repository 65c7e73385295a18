/**
 * `npx tsx bench/startup.ts [--messages 100000] [--per 100] [--runs 9]`: how long a fresh Node
 * process takes from nothing to its first read of data already on disk, Mnemo as an installed
 * user loads it (the compiled package, dist/esm) against raw lmdb-js opening the same files,
 * side by side in one run. A store of `--messages` messages in conversations of `--per` is
 * written once with Mnemo; then, alternating (a b c a b c ...) so machine load hits all alike,
 * fresh child processes run:
 *   (a) runtime: `import('mnemo')`, `startRuntime({ dataDir })` (the supervision tree, the
 *       journal, recall), `runtime.memory.get(conversation)`;
 *   (b) store: `import('mnemo')`, `createLmdbStore({ path })`, `store.get(conversation)`;
 *   (c) raw lmdb-js: `import('lmdb')`, `open(dir)` + `openDB('messages')`, a range read of the
 *       same conversation's rows (the same keys and JSON values Mnemo wrote).
 * Each child reports import, open and first-read ms (performance.now() inside the child) and
 * the parent the process's spawn-to-exit wall time. Printed: medians and ratios to raw lmdb-js
 * (no absolute targets: the machine is shared). Written to bench/results/startup.json. The
 * page cache is warm (the parent just wrote the data): a process restart, not a cold boot.
 * Builds dist/ first when it is missing (`npm run build`).
 *
 *   --baseline FILE   also run (a) with another build's entry (say, an earlier commit's
 *                     dist/esm/src/index.js), in the same alternation: before and after, one run.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const arg = (name: string, fallback: number): number => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? Number(args[i + 1]) : fallback;
};
const messages = arg('messages', 100_000);
const per = arg('per', 100);
const runs = arg('runs', 9);
const distFile = join(root, 'dist', 'esm', 'src', 'index.js');
if (!existsSync(distFile)) execFileSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
const dist = pathToFileURL(distFile).href;
const baselineAt = args.indexOf('--baseline');
const baseline = baselineAt >= 0 && args[baselineAt + 1] !== undefined ? pathToFileURL(args[baselineAt + 1]!).href : undefined;

interface Sample {
  importMs: number;
  openMs: number;
  readMs: number;
  rows: number;
  processMs: number;
}

/** (a): the runtime's child script for the build at `entry`. */
const runtimeScript = (entry: string) => (dir: string, c: string) => `
const t0 = performance.now();
const { startRuntime } = await import(${JSON.stringify(entry)});
const t1 = performance.now();
const runtime = await startRuntime({ dataDir: ${JSON.stringify(dir)} });
const t2 = performance.now();
const rows = await runtime.memory.get(${JSON.stringify(c)});
const t3 = performance.now();
await runtime.stop();
console.log(JSON.stringify({ importMs: t1 - t0, openMs: t2 - t1, readMs: t3 - t2, rows: rows.length }));`;

/** Each way's child script: prints `{importMs, openMs, readMs, rows}` as JSON. */
const ways: { id: string; label: string; script: (dir: string, conversation: string) => string }[] = [
  ...(baseline === undefined ? [] : [{ id: 'mnemo-runtime-baseline', label: 'Mnemo runtime, --baseline build', script: runtimeScript(baseline) }]),
  { id: 'mnemo-runtime', label: 'Mnemo runtime (startRuntime)', script: runtimeScript(dist) },
  {
    id: 'mnemo-store',
    label: 'Mnemo store (createLmdbStore)',
    script: (dir, c) => `
const t0 = performance.now();
const { createLmdbStore } = await import(${JSON.stringify(dist)});
const t1 = performance.now();
const store = createLmdbStore({ path: ${JSON.stringify(dir)} });
const t2 = performance.now();
const rows = await store.get(${JSON.stringify(c)});
const t3 = performance.now();
await store.close();
console.log(JSON.stringify({ importMs: t1 - t0, openMs: t2 - t1, readMs: t3 - t2, rows: rows.length }));`,
  },
  {
    id: 'raw-lmdb',
    label: 'raw lmdb-js',
    script: (dir, c) => `
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
console.log(JSON.stringify({ importMs: t1 - t0, openMs: t2 - t1, readMs: t3 - t2, rows: rows.length }));`,
  },
];

function runChild(script: string): Sample {
  const start = process.hrtime.bigint();
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' });
  const processMs = Number(process.hrtime.bigint() - start) / 1e6;
  if (r.status !== 0) throw new Error(`child failed: ${r.stderr}`);
  return { ...(JSON.parse(r.stdout.trim().split('\n').pop()!) as Omit<Sample, 'processMs'>), processMs };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const dir = mkdtempSync(join(tmpdir(), 'mnemo-startup-'));
try {
  const conversations = Math.max(1, Math.floor(messages / per));
  // Filled in a child of its own, so this process keeps no handle on the environment.
  const fill = `
const { startRuntime } = await import(${JSON.stringify(dist)});
const runtime = await startRuntime({ dataDir: ${JSON.stringify(dir)} });
for (let c = 0; c < ${conversations}; c++) {
  await runtime.memory.add('conv-' + c, Array.from({ length: ${per} }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: 'message ' + i + ' of conversation ' + c + ': a few ordinary words of text' })));
}
await runtime.stop();`;
  const filled = spawnSync(process.execPath, ['--input-type=module', '-e', fill], { cwd: root, encoding: 'utf8' });
  if (filled.status !== 0) throw new Error(`fill failed: ${filled.stderr}`);
  const conversation = `conv-${Math.floor(conversations / 2)}`;

  const samples = new Map<string, Sample[]>(ways.map((w) => [w.id, []]));
  for (let r = 0; r < runs; r++) {
    for (const way of ways) samples.get(way.id)!.push(runChild(way.script(dir, conversation)));
    process.stderr.write(`\rrun ${r + 1}/${runs}`);
  }
  process.stderr.write('\n');

  const rows = ways.map((way) => {
    const s = samples.get(way.id)!;
    const importMs = median(s.map((x) => x.importMs));
    const openMs = median(s.map((x) => x.openMs));
    const readMs = median(s.map((x) => x.readMs));
    const totalMs = median(s.map((x) => x.importMs + x.openMs + x.readMs));
    const processMs = median(s.map((x) => x.processMs));
    const rowsRead = s.every((x) => x.rows === per);
    return { id: way.id, label: way.label, importMs, openMs, readMs, openReadMs: median(s.map((x) => x.openMs + x.readMs)), totalMs, processMs, rowsRead };
  });
  const raw = rows.find((r) => r.id === 'raw-lmdb')!;
  const ratio = (a: number, b: number) => (b > 0 ? a / b : Number.NaN);
  const out = rows.map((r) => ({
    ...r,
    ratios: { total: ratio(r.totalMs, raw.totalMs), openRead: ratio(r.openReadMs, raw.openReadMs), process: ratio(r.processMs, raw.processMs) },
  }));

  process.stdout.write(
    `import + open + first read (${per} rows) of ${messages.toLocaleString('en-US')} messages, fresh process, Node ${process.version}, median of ${runs}\n\n`,
  );
  process.stdout.write('| | import ms | open ms | read ms | total ms | ÷ raw | open+read ÷ raw | process ms | ÷ raw |\n');
  process.stdout.write('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n');
  for (const r of out) {
    process.stdout.write(
      `| ${r.label}${r.rowsRead ? '' : ' (wrong row count!)'} | ${r.importMs.toFixed(1)} | ${r.openMs.toFixed(1)} | ${r.readMs.toFixed(2)} | ${r.totalMs.toFixed(1)} | ${r.ratios.total.toFixed(2)}x | ${r.ratios.openRead.toFixed(2)}x | ${r.processMs.toFixed(0)} | ${r.ratios.process.toFixed(2)}x |\n`,
    );
  }
  const results = join(root, 'bench', 'results');
  mkdirSync(results, { recursive: true });
  writeFileSync(
    join(results, 'startup.json'),
    `${JSON.stringify({ date: new Date().toISOString(), node: process.version, command: `npx tsx bench/startup.ts ${args.join(' ')}`.trim(), messages, per, runs, rows: out }, null, 2)}\n`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
