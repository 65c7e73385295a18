/**
 * bench/commit-cost.ts: what one durable commit costs (performance issue, items 1 and 3).
 *
 *   npx tsx bench/commit-cost.ts            40 rounds of 25 appends per contender
 *   npx tsx bench/commit-cost.ts --quick    10 rounds
 *
 * 1. One conversation, durable appends awaited one at a time, side by side in ONE run: the
 *    contenders take turns in blocks of 25 appends (round after round, in rotating order), so
 *    they see the same machine load, and each one's total time over all rounds gives its rate:
 *    - fdatasync: a 512-byte pwrite + fdatasync of an already written block (the limit);
 *    - SQLite WAL FULL: better-sqlite3, journal_mode=WAL, synchronous=FULL, one INSERT each;
 *    - raw lmdb-js: `await put` then `await flushed` (lmdb-js's defaults: overlappingSync);
 *    - raw lmdb-js, overlappingSync off: `await put` (it resolves after the sync);
 *    - createLmdbStore: Mnemo's standalone LMDB store, `append`;
 *    - Mnemo runtime: `startRuntime().memory.append` (the per-conversation actor).
 *    Printed as commits/s and as ratios to SQLite and to the fdatasync limit.
 * 2. fsyncs per offline chat turn (`runtime.recall.chat`, the fallback LLM): this script runs
 *    itself under `strace -f` (when strace is installed) and counts fdatasync/fsync calls, and
 *    the O_DSYNC meta-page writes, between markers around each turn: a first turn of a session
 *    (title made) and later turns. Without strace it says so and counts nothing.
 * 3. With `--syscalls`: what one commit of each contender does, from `strace -f -T` of that
 *    contender alone (a child per contender, 50 commits between markers): per commit, the
 *    pwrite/write calls and bytes to its files, the writes through an O_DSYNC descriptor (each a
 *    device flush), the fdatasync/fsync calls, and the mean time strace saw in each.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { fdatasyncSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { open } from 'lmdb';
import { createLmdbStore } from '../src/memory/index.ts';
import { startRuntime } from '../src/runtime.ts';
import { makeTempDir } from './suite/temp-dir.ts';

const quick = process.argv.includes('--quick');
const turnsChild = process.argv.includes('--turns-child');
const syscallsMode = process.argv.includes('--syscalls');
const syscallsChildAt = process.argv.indexOf('--syscalls-child');
const ROUNDS = quick ? 10 : 40;
const BLOCK = 25;

const scratch = makeTempDir('commit-cost');
let dirs = 0;
const freshDir = () => mkdtempSync(join(scratch, `${dirs++}-`));
const message = { role: 'user' as const, content: `a chat message of about two hundred bytes: ${'the agent remembers the deadline '.repeat(5)}` };

interface Contender {
  label: string;
  /** Appends `n` messages, one at a time, each awaited until durable. */
  block(n: number): Promise<void>;
  close(): Promise<void>;
}

async function contenders(): Promise<Contender[]> {
  const out: Contender[] = [];

  const fd = openSync(join(freshDir(), 'f'), 'w');
  const buf = Buffer.alloc(512, 1);
  for (let i = 0; i < 64; i++) writeSync(fd, buf, 0, 512, i * 512);
  fdatasyncSync(fd);
  let at = 0;
  out.push({
    label: 'fdatasync (limit)',
    async block(n) {
      for (let i = 0; i < n; i++) {
        writeSync(fd, buf, 0, 512, (at++ % 64) * 512);
        fdatasyncSync(fd);
        await Promise.resolve();
      }
    },
    close: async () => undefined,
  });

  const sqlite = new Database(join(freshDir(), 'chat.db'));
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = FULL');
  sqlite.exec('CREATE TABLE messages (c TEXT NOT NULL, id INTEGER NOT NULL, json TEXT NOT NULL, PRIMARY KEY (c, id)) WITHOUT ROWID');
  const insert = sqlite.prepare(
    'INSERT INTO messages VALUES (?, (SELECT COALESCE(MAX(id), 0) + 1 FROM messages WHERE c = ?), ?)',
  );
  out.push({
    label: 'SQLite WAL FULL',
    async block(n) {
      for (let i = 0; i < n; i++) {
        insert.run('c', 'c', JSON.stringify({ ts: new Date().toISOString(), meta: {}, message }));
        await Promise.resolve();
      }
    },
    close: async () => void sqlite.close(),
  });

  for (const overlappingSync of [true, false]) {
    const root = open({ path: freshDir(), maxDbs: 4, overlappingSync });
    const db = root.openDB<unknown, [string, number]>('messages', { encoding: 'json' });
    let id = 0;
    out.push({
      label: overlappingSync ? 'raw lmdb-js' : 'raw lmdb-js, overlappingSync off',
      async block(n) {
        for (let i = 0; i < n; i++) {
          await db.put(['c', ++id], { ts: new Date().toISOString(), meta: {}, message });
          await db.flushed;
        }
      },
      close: () => root.close(),
    });
  }

  const store = createLmdbStore({ path: freshDir() });
  out.push({
    label: 'createLmdbStore',
    async block(n) {
      for (let i = 0; i < n; i++) await store.append('c', [{ message }]);
    },
    close: () => store.close(),
  });

  const runtime = await startRuntime({ name: 'commit-cost', dataDir: freshDir() });
  out.push({
    label: 'Mnemo runtime',
    async block(n) {
      for (let i = 0; i < n; i++) await runtime.memory.append('c', [{ message }]);
    },
    close: () => runtime.stop(),
  });
  return out;
}

