/**
 * `npx tsx bench/import.ts [--runs N]`: a cold `import('mnemo')` in a fresh Node process, from
 * the compiled package (dist/esm, what an installed Mnemo loads) and from the TypeScript sources
 * through tsx (what loading Mnemo took before it shipped compiled JavaScript), side by side in
 * one run. Runs alternate between the two so machine load hits both alike; the table shows the
 * median and the spread of N runs (default 9) of:
 *   - import: `await import(entry)` inside the process (for tsx, after its loader is registered);
 *   - process: spawn to exit of `node [--import tsx] -e "await import(entry)"`, wall clock.
 * tsx runs twice: with its transform cache off (TSX_DISABLE_CACHE=1: every file transformed, as
 * on the first start after an install) and with its cache warm (a later start).
 * Builds dist/ first when it is missing (`npm run build`).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const runsFlag = process.argv.indexOf('--runs');
const runs = runsFlag >= 0 ? Number(process.argv[runsFlag + 1]) : 9;
const dist = join(root, 'dist', 'esm', 'src', 'index.js');
if (!existsSync(dist)) execFileSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });

interface Way {
  name: string;
  args: string[];
  entry: string;
  env?: Record<string, string>;
}

const ways: Way[] = [
  { name: 'dist (compiled JavaScript)', args: [], entry: pathToFileURL(dist).href },
  {
    name: 'sources through tsx, no transform cache',
    args: ['--import', 'tsx'],
    entry: pathToFileURL(join(root, 'src', 'index.ts')).href,
    env: { TSX_DISABLE_CACHE: '1' },
  },
  { name: 'sources through tsx, warm cache', args: ['--import', 'tsx'], entry: pathToFileURL(join(root, 'src', 'index.ts')).href },
];

const samples = new Map<string, { imp: number[]; proc: number[] }>(ways.map((w) => [w.name, { imp: [], proc: [] }]));
for (let i = 0; i < runs; i++) {
  for (const way of ways) {
    const script = `const t = performance.now(); await import(${JSON.stringify(way.entry)}); console.log(performance.now() - t);`;
    const start = process.hrtime.bigint();
    const r = spawnSync(process.execPath, [...way.args, '--input-type=module', '-e', script], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, ...way.env },
    });
    const proc = Number(process.hrtime.bigint() - start) / 1e6;
    if (r.status !== 0) throw new Error(`${way.name}: ${r.stderr}`);
    const s = samples.get(way.name)!;
    s.imp.push(Number(r.stdout.trim()));
    s.proc.push(proc);
  }
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const range = (xs: number[]): string => `${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}`;
process.stdout.write(`cold import('mnemo'), Node ${process.version}, ${runs} runs each, median (min–max) ms\n\n`);
process.stdout.write('| loaded from | import | process |\n| --- | ---: | ---: |\n');
for (const way of ways) {
  const s = samples.get(way.name)!;
  process.stdout.write(`| ${way.name} | ${median(s.imp).toFixed(0)} (${range(s.imp)}) | ${median(s.proc).toFixed(0)} (${range(s.proc)}) |\n`);
}
