/**
 * bench/multi-process.ts: chat turns a second through 1, 2 and 4 `mnemo serve --postgres`
 * processes on one PostgreSQL database (a round-robin balancer in front, no session affinity),
 * beside one `mnemo` process on LMDB, in one run. The model is the offline fallback, so a turn
 * is Mnemo's own work: the session lock, the turn's two commits, the daily view and the index,
 * the listing. Clients: `--sessions` sessions at once, each sending its next turn when the
 * last is answered, for `--seconds` per case, after a warm-up. The database runs on this
 * machine too, so at 2 cores the processes and PostgreSQL share them.
 *
 *   eval "$(scripts/postgres.sh start)"; npx tsx bench/multi-process.ts [--seconds 15] [--sessions 32]
 *
 * Writes bench/results/multi-process.json.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { http } from '../test/support/http.ts';
import { roundRobin, startMnemo, type RunningMnemo } from '../test/support/mnemo-fleet.ts';
import { dropSchema, freshSchema } from '../test/support/postgres-server.ts';
import { withTempDir } from './suite/temp-dir.ts';

const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? fallback : Number(process.argv[i + 1]);
};
const SECONDS = arg('seconds', 15);
const SESSIONS = arg('sessions', 32);
const WARMUP_MS = 2_000;
const databaseUrl = process.env['MNEMO_PG_URL'];
if (databaseUrl === undefined || databaseUrl === '') {
  console.error('bench/multi-process.ts: set MNEMO_PG_URL (eval "$(scripts/postgres.sh start)")');
  process.exit(2);
}
const SERVER_ARGS = ['--rate-limit', '0', '--max-turns', '1000', '--language', 'en', '--summary-tokens', 'off'];

/** Turns a second through `url` over SECONDS, SESSIONS clients at once. */
async function drive(url: string, label: string): Promise<{ turnsPerSecond: number; turns: number }> {
  let measuring = false;
  let turns = 0;
  let stop = false;
  const client = async (c: number): Promise<void> => {
    for (let i = 0; !stop; i++) {
      const res = await http(url, 'POST', '/api/chat', { body: { user_id: `u${c}`, session_id: `${label}-s${c}`, message: `turn ${i} of client ${c} about the river` } });
      if (res.status !== 200) throw new Error(`${label}: ${res.status} ${res.text}`);
      if (measuring) turns++;
    }
  };
  const clients = Array.from({ length: SESSIONS }, (_, c) => client(c));
  await new Promise((r) => setTimeout(r, WARMUP_MS));
  measuring = true;
  const started = performance.now();
  await new Promise((r) => setTimeout(r, SECONDS * 1000));
  measuring = false;
  const elapsed = (performance.now() - started) / 1000;
  const counted = turns;
  stop = true;
  await Promise.all(clients);
  return { turnsPerSecond: counted / elapsed, turns: counted };
}

/** One `mnemo` on LMDB in `dir`. */
async function lmdbServer(dir: string): Promise<{ url: string; kill(): Promise<void> }> {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const tsx = pathToFileURL(join(root, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href;
  const child = spawn(process.execPath, ['--import', tsx, join(root, 'src', 'cli', 'main.ts'), '--port', '0', '--data-dir', join(dir, 'data'), ...SERVER_ARGS], {
    cwd: dir,
    env: { ...process.env, MNEMO_LOG_LEVEL: 'info', OPENAI_API_KEY: '' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise((r) => child.on('exit', r));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      if (out.length > 100_000) return; // the request log, dropped
      out += d.toString();
      const m = /"url":"(http:\/\/[^"]+)"/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.on('exit', (code) => reject(new Error(`mnemo (lmdb) exited ${code}`)));
  });
  return { url, kill: async () => void (child.kill('SIGKILL'), await exited) };
}

const results: Record<string, { processes: number; storage: string; turnsPerSecond: number; turns: number }> = {};
await withTempDir('multi-process', async (dir) => {
  const lmdb = await lmdbServer(dir);
  try {
    results['lmdb-1'] = { processes: 1, storage: 'lmdb', ...(await drive(lmdb.url, 'lmdb')) };
  } finally {
    await lmdb.kill();
  }
  for (const n of [1, 2, 4]) {
    const schema = freshSchema('bench_multi');
    const servers: RunningMnemo[] = [];
    try {
      servers.push(...(await Promise.all(Array.from({ length: n }, () => startMnemo({ databaseUrl, schema, cwd: dir, args: SERVER_ARGS })))));
      const lb = await roundRobin(() => servers.map((s) => s.url));
      try {
        results[`postgres-${n}`] = { processes: n, storage: 'postgres', ...(await drive(lb.url, `pg${n}`)) };
      } finally {
        await lb.close();
      }
    } finally {
      await Promise.all(servers.map((s) => s.kill()));
      await dropSchema(databaseUrl, schema);
    }
  }
});

const one = results['postgres-1']!.turnsPerSecond;
console.log(`chat turns/s, offline model, ${SESSIONS} sessions at once, ${SECONDS} s per case (2 cores, PostgreSQL on this machine)`);
console.log('| case | turns/s | ÷ 1 process on PostgreSQL |');
console.log('|---|---:|---:|');
for (const [name, r] of Object.entries(results)) console.log(`| ${name} | ${r.turnsPerSecond.toFixed(1)} | ${(r.turnsPerSecond / one).toFixed(2)}x |`);
const out = fileURLToPath(new URL('./results/', import.meta.url));
mkdirSync(out, { recursive: true });
writeFileSync(
  join(out, 'multi-process.json'),
  `${JSON.stringify({ date: new Date().toISOString(), node: process.version, seconds: SECONDS, sessions: SESSIONS, results }, null, 2)}\n`,
);