async function appends(): Promise<void> {
  const all = await contenders();
  for (const c of all) await c.block(5); // warm up: files, actors, JIT
  const ms = new Map<string, number>(all.map((c) => [c.label, 0]));
  for (let r = 0; r < ROUNDS; r++) {
    for (let k = 0; k < all.length; k++) {
      const c = all[(k + r) % all.length]!;
      const t = performance.now();
      await c.block(BLOCK);
      ms.set(c.label, ms.get(c.label)! + performance.now() - t);
    }
  }
  for (const c of all) await c.close();
  const rate = (label: string) => (ROUNDS * BLOCK * 1000) / ms.get(label)!;
  const sqlite = rate('SQLite WAL FULL');
  const limit = rate('fdatasync (limit)');
  console.log(`\none conversation, durable appends awaited one at a time (${ROUNDS} rounds x ${BLOCK}, load ${loadavg()[0]!.toFixed(1)})`);
  console.log('contender'.padEnd(34), 'commits/s'.padStart(10), 'vs SQLite'.padStart(10), 'vs fdatasync'.padStart(13));
  for (const c of all) {
    const v = rate(c.label);
    console.log(c.label.padEnd(34), v.toFixed(0).padStart(10), `${(v / sqlite).toFixed(2)}x`.padStart(10), `${(v / limit).toFixed(2)}x`.padStart(13));
  }
}

/** In the child under strace: chat turns between markers strace sees as writes to fd 2. */
async function turnsInChild(): Promise<void> {
  const runtime = await startRuntime({ name: 'commit-cost-turns', dataDir: freshDir() });
  await runtime.recall.chat({ userId: 'warm', sessionId: 'w', message: 'warm up' });
  for (let k = 0; k < 4; k++) {
    writeSync(2, `MNEMO-TURN-BEGIN ${k === 0 ? 'first' : 'later'}\n`);
    await runtime.recall.chat({ userId: 'u', sessionId: 's', message: `message ${k}` });
    writeSync(2, 'MNEMO-TURN-END\n');
  }
  await runtime.stop();
}

