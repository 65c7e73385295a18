/**
 * Mnemo's PostgreSQL storage beside two peers' on the SAME PostgreSQL server, in one run:
 * Mastra's memory storage (`@mastra/pg` `PostgresStore`, its `memory` domain) and LangGraph.js's
 * `PostgresStore` (`@langchain/langgraph-checkpoint-postgres/store`).
 *
 *   npx tsx bench/postgres-peers.ts [--quick]      (writes bench/results/postgres-peers.json)
 *
 * PostgreSQL: `MNEMO_PG_URL`, else the throwaway server of `scripts/postgres.sh start`. The
 * server's settings are used as they are (fsync and synchronous_commit on: every write below
 * resolves once its commit is flushed); each system's own connection is asked
 * `SHOW synchronous_commit` and the answers are saved, so no side runs with weaker durability.
 * Each system gets fresh schemas of its own (one for the appends, one for the rest, so the
 * appends do not grow the store the reads run on), dropped at the end, and pools of 10
 * connections.
 *
 * Workloads, each system through its public API:
 * - appends: W concurrent writers (8; `--quick`: 4), each appending single ~200-byte chat
 *   messages one after another to its own conversation (a fresh one each round). Mnemo:
 *   `store.add(conversation, [message])`; Mastra: `memory.saveMessages({messages: [message]})` into a thread saved
 *   beforehand; LangGraph: `store.put(['conversation', id], key, {role, content})`.
 * - last-50 reads: R concurrent readers (4) of one conversation holding 500 messages, in a
 *   store holding 1 000 messages in all, then again once it holds 50 000 more in 100 other
 *   conversations (`--quick`: 5 000; LangGraph's namespace read is a `namespace_path LIKE
 *   'prefix%'`, which its plain btree index does not serve unless the database's collation
 *   is C: it scans the table). Mnemo:
 *   `store.tail(conversation, 50)`; Mastra: `memory.listMessages` as its agents read history
 *   (`perPage: 50`, newest first, `includeTotal: false`); LangGraph: `store.search(namespace,
 *   {limit: 50})` (no query: the newest items first).
 * - search over one user's messages (500 rows in 5 conversations, a rare word in 10 of them,
 *   10 hits asked for): Mnemo: `recall.search` (BM25 over the layered memory on PostgreSQL,
 *   `createPostgresRecallStore`; the rows written with `recall.recordTurn`); LangGraph:
 *   `store.search(['user', id], {query})` (its full-text mode without an embedding index:
 *   `to_tsvector(value) @@ plainto_tsquery` or ILIKE, ranked by `ts_rank`). Mastra has no
 *   keyword search over messages (`listMessages` filters by date range and metadata only; its
 *   semantic recall needs an embedder and a vector store), so its search row says so.
 * Each cell runs for a fixed time (3 s; `--quick`: 0.5 s) and counts the calls that finished.
 * Every reply is checked (50 rows, newest last; at least one search hit).
 *
 * Reported per cell: operations/s over the cell's wall time and p50/p99 latency of one call,
 * and Mnemo ÷ peer ratios (throughput: above 1 means Mnemo did more; latency: below 1 means
 * Mnemo answered sooner). All systems run in this one process, so each one's client-side CPU
 * counts too. The machine is shared: rounds (3; `--quick`: 1) interleave the cells and rotate
 * which system goes first; each cell's best round (highest throughput) counts, every round is
 * saved, and so is the load average.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { PostgresStore as LangGraphStore } from '@langchain/langgraph-checkpoint-postgres/store';
import { PostgresStore as MastraStore } from '@mastra/pg';
import type { MastraDBMessage } from '@mastra/core/memory';
import type { MemoryStorage } from '@mastra/core/storage';
import { createPostgresStore, type PostgresStore } from '../src/memory/postgres/index.ts';
import { createPostgresRecallStore } from '../src/recall/storage/postgres/index.ts';
import { createRecall, type Recall, type RecallStore } from '../src/recall/index.ts';
import { Samples } from './suite/stats.ts';

const self = fileURLToPath(import.meta.url);
const quick = process.argv.includes('--quick');
const ROUNDS = quick ? 1 : 3;
const WRITERS = quick ? 4 : 8;
const READERS = 4;
/** How long each cell runs: every system gets the same time of the same machine. */
const CELL_MS = quick ? 500 : 3000;
const HISTORY = 500;
const SEARCH_SESSIONS = 5;
const POOL_MAX = 10;
/** Messages in other conversations of the store for the second read row. */
const OTHERS = quick ? 5_000 : 50_000;
const RARE = 'zanzibar';
const RARE_EVERY = 50;

