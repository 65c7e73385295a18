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
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
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

const TICKS = 100; // USER_HZ: /proc's CPU times are in 1/100 s

/** CPU seconds (user + system) the process has used, from /proc. */
function cpuOf(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS;
  } catch {
    return 0;
  }
}

/** The PostgreSQL server's processes on this machine (its backends included). */
function postgresPids(): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number)
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/comm`, 'utf8').trim().startsWith('postgres');
      } catch {
        return false;
      }
    });
}

/** CPU used meanwhile by the servers, the database and this process (clients and balancer). */
function cpuMeter(serverPids: readonly number[]): () => { servers: number; database: number; clients: number } {
  const pg0 = new Map(postgresPids().map((p) => [p, cpuOf(p)]));
  const s0 = serverPids.map(cpuOf);
  const c0 = process.cpuUsage();
  return () => {
    let database = 0;
    for (const p of postgresPids()) database += cpuOf(p) - (pg0.get(p) ?? 0);
    const c = process.cpuUsage(c0);
    return { servers: serverPids.reduce((sum, p, i) => sum + cpuOf(p) - s0[i]!, 0), database, clients: (c.user + c.system) / 1e6 };
  };
}

type Cpu = { servers: number; database: number; clients: number };

/** Turns a second through `url` over SECONDS, SESSIONS clients at once; CPU ms a turn by part. */
async function drive(url: string, label: string, serverPids: readonly number[]): Promise<{ turnsPerSecond: number; turns: number; cpuMsPerTurn: Cpu }> {
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
  const meter = cpuMeter(serverPids);
  await new Promise((r) => setTimeout(r, SECONDS * 1000));
  measuring = false;
  const elapsed = (performance.now() - started) / 1000;
  const counted = turns;
  const cpu = meter();
  stop = true;
  await Promise.all(clients);
  const perTurn = (seconds: number) => Math.round((seconds * 1000 * 100) / counted) / 100;
  return { turnsPerSecond: counted / elapsed, turns: counted, cpuMsPerTurn: { servers: perTurn(cpu.servers), database: perTurn(cpu.database), clients: perTurn(cpu.clients) } };
}

/** One `mnemo` on LMDB in `dir`. */
async function lmdbServer(dir: string): Promise<{ url: string; pid: number; kill(): Promise<void> }> {
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
  return { url, pid: child.pid!, kill: async () => void (child.kill('SIGKILL'), await exited) };
}

const results: Record<string, { processes: number; storage: string; turnsPerSecond: number; turns: number; cpuMsPerTurn: Cpu }> = {};
await withTempDir('multi-process', async (dir) => {
  const lmdb = await lmdbServer(dir);
  try {
    results['lmdb-1'] = { processes: 1, storage: 'lmdb', ...(await drive(lmdb.url, 'lmdb', [lmdb.pid])) };
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
        results[`postgres-${n}`] = { processes: n, storage: 'postgres', ...(await drive(lb.url, `pg${n}`, servers.map((s) => s.child.pid!))) };
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
console.log('| case | turns/s | ÷ 1 process on PostgreSQL | CPU ms a turn: servers | database | clients and balancer |');
console.log('|---|---:|---:|---:|---:|---:|');
for (const [name, r] of Object.entries(results)) {
  const c = r.cpuMsPerTurn;
  console.log(`| ${name} | ${r.turnsPerSecond.toFixed(1)} | ${(r.turnsPerSecond / one).toFixed(2)}x | ${c.servers} | ${c.database} | ${c.clients} |`);
}
const out = fileURLToPath(new URL('./results/', import.meta.url));
mkdirSync(out, { recursive: true });
writeFileSync(
  join(out, 'multi-process.json'),
  `${JSON.stringify({ date: new Date().toISOString(), node: process.version, seconds: SECONDS, sessions: SESSIONS, results }, null, 2)}\n`,
);
