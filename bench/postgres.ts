/**
 * The PostgreSQL store next to the LMDB store on one append workload, with 1 and 4 processes.
 *
 *   npx tsx bench/postgres.ts [--quick]      (writes bench/results/postgres.json)
 *
 * PostgreSQL: `MNEMO_PG_URL`, else the throwaway server of `scripts/postgres.sh start`
 * (fsync and synchronous_commit on). A fresh schema per run, dropped at the end.
 *
 * Workload: P processes (1 or 4), each with W concurrent writers; each writer owns one
 * conversation and appends N single-message batches one after another (a ~200-byte user
 * message, like a chat turn). Same durability on both sides: an append counts once it
 * resolved, i.e. committed and flushed (LMDB: the write promise, then `flushed`; PostgreSQL:
 * the commit acknowledged with synchronous_commit on). Reported: appends/s over the wall time
 * from the common start to the last writer's end, and p50/p99 latency of one append.
 * LMDB with 4 processes shares one environment (LMDB serializes writers across processes).
 *
 * A PostgreSQL-only row: the same 4 processes all appending to ONE conversation, the case
 * only the PostgreSQL store numbers correctly across processes.
 *
 * The machine is shared with other work: the cells run in interleaved rounds (3, or 1 with
 * --quick) and each cell's best round (highest throughput) counts; the load average is saved
 * with the figures.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { Samples } from './suite/stats.ts';
import { makeTempDir } from './suite/temp-dir.ts';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import pg from 'pg';
import { createLmdbStore, type ClosableLog } from '../src/memory/index.ts';
import { createPostgresStore } from '../src/memory/postgres/index.ts';

type Backend = 'postgres' | 'lmdb';

interface ChildJob {
  backend: Backend;
  /** PostgreSQL URL or LMDB directory. */
  target: string;
  schema: string;
  label: string;
  writers: number;
  appends: number;
  /** All writers of all processes append to this one conversation, when set. */
  sharedConversation?: string;
}

interface ChildResult {
  startMs: number;
  endMs: number;
  latenciesMs: number[];
}

interface Cell {
  backend: Backend;
  processes: number;
  writersPerProcess: number;
  appendsPerWriter: number;
  shared: boolean;
  appendsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  rounds: number;
}

const self = fileURLToPath(import.meta.url);
const MESSAGE = 'x'.repeat(180);

// ---------------------------------------------------------------------------- child process
async function child(job: ChildJob): Promise<void> {
  const store: ClosableLog =
    job.backend === 'postgres'
      ? createPostgresStore({ connectionString: job.target, schema: job.schema })
      : createLmdbStore({ path: job.target });
  if (job.backend === 'postgres') await (store as ReturnType<typeof createPostgresStore>).migrate();
  // Warm up: connections, prepared statements, the environment's first pages.
  await Promise.all(Array.from({ length: job.writers }, (_, w) => store.add(`warm-${job.label}-${w}`, [{ role: 'user', content: 'warm' }])));
  process.stdout.write('ready\n');
  await new Promise<void>((resolve) => {
    const lines = createInterface({ input: process.stdin });
    lines.once('line', () => {
      lines.close();
      process.stdin.destroy();
      resolve();
    });
  });
  const latencies: number[] = [];
  const startMs = performance.timeOrigin + performance.now();
  await Promise.all(
    Array.from({ length: job.writers }, async (_, w) => {
      const conversation = job.sharedConversation ?? `c-${job.label}-${w}`;
      for (let i = 0; i < job.appends; i++) {
        const t0 = performance.now();
        await store.add(conversation, [{ role: 'user', content: `${i} ${MESSAGE}` }]);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const endMs = performance.timeOrigin + performance.now();
  await store.close();
  const result: ChildResult = { startMs, endMs, latenciesMs: latencies };
  process.stdout.write(`result ${JSON.stringify(result)}\n`);
}

// ---------------------------------------------------------------------------- parent
function spawnChild(job: ChildJob) {
  const proc = spawn(process.execPath, ['--import', 'tsx', self], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, BENCH_PG_CHILD: JSON.stringify(job) },
  });
  let out = '';
  const ready = new Promise<void>((resolve, reject) => {
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('ready\n')) resolve();
    });
    proc.on('exit', (code) => reject(new Error(`bench child exited ${code} before ready`)));
  });
  const result = new Promise<ChildResult>((resolve, reject) => {
    proc.on('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('result '));
      if (code !== 0 || line === undefined) reject(new Error(`bench child exited ${code}`));
      else resolve(JSON.parse(line.slice('result '.length)) as ChildResult);
    });
  });
  return { proc, ready, result };
}

async function round(backend: Backend, target: string, schema: string, processes: number, writers: number, appends: number, shared: boolean) {
  const children = Array.from({ length: processes }, (_, p) =>
    spawnChild({ backend, target, schema, label: `p${p}`, writers, appends, ...(shared ? { sharedConversation: 'shared' } : {}) }),
  );
  await Promise.all(children.map((c) => c.ready));
  for (const c of children) c.proc.stdin!.write('go\n');
  const results = await Promise.all(children.map((c) => c.result));
  const start = Math.min(...results.map((r) => r.startMs));
  const end = Math.max(...results.map((r) => r.endMs));
  const latencies = new Samples();
  for (const r of results) for (const ms of r.latenciesMs) latencies.add(ms);
  const { count, p50Ms, p99Ms } = latencies.summary();
  return { appendsPerSecond: count / ((end - start) / 1000), p50Ms, p99Ms };
}

