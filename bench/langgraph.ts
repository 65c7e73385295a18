/**
 * LangGraph checkpoint storage: MnemoSaver next to LangGraph's SqliteSaver on one long
 * conversation, in one run.
 *
 *   npx tsx bench/langgraph.ts [--quick]      (writes bench/results/langgraph.json)
 *
 * Workload: a real StateGraph over `MessagesAnnotation` (test/programs/langgraph-echo-graph.ts:
 * one deterministic "agent" node, a ~120-character question and a ~480-character answer per
 * turn), invoked TURNS times on one thread (1000; `--quick`: 100). Each turn LangGraph writes 3
 * checkpoints (input, after the question, after the answer) and 2 sets of pending writes.
 *
 * Savers, each in its own directory, driven in lockstep (turn i on each, then turn i+1), so a
 * shared, loaded machine weighs on all of them alike:
 * - MnemoSaver: a put resolves once committed and flushed (fsync), on LMDB's write thread.
 * - SqliteSaver as shipped: WAL with better-sqlite3's WAL default synchronous=NORMAL (checked
 *   and reported): a commit is not fsynced (it survives a process crash, not an OS crash).
 * - SqliteSaver with synchronous=FULL: fsync per commit, Mnemo's durability.
 * better-sqlite3 is synchronous: a SQLite put runs (and fsyncs) on the event loop, blocking it.
 *
 * Reported per saver:
 * - bytes on disk after the run: Mnemo's LMDB file (data.mdb) and the pages its databases use;
 *   SQLite's database file plus its WAL as the run left them, and the database file after a
 *   `wal_checkpoint(TRUNCATE)`;
 * - put latency (each `put` LangGraph made, call to resolve): p50, p99;
 * - per turn: `graph.invoke` latency (p50, p99) and event-loop busy time (ms of main-thread work
 *   the turn cost, from `performance.eventLoopUtilization`; Mnemo's fsync is off the loop);
 * - reading the thread's latest checkpoint (`getTuple`, which for Mnemo rebuilds the message
 *   list from its delta chain): first read by a fresh saver (cold), then p50 of interleaved
 *   repeated reads (warm);
 * - Mnemo's breakdown: how the `messages` channel was stored (whole values vs deltas).
 * All savers must end with the same conversation (checked). The load average is saved.
 */
import { existsSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { Samples } from './suite/stats.ts';
import { makeTempDir } from './suite/temp-dir.ts';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BaseMessage } from '@langchain/core/messages';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { MnemoSaver } from '../src/langgraph/index.ts';
import { CHECKPOINT_DB_NAMES } from '../src/langgraph/storage/lmdb/lmdb-checkpoint-storage.ts';
import type { BlobRow } from '../src/langgraph/channel-blob.ts';
import { acquireEnvironment } from '../src/memory/lmdb/lmdb-environment.ts';
import { echoGraph, userTurn } from '../test/programs/langgraph-echo-graph.ts';

const quick = process.argv.includes('--quick');
const TURNS = quick ? 100 : 1000;
const WARM_READS = quick ? 20 : 50;
const THREAD = { configurable: { thread_id: 'bench-thread' } };

interface Latency {
  p50: number;
  p99: number;
  mean: number;
  n: number;
}