type System = 'mnemo' | 'mastra' | 'langgraph';
type Workload = 'appends' | 'reads' | 'search' | 'reads-large';
const SYSTEMS: readonly System[] = ['mnemo', 'mastra', 'langgraph'];
const WORKLOADS: readonly Workload[] = ['appends', 'reads', 'search', 'reads-large'];

/** One system behind the three calls the workloads make. */
interface Subject {
  system: System;
  schema: string;
  /** Whatever a conversation needs before its first append (Mastra: its thread row). */
  open(conversation: string): Promise<void>;
  append(conversation: string, seq: number, content: string): Promise<void>;
  /** The conversation's last 50 messages' contents, oldest first. */
  last50(conversation: string): Promise<string[]>;
  /** Fills one conversation with `contents`, as fast as the API allows (not timed). */
  fill(conversation: string, contents: readonly string[]): Promise<void>;
  /** Search support: undefined when the system has no keyword search. */
  search?: {
    fill(user: string, sessions: ReadonlyArray<{ id: string; contents: readonly string[] }>): Promise<void>;
    /** Hits for `query` among the user's messages (at most 10). */
    query(user: string, query: string): Promise<number>;
  };
  /** `SHOW synchronous_commit` on one of the system's own connections. */
  synchronousCommit(): Promise<string>;
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------- messages
const WORDS = (
  'the a to and of in is it you that for on with my this can what how about was be are have ' +
  'not but they at do we your if please could would tomorrow meeting weather train ticket recipe ' +
  'garden dinner weekend project report budget flight hotel music book movie coffee doctor'
).split(' ');

/** A deterministic ~200-byte chat message; every RARE_EVERY-th one carries the rare word. */
function messageText(stream: number, i: number): string {
  let x = (stream * 7919 + i * 104729 + 1) >>> 0;
  const words: string[] = [`${i}`];
  if (i % RARE_EVERY === RARE_EVERY - 1) words.push(RARE);
  let length = words.join(' ').length;
  while (length < 190) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    const w = WORDS[x % WORDS.length]!;
    words.push(w);
    length += w.length + 1;
  }
  return words.join(' ');
}

// ---------------------------------------------------------------------------- Mnemo
async function mnemo(url: string, schema: string): Promise<Subject> {
  const store: PostgresStore = createPostgresStore({ connectionString: url, schema });
  await store.migrate();
  const recallStore: RecallStore = createPostgresRecallStore({ transcripts: store });
  const recall: Recall = createRecall({ store: recallStore });
  return {
    system: 'mnemo',
    schema,
    open: async () => {},
    append: async (conversation, _seq, content) => {
      await store.add(conversation, [{ role: 'user', content }]);
    },
    last50: async (conversation) => (await store.tail(conversation, 50)).map((m) => String(m.message.content)),
    fill: async (conversation, contents) => {
      for (let i = 0; i < contents.length; i += 50) {
        await store.add(
          conversation,
          contents.slice(i, i + 50).map((content) => ({ role: 'user', content })),
        );
      }
    },
    search: {
      // A turn is the user's message and the reply: two rows, as the peers get two items.
      fill: async (user, sessions) => {
        for (const { id, contents } of sessions) {
          for (let i = 0; i < contents.length; i += 2) {
            await recall.recordTurn({ userId: user, sessionId: id, message: contents[i]!, reply: contents[i + 1] ?? '' });
          }
        }
      },
      query: async (user, query) => (await recall.search({ userId: user, query, limit: 10 })).items.length,
    },
    synchronousCommit: () => showSynchronousCommit(url, schema),
    close: async () => {
      await recall.close();
      await recallStore.close();
      await store.close();
    },
  };
}

