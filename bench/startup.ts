/**
 * `npx tsx bench/startup.ts [--messages 100000] [--per 100] [--runs 9] [--baseline FILE]`: how
 * long a fresh Node process takes from nothing to its first read of data already on disk,
 * Mnemo as an installed user loads it (the compiled package, dist/esm) against raw lmdb-js
 * opening the same files, side by side in one run (bench/suite/startup-run.ts says exactly what
 * each child does; the suite runs the same as its `startup` workload).
 *   (a) runtime: `import('mnemo')`, `startRuntime({ dataDir })`, `runtime.memory.get(c)`;
 *   (b) store: `import('mnemo')`, `createLmdbStore({ path })`, `store.get(c)`;
 *   (c) raw lmdb-js: `import('lmdb')`, `open(dir)`, a range read of the same rows.
 * Printed: medians and ratios to raw lmdb-js (no absolute targets: the machine is shared).
 * Written to bench/results/startup.json.
 *
 *   --baseline FILE   also run (a) with another build's entry (say, an earlier commit's
 *                     dist/esm/src/index.js), in the same alternation: before and after, one run.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runStartup, type StartupWay } from './suite/startup-run.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const arg = (name: string, fallback: number): number => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? Number(args[i + 1]) : fallback;
};
const messages = arg('messages', 100_000);
const per = arg('per', 100);
const runs = arg('runs', 9);
const baselineAt = args.indexOf('--baseline');
const baseline = baselineAt >= 0 ? args[baselineAt + 1] : undefined;

const LABELS: Record<StartupWay, string> = {
  baseline: 'Mnemo runtime, --baseline build',
  'mnemo-lmdb': 'Mnemo runtime (startRuntime)',
  'mnemo-store': 'Mnemo store (createLmdbStore)',
  'raw-lmdb': 'raw lmdb-js',
};

const rows = runStartup({
  messages,
  per,
  runs,
  ways: ['baseline', 'mnemo-lmdb', 'mnemo-store', 'raw-lmdb'],
  ...(baseline === undefined ? {} : { baseline }),
  onRound: (done) => process.stderr.write(`\rrun ${done}/${runs}`),
});
process.stderr.write('\n');
const raw = rows.find((r) => r.way === 'raw-lmdb')!;
const ratio = (a: number, b: number) => (b > 0 ? a / b : Number.NaN);
const out = rows.map((r) => ({
  ...r,
  label: LABELS[r.way],
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