function fsyncsPerTurn(): void {
  const hasStrace = spawnSync('strace', ['-V']).status === 0;
  if (!hasStrace) {
    console.log('\nfsyncs per chat turn: not measured (strace is not installed)');
    return;
  }
  const trace = join(scratch, 'turns.strace');
  execFileSync('strace', ['-f', '-e', 'trace=write,pwrite64,fdatasync,fsync', '-o', trace, process.execPath, '--import', 'tsx', process.argv[1]!, '--turns-child'], { stdio: 'ignore' });
  const turns: Array<{ kind: string; syncs: number; dsyncWrites: number }> = [];
  let current: { kind: string; syncs: number; dsyncWrites: number } | undefined;
  for (const line of readFileSync(trace, 'utf8').split('\n')) {
    const begin = /MNEMO-TURN-BEGIN (\w+)/.exec(line);
    if (begin) current = { kind: begin[1]!, syncs: 0, dsyncWrites: 0 };
    else if (line.includes('MNEMO-TURN-END') && current) {
      turns.push(current);
      current = undefined;
    } else if (current && /\b(fdatasync|fsync)\(/.test(line)) current.syncs++;
    // lmdb-js's "flushed" meta page (overlappingSync): 128 bytes at 2088 through the O_DSYNC
    // descriptor, a second device flush per commit (the commit's own meta write, at 40 or
    // 4136, is not synced by itself).
    else if (current && /pwrite64\(\d+, .*, 128, 2088\)/.test(line)) current.dsyncWrites++;
  }
  console.log('\nfsyncs per offline chat turn (strace -f: fdatasync+fsync calls; O_DSYNC meta-page writes beside)');
  for (const t of turns) console.log(`  ${t.kind.padEnd(6)} turn: ${t.syncs} fdatasync, ${t.dsyncWrites} O_DSYNC meta writes   (target: <= 2 fdatasync)`);
}

const SYSCALL_COMMITS = 50;

/** In the child under strace: contender `index` alone, its commits between markers. */
async function syscallsInChild(index: number): Promise<void> {
  const all = await contenders();
  const c = all[index]!;
  await c.block(5);
  writeSync(2, `MNEMO-BEGIN ${c.label}\n`);
  await c.block(SYSCALL_COMMITS);
  writeSync(2, 'MNEMO-END\n');
  for (const x of all) await x.close();
}

interface SyscallTally {
  calls: number;
  bytes: number;
  seconds: number;
}

function syscallsPerCommit(): void {
  if (spawnSync('strace', ['-V']).status !== 0) {
    console.log('\nsyscalls per commit: not measured (strace is not installed)');
    return;
  }
  const labels = ['fdatasync (limit)', 'SQLite WAL FULL', 'raw lmdb-js', 'raw lmdb-js, overlappingSync off', 'createLmdbStore', 'Mnemo runtime'];
  console.log(`\nper durable commit (strace -f -T, ${SYSCALL_COMMITS} commits of each contender alone; mean syscall time in µs)`);
  console.log('contender'.padEnd(34), 'pwrite+write'.padStart(13), 'bytes'.padStart(7), 'fdatasync'.padStart(10), 'O_DSYNC pwrite'.padStart(15), 'µs fdatasync'.padStart(13), 'µs O_DSYNC'.padStart(11));
  for (let i = 0; i < labels.length; i++) {
    const trace = join(scratch, `syscalls-${i}.strace`);
    execFileSync('strace', ['-f', '-T', '-e', 'trace=openat,write,pwrite64,pwritev,fdatasync,fsync', '-o', trace, process.execPath, '--import', 'tsx', process.argv[1]!, '--syscalls-child', String(i)], { stdio: 'ignore' });
    const dsyncFds = new Set<string>();
    const fileFds = new Set<string>();
    const tally = { plain: { calls: 0, bytes: 0, seconds: 0 }, dsync: { calls: 0, bytes: 0, seconds: 0 }, sync: { calls: 0, bytes: 0, seconds: 0 } };
    const pending = new Map<string, { kind: keyof typeof tally; bytes: number }>();
    let inside = false;
    const add = (t: SyscallTally, bytes: number, seconds: number) => {
      t.calls++;
      t.bytes += bytes;
      t.seconds += seconds;
    };
    for (const line of readFileSync(trace, 'utf8').split('\n')) {
      const opened = /openat\(AT_FDCWD, "([^"]+)", ([A-Z_|]+).*\) = (\d+)/.exec(line);
      if (opened && opened[1]!.includes('commit-cost')) {
        fileFds.add(opened[3]!);
        if (opened[2]!.includes('O_DSYNC')) dsyncFds.add(opened[3]!);
        continue;
      }
      if (line.includes('MNEMO-BEGIN')) inside = true;
      else if (line.includes('MNEMO-END')) inside = false;
      if (!inside) continue;
      const pid = /^(\d+)/.exec(line)?.[1] ?? '';
      const secs = Number(/<([\d.]+)>$/.exec(line)?.[1] ?? 0);
      const call = /^\d+\s+(write|pwrite64|pwritev|fdatasync|fsync)\((\d+)/.exec(line);
      if (call) {
        const [, name, fd] = call;
        if (!fileFds.has(fd!)) continue;
        const kind: keyof typeof tally = name === 'fdatasync' || name === 'fsync' ? 'sync' : dsyncFds.has(fd!) ? 'dsync' : 'plain';
        const bytes = Number(/\) = (\d+)/.exec(line)?.[1] ?? 0);
        if (line.includes('<unfinished ...>')) pending.set(pid, { kind, bytes: 0 });
        else add(tally[kind], kind === 'sync' ? 0 : bytes, secs);
        continue;
      }
      const resumed = /<\.\.\. (write|pwrite64|pwritev|fdatasync|fsync) resumed>.*= (\d+)/.exec(line);
      const was = pending.get(pid);
      if (resumed && was) {
        pending.delete(pid);
        add(tally[was.kind], was.kind === 'sync' ? 0 : Number(resumed[2]), secs);
      }
    }
    const per = (n: number) => (n / SYSCALL_COMMITS).toFixed(2);
    const us = (t: SyscallTally) => (t.calls === 0 ? '-' : ((t.seconds / t.calls) * 1e6).toFixed(0));
    console.log(labels[i]!.padEnd(34), per(tally.plain.calls).padStart(13), (tally.plain.bytes / SYSCALL_COMMITS).toFixed(0).padStart(7), per(tally.sync.calls).padStart(10), per(tally.dsync.calls).padStart(15), us(tally.sync).padStart(13), us(tally.dsync).padStart(11));
  }
}

try {
  if (syscallsChildAt > 0) await syscallsInChild(Number(process.argv[syscallsChildAt + 1]));
  else if (syscallsMode) syscallsPerCommit();
  else if (turnsChild) await turnsInChild();
  else {
    await appends();
    fsyncsPerTurn();
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