// ---------------------------------------------------------------------------- Mastra
async function mastra(url: string, schema: string): Promise<Subject> {
  const storage = new MastraStore({ id: 'bench-peers', connectionString: url, schemaName: schema, max: POOL_MAX });
  await storage.init();
  const memory = (await storage.getStore('memory')) as MemoryStorage | undefined;
  if (memory === undefined) throw new Error('@mastra/pg: no memory domain');
  const resourceId = 'bench-user';
  // Mastra orders a thread by createdAt; a strictly increasing clock keeps fills in order.
  let lastMs = 0;
  const createdAt = () => new Date((lastMs = Math.max(Date.now(), lastMs + 1)));
  const message = (conversation: string, seq: number, content: string): MastraDBMessage => ({
    id: `${conversation}-${seq}`,
    threadId: conversation,
    resourceId,
    role: 'user',
    createdAt: createdAt(),
    content: { format: 2, parts: [{ type: 'text', text: content }] },
  });
  const textOf = (m: MastraDBMessage) =>
    m.content.parts.map((p) => (p.type === 'text' ? p.text : '')).join('');
  const open = async (conversation: string) => {
    const now = new Date();
    await memory.saveThread({ thread: { id: conversation, resourceId, title: conversation, createdAt: now, updatedAt: now, metadata: {} } });
  };
  return {
    system: 'mastra',
    schema,
    open,
    append: async (conversation, seq, content) => {
      await memory.saveMessages({ messages: [message(conversation, seq, content)] });
    },
    last50: async (conversation) => {
      const { messages } = await memory.listMessages({
        threadId: conversation,
        resourceId,
        page: 0,
        perPage: 50,
        orderBy: { field: 'createdAt', direction: 'DESC' },
        includeTotal: false,
      });
      // Newest first from the store; a reader wants them in conversation order.
      return messages.map(textOf).reverse();
    },
    fill: async (conversation, contents) => {
      await open(conversation);
      for (let i = 0; i < contents.length; i += 50) {
        await memory.saveMessages({ messages: contents.slice(i, i + 50).map((c, j) => message(conversation, i + j, c)) });
      }
    },
    synchronousCommit: async () => (await storage.pool.query<{ synchronous_commit: string }>('SHOW synchronous_commit')).rows[0]!.synchronous_commit,
    close: () => storage.close(),
  };
}

// ---------------------------------------------------------------------------- LangGraph
async function langgraph(url: string, schema: string): Promise<Subject> {
  const store = new LangGraphStore({ connectionOptions: { connectionString: url, max: POOL_MAX }, schema });
  await store.setup();
  const key = (seq: number) => String(seq).padStart(8, '0');
  const putAll = async (namespace: string[], contents: readonly string[]) => {
    for (let i = 0; i < contents.length; i += 50) {
      await store.batch(contents.slice(i, i + 50).map((content, j) => ({ namespace, key: key(i + j), value: { role: 'user', content } })));
    }
  };
  return {
    system: 'langgraph',
    schema,
    open: async () => {},
    append: async (conversation, seq, content) => {
      await store.put(['conversation', conversation], key(seq), { role: 'user', content });
    },
    last50: async (conversation) =>
      (await store.search(['conversation', conversation], { limit: 50 })).map((item) => String(item.value['content'])).reverse(),
    fill: (conversation, contents) => putAll(['conversation', conversation], contents),
    search: {
      fill: async (user, sessions) => {
        for (const { id, contents } of sessions) await putAll(['user', user, id], contents);
      },
      query: async (user, query) => (await store.search(['user', user], { query, limit: 10 })).length,
    },
    synchronousCommit: async () => {
      // The store keeps its pool private; this reads it only to ask the session's setting.
      const pool = (store as unknown as { core: { pool: pg.Pool } }).core.pool;
      return (await pool.query<{ synchronous_commit: string }>('SHOW synchronous_commit')).rows[0]!.synchronous_commit;
    },
    close: () => store.stop(),
  };
}

