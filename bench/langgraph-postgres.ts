/**
 * MnemoSaver on PostgreSQL next to LangGraph's PostgresSaver on the same server, with
 * MnemoSaver on LMDB as the reference, on one long conversation, in one run.
 *
 *   MNEMO_PG_URL=postgres://... npx tsx bench/langgraph-postgres.ts [--turns 300]
 *
 * Workload: the StateGraph of bench/langgraph.ts (test/programs/langgraph-echo-graph.ts), TURNS
 * turns on one thread, the savers driven in lockstep (turn i on each, then turn i+1) so a loaded
 * machine weighs on all alike. Each PostgreSQL saver has its own fresh schema (dropped at the end).
 * Reported per saver: `graph.invoke` p50/p99 per turn, warm `getTuple` p50 of the thread's
 * latest checkpoint, and bytes (PostgreSQL: the schema's tables with their indexes and TOAST;
 * LMDB: the pages of the saver's databases). All savers must end with the same conversation.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BaseMessage } from '@langchain/core/messages';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import pg from 'pg';
import { MnemoSaver } from '../src/langgraph/index.ts';
import { CHECKPOINT_DB_NAMES } from '../src/langgraph/storage/lmdb/lmdb-checkpoint-storage.ts';
import { acquireEnvironment } from '../src/memory/lmdb/lmdb-environment.ts';
import { echoGraph, userTurn } from '../test/programs/langgraph-echo-graph.ts';
import { Samples } from './suite/stats.ts';

const url = process.env['MNEMO_PG_URL'];
if (url === undefined || url === '') throw new Error('set MNEMO_PG_URL (scripts/postgres.sh start prints it)');
const turnsAt = process.argv.indexOf('--turns');
const TURNS = turnsAt > 0 ? Number(process.argv[turnsAt + 1]) : 300;
const WARM_READS = 50;
const THREAD = { configurable: { thread_id: 'bench-thread' } };
const suffix = `${process.pid}_${Date.now()}`;

interface Contender {
  name: string;
  saver: BaseCheckpointSaver & { close?: () => Promise<void>; end?: () => Promise<void> };
  bytes: () => Promise<number>;
  invoke: Samples;
  read: Samples;
  cleanup: () => Promise<void>;
}

const admin = new pg.Client({ connectionString: url });
await admin.connect();
const schemaBytes = async (schema: string): Promise<number> => {
  const { rows } = await admin.query(
    `SELECT COALESCE(sum(pg_total_relation_size(c.oid)), 0)::bigint AS n FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r'`,
    [schema],
  );
  return Number(rows[0].n);
};

const mnemoSchema = `bench_mnemo_${suffix}`;
const peerSchema = `bench_lgpg_${suffix}`;
const dir = mkdtempSync(join(tmpdir(), 'mnemo-bench-lgpg-'));
const peer = PostgresSaver.fromConnString(url, { schema: peerSchema });
await admin.query(`CREATE SCHEMA ${peerSchema}`);
await peer.setup();

const contenders: Contender[] = [
  {
    name: 'MnemoSaver (PostgreSQL)',
    saver: new MnemoSaver({ postgres: url, schema: mnemoSchema }),
    bytes: () => schemaBytes(mnemoSchema),
    invoke: new Samples(),
    read: new Samples(),
    cleanup: async () => void (await admin.query(`DROP SCHEMA IF EXISTS ${mnemoSchema} CASCADE`)),
  },
  {
    name: 'PostgresSaver (LangGraph)',
    saver: peer,
    bytes: () => schemaBytes(peerSchema),
    invoke: new Samples(),
    read: new Samples(),
    cleanup: async () => void (await admin.query(`DROP SCHEMA IF EXISTS ${peerSchema} CASCADE`)),
  },
  {
    name: 'MnemoSaver (LMDB)',
    saver: new MnemoSaver({ path: dir }),
    bytes: async () => {
      const lease = acquireEnvironment(dir, {});
      try {
        let pages = 0;
        for (const name of Object.values(CHECKPOINT_DB_NAMES)) {
          const s = lease.root.openDB(name, {}).getStats() as { treeBranchPageCount: number; treeLeafPageCount: number; overflowPages: number; pageSize: number };
          pages += (s.treeBranchPageCount + s.treeLeafPageCount + s.overflowPages) * s.pageSize;
        }
        return pages;
      } finally {
        await lease.release();
      }
    },
    invoke: new Samples(),
    read: new Samples(),
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  },
];

try {
  const graphs = contenders.map((c) => echoGraph(c.saver));
  for (let turn = 0; turn < TURNS; turn++) {
    for (let i = 0; i < contenders.length; i++) {
      const started = performance.now();
      await graphs[i]!.invoke(userTurn(turn), THREAD);
      contenders[i]!.invoke.add(performance.now() - started);
    }
  }
  for (let r = 0; r < WARM_READS; r++) {
    for (const c of contenders) {
      const started = performance.now();
      await c.saver.getTuple(THREAD);
      c.read.add(performance.now() - started);
    }
  }
  const finals = await Promise.all(contenders.map(async (c) => ((await c.saver.getTuple(THREAD))!.checkpoint.channel_values['messages'] as BaseMessage[]).map((m) => m.content)));
  for (const f of finals.slice(1)) if (JSON.stringify(f) !== JSON.stringify(finals[0])) throw new Error('the savers disagree on the conversation');

  const rows = [];
  for (const c of contenders) {
    const inv = c.invoke.summary();
    const rd = c.read.summary();
    rows.push({ saver: c.name, invokeP50Ms: +inv.p50Ms.toFixed(2), invokeP99Ms: +inv.p99Ms.toFixed(2), getTupleP50Ms: +rd.p50Ms.toFixed(2), mib: +((await c.bytes()) / 2 ** 20).toFixed(2) });
  }
  const base = rows[1]!;
  console.log(`${TURNS} turns, ${finals[0]!.length} messages; load average ${loadavg()[0]!.toFixed(2)}`);
  console.log('| saver | invoke p50 ms | invoke p99 ms | getTuple p50 ms | MiB | invoke p50 vs PostgresSaver | MiB vs PostgresSaver |');
  console.log('|---|---|---|---|---|---|---|');
  for (const r of rows) {
    console.log(`| ${r.saver} | ${r.invokeP50Ms} | ${r.invokeP99Ms} | ${r.getTupleP50Ms} | ${r.mib} | ${(r.invokeP50Ms / base.invokeP50Ms).toFixed(2)}x | ${(r.mib / base.mib).toFixed(3)}x |`);
  }
} finally {
  for (const c of contenders) {
    if (c.saver instanceof MnemoSaver) await c.saver.close();
    else await (c.saver as PostgresSaver).end();
    await c.cleanup();
  }
  await admin.end();
}