const round = (x: number) => Math.round(x * 1000) / 1000;
const size = (path: string) => (existsSync(path) ? statSync(path).size : 0);
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(2)} MiB`;

function latency(samples: number[]): Latency {
  const s = new Samples();
  for (const x of samples) s.add(x);
  const { p50Ms, p99Ms, meanMs, count } = s.summary();
  return { p50: round(p50Ms), p99: round(p99Ms), mean: round(meanMs), n: count };
}

interface Contender {
  readonly name: string;
  readonly dir: string;
  saver: BaseCheckpointSaver;
  readonly puts: number[];
  readonly turns: number[];
  readonly busy: number[];
  transcript: string[];
  /** Reopen on the same directory (a fresh process's view). */
  reopen(): Promise<void>;
  close(): Promise<void>;
  disk(): Promise<{ bytes: Record<string, number>; compared: number; compacted: number; details: Record<string, unknown> }>;
}

/** Time every `put` the graph makes. */
function timePuts(saver: BaseCheckpointSaver, samples: number[]): void {
  const put = saver.put.bind(saver);
  saver.put = async (...args: Parameters<BaseCheckpointSaver['put']>) => {
    const started = performance.now();
    try {
      return await put(...args);
    } finally {
      samples.push(performance.now() - started);
    }
  };
}

function mnemo(dir: string): Contender {
  const c: Contender = {
    name: 'MnemoSaver',
    dir,
    saver: new MnemoSaver({ path: dir }),
    puts: [],
    turns: [],
    busy: [],
    transcript: [],
    reopen: async () => {
      await (c.saver as MnemoSaver).close();
      c.saver = new MnemoSaver({ path: dir });
    },
    close: () => (c.saver as MnemoSaver).close(),
    disk: async () => {
      const lease = acquireEnvironment(dir);
      const pageSize = (lease.root.getStats() as { pageSize: number }).pageSize;
      const dbPages: Record<string, number> = {};
      let used = 0;
      for (const name of Object.values(CHECKPOINT_DB_NAMES)) {
        const s = lease.root.openDB(name, {}).getStats() as { treeBranchPageCount: number; treeLeafPageCount: number; overflowPages: number };
        dbPages[name] = s.treeBranchPageCount + s.treeLeafPageCount + s.overflowPages;
        used += dbPages[name] * pageSize;
      }
      const messages = { whole: 0, wholeBytes: 0, deltas: 0, deltaBytes: 0 };
      for (const { key, value } of lease.root.openDB<BlobRow, string[]>(CHECKPOINT_DB_NAMES.channels, {}).getRange({})) {
        if (key[2] !== 'messages') continue;
        if ('b' in value) {
          messages.whole++;
          messages.wholeBytes += value.b.length;
        } else if ('tail' in value) {
          messages.deltas++;
          messages.deltaBytes += value.tail.length;
        }
      }
      await lease.release();
      const file = size(join(dir, 'data.mdb'));
      return { bytes: { lmdbFile: file, lmdbUsedPages: used }, compared: file, compacted: used, details: { pageSize, dbPages, messagesChannel: messages } };
    },
  };
  timePuts(c.saver, c.puts);
  return c;
}

async function sqlite(dir: string, full: boolean): Promise<Contender> {
  const path = join(dir, 'checkpoints.db');
  const open = async () => {
    const saver = SqliteSaver.fromConnString(path);
    await saver.getTuple(THREAD); // runs its setup (WAL mode) as it ships
    if (full) saver.db.pragma('synchronous = FULL');
    return saver;
  };
  const c: Contender = {
    name: full ? 'SqliteSaver FULL' : 'SqliteSaver',
    dir,
    saver: await open(),
    puts: [],
    turns: [],
    busy: [],
    transcript: [],
    reopen: async () => {
      (c.saver as SqliteSaver).db.close();
      c.saver = await open();
    },
    close: async () => void (c.saver as SqliteSaver).db.close(),
    disk: async () => {
      const db = (c.saver as SqliteSaver).db;
      const details = { journal_mode: db.pragma('journal_mode', { simple: true }), synchronous: db.pragma('synchronous', { simple: true }) };
      const asLeft = { sqliteFile: size(path), sqliteWal: size(`${path}-wal`) };
      db.pragma('wal_checkpoint(TRUNCATE)');
      const compacted = size(path);
      return { bytes: { ...asLeft, sqliteFileAfterCheckpoint: compacted }, compared: asLeft.sqliteFile + asLeft.sqliteWal, compacted, details };
    },
  };
  timePuts(c.saver, c.puts);
  return c;
}

async function main(): Promise<void> {
  console.log(`LangGraph checkpoint storage: ${TURNS} turns on one thread${quick ? ' (--quick)' : ''}`);
  const contenders = [
    mnemo(makeTempDir('lg-mnemo')),
    await sqlite(makeTempDir('lg-sqlite'), false),
    await sqlite(makeTempDir('lg-sqlitefull'), true),
  ];
  try {
    const syncMode = (contenders[1]!.saver as SqliteSaver).db.pragma('synchronous', { simple: true });
    const graphs = contenders.map((c) => echoGraph(c.saver));
    for (let turn = 0; turn < TURNS; turn++) {
      for (const [i, c] of contenders.entries()) {
        const elu = performance.eventLoopUtilization();
        const started = performance.now();
        const messages: BaseMessage[] = (await graphs[i]!.invoke(userTurn(turn), THREAD)).messages;
        c.turns.push(performance.now() - started);
        c.busy.push(performance.eventLoopUtilization(elu).active);
        if (turn === TURNS - 1) c.transcript = messages.map((m) => `${m.getType()}:${String(m.content)}`);
      }
      if ((turn + 1) % Math.max(1, TURNS / 20) === 0) process.stdout.write(`  ${turn + 1}/${TURNS} turns\r`);
    }
    process.stdout.write('\n');
    for (const c of contenders.slice(1)) {
      if (contenders[0]!.transcript.length !== 2 * TURNS || contenders[0]!.transcript.join('\n') !== c.transcript.join('\n')) {
        throw new Error(`MnemoSaver and ${c.name} ended with different conversations`);
      }
    }

    const cold = new Map<Contender, number>();
    const warm = new Map<Contender, number[]>(contenders.map((c) => [c, []]));
    for (const c of contenders) {
      await c.reopen();
      const started = performance.now();
      const tuple = await c.saver.getTuple(THREAD);
      cold.set(c, round(performance.now() - started));
      if (((tuple?.checkpoint.channel_values['messages'] as unknown[]) ?? []).length !== 2 * TURNS) throw new Error(`${c.name}: latest checkpoint incomplete`);
    }
    for (let i = 0; i < WARM_READS; i++) {
      for (const c of contenders) {
        const started = performance.now();
        await c.saver.getTuple(THREAD);
        warm.get(c)!.push(performance.now() - started);
      }
    }

    const results: {
      saver: string;
      puts: Latency;
      turns: Latency;
      busyPerTurnMs: Latency;
      readLatestColdMs: number;
      readLatestWarmMs: number;
      disk: Record<string, number>;
      diskCompared: number;
      diskCompacted: number;
      details: Record<string, unknown>;
    }[] = [];
    for (const c of contenders) {
      const disk = await c.disk();
      results.push({
        saver: c.name,
        puts: latency(c.puts),
        turns: latency(c.turns),
        busyPerTurnMs: latency(c.busy),
        readLatestColdMs: cold.get(c)!,
        readLatestWarmMs: latency(warm.get(c)!).p50,
        disk: disk.bytes,
        diskCompared: disk.compared,
        diskCompacted: disk.compacted,
        details: disk.details,
      });
    }
    const [m, ...others] = results;
    if (m === undefined) throw new Error('no results');
    const ratio = (a: number, b: number) => `${round(a / b)}x`;
    const rows: string[][] = [['', m.saver, ...others.flatMap((o) => [o.saver, 'ratio'])]];
    const row = (label: string, f: (r: (typeof results)[number]) => number, show: (x: number) => string = String) =>
      rows.push([label, show(f(m)), ...others.flatMap((o) => [show(f(o)), ratio(f(o), f(m))])]);
    row('disk: LMDB file / SQLite file + WAL', (r) => r.diskCompared, mib);
    row('disk: LMDB used pages / SQLite checkpointed', (r) => r.diskCompacted, mib);
    row('put p50 (ms)', (r) => r.puts.p50);
    row('put p99 (ms)', (r) => r.puts.p99);
    row('turn p50 (ms)', (r) => r.turns.p50);
    row('turn p99 (ms)', (r) => r.turns.p99);
    row('event loop busy per turn, mean (ms)', (r) => r.busyPerTurnMs.mean);
    row('read latest, cold (ms)', (r) => r.readLatestColdMs);
    row('read latest, warm p50 (ms)', (r) => r.readLatestWarmMs);
    const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
    for (const r of rows) console.log(r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  '));
    console.log(`ratio = that saver / MnemoSaver. ${m.puts.n} puts each.`);
    const mc = m.details['messagesChannel'] as { whole: number; wholeBytes: number; deltas: number; deltaBytes: number };
    console.log(`MnemoSaver 'messages' channel: ${mc.whole} whole values (${mib(mc.wholeBytes)}), ${mc.deltas} deltas (${mib(mc.deltaBytes)})`);
    console.log(`SqliteSaver as shipped: synchronous=${String(syncMode)} (1 = NORMAL, 2 = FULL); journal_mode=${String(others[0]?.details['journal_mode'])}`);
    const load = loadavg().map((x) => round(x));
    console.log(`load average ${load.join(' ')} on ${cpus().length} cores`);

    const out = join(dirname(fileURLToPath(import.meta.url)), 'results', 'langgraph.json');
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(
      out,
      `${JSON.stringify({ date: new Date().toISOString(), quick, turns: TURNS, node: process.version, cpus: cpus().length, loadavg: load, sqliteShippedSynchronous: syncMode, results }, null, 2)}\n`,
    );
    console.log(`wrote ${out}`);
  } finally {
    for (const c of contenders) {
      await c.close().catch(() => undefined);
      rmSync(c.dir, { recursive: true, force: true });
    }
  }
}

await main();