function postgresUrl(): string {
  const fromEnv = process.env['MNEMO_PG_URL'];
  if (fromEnv) return fromEnv;
  const script = join(dirname(self), '../scripts/postgres.sh');
  const out = execFileSync(script, ['start'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const match = /MNEMO_PG_URL='([^']+)'/.exec(out);
  if (!match?.[1]) throw new Error(`scripts/postgres.sh start printed no URL: ${out}`);
  return match[1];
}

async function main(quick: boolean): Promise<void> {
  const writers = quick ? 4 : 8;
  const appends = quick ? 40 : 250;
  const rounds = quick ? 1 : 3;
  const url = postgresUrl();
  const cells: Cell[] = [];
  const plan: Array<{ backend: Backend; processes: number; shared: boolean }> = [
    { backend: 'lmdb', processes: 1, shared: false },
    { backend: 'postgres', processes: 1, shared: false },
    { backend: 'lmdb', processes: 4, shared: false },
    { backend: 'postgres', processes: 4, shared: false },
    { backend: 'postgres', processes: 4, shared: true },
  ];
  // Rounds interleave the cells, so a burst of load elsewhere on the machine hits all of them.
  const best = new Map<number, Awaited<ReturnType<typeof round>>>();
  for (let r = 0; r < rounds; r++) {
    for (const [i, { backend, processes, shared }] of plan.entries()) {
      const schema = `bench_${process.pid}_${r}_${i}`;
      const dir = backend === 'lmdb' ? makeTempDir('pg-lmdb') : '';
      try {
        const result = await round(backend, backend === 'postgres' ? url : dir, schema, processes, writers, appends, shared);
        const previous = best.get(i);
        if (previous === undefined || result.appendsPerSecond > previous.appendsPerSecond) best.set(i, result);
        process.stderr.write(
          `round ${r + 1}/${rounds} ${backend.padEnd(8)} ${processes} proc${shared ? ' (one shared conversation)' : ''}: ` +
            `${result.appendsPerSecond.toFixed(0)} appends/s, p50 ${result.p50Ms.toFixed(2)} ms, p99 ${result.p99Ms.toFixed(2)} ms\n`,
        );
      } finally {
        if (backend === 'lmdb') rmSync(dir, { recursive: true, force: true });
        else await dropSchema(url, schema);
      }
    }
  }
  for (const [i, { backend, processes, shared }] of plan.entries()) {
    cells.push({ backend, processes, writersPerProcess: writers, appendsPerWriter: appends, shared, rounds, ...best.get(i)! });
  }

  const find = (b: Backend, p: number) => cells.find((c) => c.backend === b && c.processes === p && !c.shared)!;
  const ratios = [1, 4].map((p) => ({
    processes: p,
    throughputPostgresOverLmdb: find('postgres', p).appendsPerSecond / find('lmdb', p).appendsPerSecond,
    p50PostgresOverLmdb: find('postgres', p).p50Ms / find('lmdb', p).p50Ms,
    p99PostgresOverLmdb: find('postgres', p).p99Ms / find('lmdb', p).p99Ms,
  }));
  const table = [
    '| backend | processes | writers/process | appends/s | p50 ms | p99 ms |',
    '| --- | --- | --- | --- | --- | --- |',
    ...cells.map(
      (c) =>
        `| ${c.backend}${c.shared ? ' (one shared conversation)' : ''} | ${c.processes} | ${c.writersPerProcess} | ` +
        `${c.appendsPerSecond.toFixed(0)} | ${c.p50Ms.toFixed(2)} | ${c.p99Ms.toFixed(2)} |`,
    ),
    '',
    ...ratios.map(
      (r) =>
        `${r.processes} process(es): PostgreSQL/LMDB throughput ${r.throughputPostgresOverLmdb.toFixed(2)}x, ` +
        `p50 ${r.p50PostgresOverLmdb.toFixed(2)}x, p99 ${r.p99PostgresOverLmdb.toFixed(2)}x`,
    ),
  ].join('\n');
  process.stdout.write(`${table}\n`);

  const out = join(dirname(self), 'results/postgres.json');
  mkdirSync(dirname(out), { recursive: true });
  const server = await serverSettings(url);
  writeFileSync(
    out,
    `${JSON.stringify({ mode: quick ? 'quick' : 'full', date: new Date().toISOString(), cpus: cpus().length, loadavg: loadavg(), server, cells, ratios }, null, 2)}\n`,
  );
  process.stderr.write(`wrote ${out}\n`);
}

async function dropSchema(url: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
  await client.end();
}

async function serverSettings(url: string): Promise<Record<string, string>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const { rows } = await client.query<{ name: string; setting: string }>(
    `SELECT name, setting FROM pg_settings WHERE name IN ('server_version', 'fsync', 'synchronous_commit', 'wal_sync_method', 'commit_delay')`,
  );
  await client.end();
  return Object.fromEntries(rows.map((r) => [r.name, r.setting]));
}

const job = process.env['BENCH_PG_CHILD'];
if (job !== undefined) await child(JSON.parse(job) as ChildJob);
else await main(process.argv.includes('--quick'));