async function showSynchronousCommit(url: string, schema: string): Promise<string> {
  // Mnemo's store sets nothing on its connections: a plain connection to the server says it.
  void schema;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const { rows } = await client.query<{ synchronous_commit: string }>('SHOW synchronous_commit');
  await client.end();
  return rows[0]!.synchronous_commit;
}

// ---------------------------------------------------------------------------- cells
interface CellResult {
  opsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  count: number;
}

/** `workers` loops calling `call` one call after another until CELL_MS have passed. */
async function timed(workers: number, call: (worker: number, i: number) => Promise<void>): Promise<CellResult> {
  const samples = new Samples();
  const start = performance.now();
  const end = start + CELL_MS;
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      for (let i = 0; performance.now() < end; i++) {
        const t0 = performance.now();
        await call(w, i);
        samples.add(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  const { count, p50Ms, p99Ms } = samples.summary();
  return { opsPerSecond: count / seconds, p50Ms, p99Ms, count };
}

const READ_CONVERSATION = 'history';
const SEARCH_USER = 'search-user';
const historyContents = Array.from({ length: HISTORY }, (_, i) => messageText(1, i));
const searchSessions = Array.from({ length: SEARCH_SESSIONS }, (_, s) => ({
  id: `session-${s}`,
  contents: Array.from({ length: HISTORY / SEARCH_SESSIONS }, (_, i) => messageText(100 + s, i)),
}));
const expectedSearchHits = searchSessions.reduce((n, s) => n + s.contents.filter((c) => c.includes(RARE)).length, 0);

/** The data the read and search cells need, written once per system (not timed), and checked. */
async function prepare(subject: Subject): Promise<void> {
  await subject.fill(READ_CONVERSATION, historyContents);
  const tail = await subject.last50(READ_CONVERSATION);
  if (tail.length !== 50 || tail[49] !== historyContents[HISTORY - 1] || tail[0] !== historyContents[HISTORY - 50]) {
    throw new Error(`${subject.system}: last50 of the history is not its last 50 messages in order`);
  }
  if (subject.search !== undefined) {
    await subject.search.fill(SEARCH_USER, searchSessions);
    const hits = await subject.search.query(SEARCH_USER, RARE);
    if (hits !== Math.min(10, expectedSearchHits) && !(subject.system === 'mnemo' && hits > 0)) {
      throw new Error(`${subject.system}: search for "${RARE}" found ${hits} (expected ${Math.min(10, expectedSearchHits)})`);
    }
    if (hits === 0) throw new Error(`${subject.system}: search for "${RARE}" found nothing`);
  }
}

async function cell(subject: Subject, workload: Workload, round: number): Promise<CellResult | undefined> {
  switch (workload) {
    case 'appends': {
      const conversations = Array.from({ length: WRITERS }, (_, w) => `append-r${round}-w${w}`);
      for (const c of conversations) await subject.open(c);
      return timed(WRITERS, (w, i) => subject.append(conversations[w]!, i, messageText(1000 + w, i)));
    }
    case 'reads':
    case 'reads-large':
      return timed(READERS, async () => {
        if ((await subject.last50(READ_CONVERSATION)).length !== 50) throw new Error(`${subject.system}: a read came back short`);
      });
    case 'search': {
      const search = subject.search;
      if (search === undefined) return undefined;
      return timed(READERS, async () => {
        if ((await search.query(SEARCH_USER, RARE)) === 0) throw new Error(`${subject.system}: a search found nothing`);
      });
    }
  }
}

// ---------------------------------------------------------------------------- main
function postgresUrl(): string {
  const fromEnv = process.env['MNEMO_PG_URL'];
  if (fromEnv) return fromEnv;
  const script = join(dirname(self), '../scripts/postgres.sh');
  const out = execFileSync(script, ['start'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const match = /MNEMO_PG_URL='([^']+)'/.exec(out);
  if (!match?.[1]) throw new Error(`scripts/postgres.sh start printed no URL: ${out}`);
  return match[1];
}

async function sql(url: string, text: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(text);
  } finally {
    await client.end();
  }
}

async function serverSettings(url: string): Promise<Record<string, string>> {
  const { rows } = await sql(
    url,
    `SELECT name, setting FROM pg_settings WHERE name IN ('server_version', 'fsync', 'synchronous_commit', 'wal_sync_method', 'commit_delay', 'shared_buffers')`,
  );
  return Object.fromEntries((rows as Array<{ name: string; setting: string }>).map((r) => [r.name, r.setting]));
}

interface Row {
  system: System;
  workload: Workload;
  /** Undefined: the system has no such operation. */
  best?: CellResult;
  rounds: CellResult[];
}

const NO_SEARCH: Partial<Record<System, string>> = {
  mastra: 'no keyword search: listMessages filters by date range and metadata only; semantic recall needs an embedder and a vector store',
};

async function main(): Promise<void> {
  const url = postgresUrl();
  const tag = `${process.pid}`;
  const makers = { mnemo, mastra, langgraph } as const;
  const schemas = SYSTEMS.flatMap((system) => [`peers_${system}_${tag}`, `peers_${system}_appends_${tag}`]);
  const readers: Subject[] = [];
  const writers: Subject[] = [];
  const loadBefore = loadavg();
  try {
    for (const system of SYSTEMS) {
      readers.push(await makers[system](url, `peers_${system}_${tag}`));
      writers.push(await makers[system](url, `peers_${system}_appends_${tag}`));
    }
    const durability = Object.fromEntries(await Promise.all(writers.map(async (s) => [s.system, await s.synchronousCommit()] as const)));
    for (const [system, setting] of Object.entries(durability)) {
      if (setting !== 'on') throw new Error(`${system}'s connections run with synchronous_commit=${setting}, not on`);
    }
    for (const s of readers) {
      const t0 = performance.now();
      await prepare(s);
      process.stderr.write(`${s.system}: history and search corpus written and checked in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
    }
    // The writers' pools open their connections before the first timed append.
    for (const s of writers) {
      await Promise.all(Array.from({ length: WRITERS }, async (_, w) => {
        await s.open(`warm-${w}`);
        await s.append(`warm-${w}`, 0, messageText(w, 0));
      }));
    }

    const rows = new Map<string, Row>();
    for (const system of SYSTEMS) for (const workload of WORKLOADS) rows.set(`${system}/${workload}`, { system, workload, rounds: [] });
    const runRounds = async (workloads: readonly Workload[]) => {
      for (let r = 0; r < ROUNDS; r++) {
        for (const workload of workloads) {
          // Rotate who goes first, so no system always runs right after another's burst.
          const subjects = workload === 'appends' ? writers : readers;
          const order = subjects.map((_, i) => subjects[(i + r) % subjects.length]!);
          for (const s of order) {
            const result = await cell(s, workload, r);
            const row = rows.get(`${s.system}/${workload}`)!;
            if (result === undefined) continue;
            row.rounds.push(result);
            if (row.best === undefined || result.opsPerSecond > row.best.opsPerSecond) row.best = result;
            process.stderr.write(
              `round ${r + 1}/${ROUNDS} ${workload.padEnd(11)} ${s.system.padEnd(9)}: ${result.opsPerSecond.toFixed(0)}/s, ` +
                `p50 ${result.p50Ms.toFixed(2)} ms, p99 ${result.p99Ms.toFixed(2)} ms\n`,
            );
          }
        }
      }
    };
    // Phase 1: appends in schemas of their own, so the reads' store keeps its size.
    await runRounds(['appends', 'reads', 'search']);
    // Phase 2: the same reads once the store holds OTHERS more messages in other conversations.
    for (const s of readers) {
      const t0 = performance.now();
      for (let c = 0; c < OTHERS / HISTORY; c++) {
        await s.fill(`other-${c}`, Array.from({ length: HISTORY }, (_, i) => messageText(10_000 + c, i)));
      }
      process.stderr.write(`${s.system}: ${OTHERS} other messages written in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
    }
    await runRounds(['reads-large']);

    const all = [...rows.values()];
    const find = (system: System, workload: Workload) => rows.get(`${system}/${workload}`)!.best;
    const ratios = (['mastra', 'langgraph'] as const).flatMap((peer) =>
      WORKLOADS.flatMap((workload) => {
        const m = find('mnemo', workload);
        const p = find(peer, workload);
        if (m === undefined || p === undefined) return [];
        return [{ peer, workload, throughput: m.opsPerSecond / p.opsPerSecond, p50: m.p50Ms / p.p50Ms, p99: m.p99Ms / p.p99Ms }];
      }),
    );
    const label: Record<Workload, string> = {
      appends: `appends (${WRITERS} writers, own conversation each)`,
      reads: `last-50 reads (${READERS} readers, ${HISTORY}-message conversation)`,
      search: `search (${READERS} readers, ${HISTORY} messages of one user, 10 hits)`,
      'reads-large': `last-50 reads, ${OTHERS} more messages in the store (${READERS} readers)`,
    };
    const fmt = (x: number) => (x >= 100 ? x.toFixed(0) : x.toFixed(2));
    const table = [
      '| workload | system | ops/s | p50 ms | p99 ms |',
      '| --- | --- | --- | --- | --- |',
      ...WORKLOADS.flatMap((w) =>
        SYSTEMS.map((s) => {
          const best = find(s, w);
          return best === undefined
            ? `| ${label[w]} | ${s} | n/a (${NO_SEARCH[s] ?? 'not offered'}) | | |`
            : `| ${label[w]} | ${s} | ${best.opsPerSecond.toFixed(0)} | ${best.p50Ms.toFixed(2)} | ${best.p99Ms.toFixed(2)} |`;
        }),
      ),
      '',
      '| Mnemo ÷ peer | workload | throughput | p50 | p99 |',
      '| --- | --- | --- | --- | --- |',
      ...ratios.map((r) => `| ${r.peer} | ${r.workload} | ${fmt(r.throughput)}x | ${fmt(r.p50)}x | ${fmt(r.p99)}x |`),
    ].join('\n');
    process.stdout.write(`${table}\n`);

    const out = join(dirname(self), 'results/postgres-peers.json');
    mkdirSync(dirname(out), { recursive: true });
    const result = {
      mode: quick ? 'quick' : 'full',
      date: new Date().toISOString(),
      node: process.version,
      cpus: cpus().length,
      loadavg: { before: loadBefore, after: loadavg() },
      server: await serverSettings(url),
      durability,
      versions: await peerVersions(),
      parameters: { rounds: ROUNDS, writers: WRITERS, readers: READERS, cellMs: CELL_MS, history: HISTORY, others: OTHERS, searchSessions: SEARCH_SESSIONS, poolMax: POOL_MAX },
      cells: all.map((r) => ({ system: r.system, workload: r.workload, ...(r.best ?? { unsupported: NO_SEARCH[r.system] ?? 'not offered' }), rounds: r.rounds })),
      ratios,
    };
    writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
    process.stderr.write(`wrote ${out}\n`);
  } finally {
    for (const s of [...readers, ...writers]) await s.close().catch((e: unknown) => process.stderr.write(`${s.system}: close failed: ${String(e)}\n`));
    for (const schema of schemas) await sql(url, `DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
  }
}

async function peerVersions(): Promise<Record<string, string>> {
  const { readFileSync } = await import('node:fs');
  const version = (name: string) => (JSON.parse(readFileSync(join(dirname(self), '../node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
  return Object.fromEntries(['@mastra/pg', '@mastra/core', '@langchain/langgraph-checkpoint-postgres'].map((n) => [n, version(n)]));
}

await main();
