/**
 * Ranked search at 100k and 1M messages, side by side in one run: Mnemo's BM25 on PostgreSQL
 * (`createPostgresRecallStore`, postings in `recall_postings`), Mnemo's BM25 on LMDB, and what
 * PostgreSQL's peers use: a plain table with a `tsvector` column and a GIN index, ranked by
 * `ts_rank_cd` (LangGraph's PostgresStore and most hand-written stores).
 *
 *   npx tsx bench/postgres-search.ts [--quick] [--sizes 100000,1000000] [--keep]
 *   (writes bench/results/postgres-search.json and .md; `npx tsx bench/figures.ts` renders them into docs/guides/postgresql.md)
 *
 * PostgreSQL: `MNEMO_PG_URL`, else the throwaway server of `scripts/postgres.sh start`.
 *
 * Corpus: the suite's ranked-search text (bench/suite/search-corpus.ts, seed 42: Zipf English-like
 * words, one message in ten Chinese), the same messages for the three systems. Per size N: one
 * big user holds a tenth (`--big-share`), the rest are typical users of 1 000 messages each (so
 * 1M messages: a user of 100 000 and 900 users of 1 000); 100 messages a day, one session a day.
 * BM25's statistics are per user, so the big user is where a query costs the most.
 * Loading, not timed against anything: Mnemo's through `store.importBatch` (the Demo folder
 * import's path: daily rows in batches of 5 000, then `complete`), three users at once; the peer
 * table by multi-row INSERTs, its GIN index built after. Then `VACUUM ANALYZE` on every table
 * (what autovacuum does to an insert-only table). `--keep` leaves the schemas and the LMDB
 * directory in place and reuses them on the next run with the same size and layout.
 *
 * Queries (OR of the terms in every system, top 10 with their rows): two mid-frequency words,
 * one rare word and one common word, two common words; on the big user and on typical users (a
 * different one each query). Mnemo: `recall.search({userId, query, limit: 10})`; the peer:
 * `SELECT ... WHERE user_id = $1 AND tsv @@ to_tsquery('english', 'a | b') ORDER BY
 * ts_rank_cd(tsv, q) DESC LIMIT 10`. Each query runs once on each system in a rotating order
 * (warm-up pass first, not counted). Reported: p50/p95 per cell; the CPU a query, this process's
 * (`process.cpuUsage`) and, when the server is a local process, the database server's and its
 * wait for a core (/proc schedstat of the postmaster's children): a shared machine stretches
 * latency, not CPU; and agreement: PostgreSQL's top 10 equal to LMDB's (same rows, same scores),
 * and how many of BM25's top 10 ts_rank_cd returns.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { acquireEnvironment } from '../src/memory/lmdb/lmdb-environment.ts';
import { createLmdbStore } from '../src/memory/lmdb/lmdb-store.ts';
import { createPostgresStore } from '../src/memory/postgres/index.ts';
import { createLmdbRecallStore, createRecall, type Recall, type RecallStore } from '../src/recall/index.ts';
import type { NewDailyRecord } from '../src/recall/records/records.ts';
import { createPostgresRecallStore } from '../src/recall/storage/postgres/index.ts';
import { searchCorpus } from './suite/search-corpus.ts';
import { Samples } from './suite/stats.ts';
import { QUERY_CLASSES, renderPostgresSearch, type PostgresSearchRun, type QueryClass, type SearchSystem, type SizeResult, type UserKind } from './suite/report/postgres-search-table.ts';

const self = fileURLToPath(import.meta.url);
const argv = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const quick = argv.includes('--quick');
const keep = argv.includes('--keep');
const SIZES = (flag('--sizes') ?? (quick ? '20000' : '100000,1000000')).split(',').map(Number);
const BIG_SHARE = Number(flag('--big-share') ?? 0.1);
const TYPICAL = 1_000;
const PER_DAY = 100;
const BATCH = 5_000;
const LOADERS = 3;
const QUERIES = quick ? 20 : 100;

type System = SearchSystem;
const SYSTEMS: readonly System[] = ['mnemo-postgres', 'mnemo-lmdb', 'ts_rank_cd'];
const CLASSES = QUERY_CLASSES;

interface Layout {
  users: { id: string; from: number; count: number }[];
  big: string;
  typical: string[];
}

function layout(size: number): Layout {
  const bigCount = Math.round(size * BIG_SHARE);
  const users = [{ id: 'big', from: 0, count: bigCount }];
  for (let from = bigCount, k = 0; from < size; from += TYPICAL, k++) users.push({ id: `u${k}`, from, count: Math.min(TYPICAL, size - from) });
  return { users, big: 'big', typical: users.slice(1).map((u) => u.id) };
}

function day(k: number): string {
  return new Date(Date.UTC(2024, 0, 1) + Math.floor(k / PER_DAY) * 86_400_000).toISOString().slice(0, 10);
}

/** The user's k-th message as a daily row (its id kept, as an import keeps them). */
function row(text: string, k: number): NewDailyRecord {
  const d = day(k);
  const id = (k % PER_DAY) + 1;
  return { day: d, id, ts: `${d}T10:${String(id % 60).padStart(2, '0')}:00`, role: k % 2 ? 'assistant' : 'user', content: text, sessionId: `s${Math.floor(k / PER_DAY)}`, sessionMessageId: id };
}

async function pool<T>(items: readonly T[], n: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: n }, async () => {
    while (next < items.length) await fn(items[next++]!);
  }));
}

async function importUsers(store: RecallStore, texts: readonly string[], plan: Layout): Promise<void> {
  await pool(plan.users, LOADERS, async (u) => {
    for (let k = 0; k < u.count; k += BATCH) {
      const daily: NewDailyRecord[] = [];
      for (let j = k; j < Math.min(u.count, k + BATCH); j++) daily.push(row(texts[u.from + j]!, j));
      await store.importBatch(u.id, { daily });
    }
    await store.importBatch(u.id, { complete: true });
  });
}

function pgUrl(): string {
  if (process.env.MNEMO_PG_URL) return process.env.MNEMO_PG_URL;
  const out = execFileSync(join(dirname(self), '../scripts/postgres.sh'), ['start'], { encoding: 'utf8' });
  const m = /MNEMO_PG_URL='([^']+)'/.exec(out);
  if (!m) throw new Error(`scripts/postgres.sh start printed no URL: ${out}`);
  return m[1]!;
}

interface Opened {
  search(system: System, user: string, query: string): Promise<string[]>;
  loadMs: Partial<Record<System, number>>;
  bytes: Partial<Record<System, number>>;
  close(): Promise<void>;
}

async function open(url: string, size: number, texts: readonly string[], plan: Layout): Promise<Opened> {
  const tag = `${size}_${Math.round(BIG_SHARE * 1000)}`;
  const schema = `bench_search_${tag}`;
  const peer = `bench_search_peer_${tag}`;
  const dir = join(tmpdir(), `mnemo-bench-search-${tag}`);
  const admin = new pg.Pool({ connectionString: url, max: 4 });
  const ready = async (s: string) => (await admin.query(`SELECT 1 FROM pg_tables WHERE schemaname = $1 AND tablename = 'ready'`, [s])).rowCount === 1;
  const loadMs: Partial<Record<System, number>> = {};

  // Mnemo on PostgreSQL.
  const reusePg = keep && (await ready(schema));
  if (!reusePg) await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  const log = createPostgresStore({ connectionString: url, schema });
  await log.migrate();
  const pgStore = createPostgresRecallStore({ transcripts: log });
  const pgRecall: Recall = createRecall({ store: pgStore });
  if (!reusePg) {
    const t = performance.now();
    await importUsers(pgStore, texts, plan);
    await admin.query(`VACUUM ANALYZE`);
    await admin.query(`CREATE TABLE ${schema}.ready ()`);
    loadMs['mnemo-postgres'] = performance.now() - t;
    process.stderr.write(`  mnemo-postgres loaded in ${(loadMs['mnemo-postgres'] / 1000).toFixed(0)} s\n`);
  }

  // Mnemo on LMDB.
  const reuseLmdb = keep && existsSync(join(dir, 'ready'));
  if (!reuseLmdb) rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const env = acquireEnvironment(dir, { noSync: true, mapSize: 64 * 2 ** 30 });
  const memory = createLmdbStore({ path: dir });
  const lmdbStore = createLmdbRecallStore({ env, transcripts: memory });
  const lmdbRecall: Recall = createRecall({ store: lmdbStore });
  if (!reuseLmdb) {
    const t = performance.now();
    await importUsers(lmdbStore, texts, plan);
    await env.root.flushed;
    writeFileSync(join(dir, 'ready'), '');
    loadMs['mnemo-lmdb'] = performance.now() - t;
    process.stderr.write(`  mnemo-lmdb loaded in ${(loadMs['mnemo-lmdb'] / 1000).toFixed(0)} s\n`);
  }

  // The peers' table.
  if (!(keep && (await ready(peer)))) {
    const t = performance.now();
    await admin.query(`DROP SCHEMA IF EXISTS ${peer} CASCADE`);
    await admin.query(`CREATE SCHEMA ${peer}`);
    await admin.query(`CREATE TABLE ${peer}.items (
      user_id text NOT NULL, day text NOT NULL, id integer NOT NULL, content text NOT NULL,
      tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', content)) STORED,
      PRIMARY KEY (user_id, day, id))`);
    const rows: { user: string; text: string; k: number }[] = [];
    for (const u of plan.users) for (let k = 0; k < u.count; k++) rows.push({ user: u.id, text: texts[u.from + k]!, k });
    const chunks: (typeof rows)[] = [];
    for (let i = 0; i < rows.length; i += BATCH) chunks.push(rows.slice(i, i + BATCH));
    await pool(chunks, LOADERS, async (chunk) => {
      await admin.query(`INSERT INTO ${peer}.items (user_id, day, id, content) SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::text[])`, [
        chunk.map((r) => r.user),
        chunk.map((r) => day(r.k)),
        chunk.map((r) => (r.k % PER_DAY) + 1),
        chunk.map((r) => r.text),
      ]);
    });
    await admin.query(`CREATE INDEX items_tsv ON ${peer}.items USING gin (tsv)`);
    await admin.query(`VACUUM ANALYZE ${peer}.items`);
    await admin.query(`CREATE TABLE ${peer}.ready ()`);
    loadMs.ts_rank_cd = performance.now() - t;
    process.stderr.write(`  ts_rank_cd table loaded in ${(loadMs.ts_rank_cd / 1000).toFixed(0)} s\n`);
  }

  const bytes: Partial<Record<System, number>> = {};
  const schemaBytes = async (s: string) =>
    Number((await admin.query<{ b: string }>(`SELECT COALESCE(sum(pg_total_relation_size(c.oid)), 0) AS b FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r'`, [s])).rows[0]!.b);
  bytes['mnemo-postgres'] = await schemaBytes(schema);
  bytes.ts_rank_cd = await schemaBytes(peer);

  const hitKey = (h: { day: string; messageId: number; score: number }) => `${h.day}#${h.messageId}#${h.score}`;
  return {
    loadMs,
    bytes,
    async search(system, user, query) {
      if (system === 'ts_rank_cd') {
        const tsq = query.split(' ').join(' | ');
        const { rows } = await admin.query<{ day: string; id: number }>({
          name: `ts_rank_cd_${peer}`,
          text: `SELECT day, id, content FROM ${peer}.items, to_tsquery('english', $2) q WHERE user_id = $1 AND tsv @@ q ORDER BY ts_rank_cd(tsv, q) DESC LIMIT 10`,
          values: [user, tsq],
        });
        return rows.map((r) => `${r.day}#${r.id}`);
      }
      const recall = system === 'mnemo-postgres' ? pgRecall : lmdbRecall;
      return (await recall.search({ userId: user, query, limit: 10 })).items.map(hitKey);
    },
    async close() {
      await pgRecall.close();
      await pgStore.close();
      await log.close();
      await lmdbRecall.close();
      await lmdbStore.close();
      await memory.close();
      await env.release();
      if (!keep) {
        await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await admin.query(`DROP SCHEMA IF EXISTS ${peer} CASCADE`);
        rmSync(dir, { recursive: true, force: true });
      }
      await admin.end();
    },
  };
}

/**
 * The CPU the database server spends, read from /proc (`schedstat`: ns on a core, ns waiting for
 * one) over the server's processes; undefined when the server is not a local process we can read.
 */
async function serverCpu(url: string): Promise<(() => Map<number, { onCpuNs: number; waitNs: number }>) | undefined> {
  try {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const dir = (await client.query<{ data_directory: string }>('SHOW data_directory')).rows[0]!.data_directory;
    await client.end();
    const postmaster = Number(readFileSync(join(dir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    let children: number[] = [];
    let listedAt = 0;
    return () => {
      if (performance.now() - listedAt > 1000) {
        children = readdirSync('/proc')
          .filter((e) => /^\d+$/.test(e))
          .filter((e) => {
            try {
              const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
              return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmaster;
            } catch {
              return false;
            }
          })
          .map(Number);
        listedAt = performance.now();
      }
      const now = new Map<number, { onCpuNs: number; waitNs: number }>();
      for (const pid of children) {
        try {
          const [run, wait] = readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ');
          now.set(pid, { onCpuNs: Number(run), waitNs: Number(wait) });
        } catch {
          // The process ended.
        }
      }
      return now;
    };
  } catch {
    return undefined;
  }
}

async function measure(url: string, size: number): Promise<SizeResult> {
  const corpus = searchCorpus();
  const texts: string[] = new Array(size);
  for (let i = 0; i < size; i++) texts[i] = corpus.message(i);
  const plan = layout(size);
  process.stderr.write(`size ${size}: ${plan.users.length} users\n`);
  const opened = await open(url, size, texts, plan);
  const database = await serverCpu(url);
  const cpu = new Map<string, { client: number; database: number; wait: number; n: number }>();
  const pick: Record<QueryClass, () => string> = {
    'mid+mid': () => `${corpus.mid()} ${corpus.mid()}`,
    'rare+common': () => `${corpus.rare()} ${corpus.common()}`,
    'common+common': () => `${corpus.common()} ${corpus.common()}`,
  };
  const samples = new Map<string, Samples>();
  let equal = 0;
  let asked = 0;
  let overlap = 0;
  let overlapOf = 0;
  let turn = 0;
  for (const userKind of ['big', 'typical'] as const) {
    for (const cls of CLASSES) {
      const queries = Array.from({ length: QUERIES }, (_, i) => ({ user: userKind === 'big' ? plan.big : plan.typical[(i * 7919) % plan.typical.length]!, query: pick[cls]() }));
      for (const pass of [0, 1]) {
        for (const { user, query } of queries) {
          const results = new Map<System, string[]>();
          const order = SYSTEMS.map((_, i) => SYSTEMS[(i + turn) % SYSTEMS.length]!);
          turn++;
          for (const system of order) {
            const db0 = pass === 1 ? database?.() : undefined;
            const cpu0 = process.cpuUsage();
            const t = performance.now();
            results.set(system, await opened.search(system, user, query));
            const ms = performance.now() - t;
            if (pass === 1) {
              const used = process.cpuUsage(cpu0);
              const db1 = database?.();
              const key = `${system}|${userKind}|${cls}`;
              if (!samples.has(key)) samples.set(key, new Samples());
              samples.get(key)!.add(ms);
              const c = cpu.get(key) ?? { client: 0, database: 0, wait: 0, n: 0 };
              c.client += (used.user + used.system) / 1000;
              // Processes present at both readings (a connection or a worker may come or go).
              for (const [pid, after] of db1 ?? []) {
                const before = db0?.get(pid);
                if (before === undefined) continue;
                c.database += (after.onCpuNs - before.onCpuNs) / 1e6;
                c.wait += (after.waitNs - before.waitNs) / 1e6;
              }
              c.n++;
              cpu.set(key, c);
            }
          }
          if (pass === 1) {
            const a = results.get('mnemo-postgres')!;
            const b = results.get('mnemo-lmdb')!;
            asked++;
            if (a.join('\n') === b.join('\n')) equal++;
            const bm25 = new Set(b.map((k) => k.slice(0, k.lastIndexOf('#'))));
            for (const k of results.get('ts_rank_cd')!) if (bm25.has(k)) overlap++;
            overlapOf += bm25.size;
          }
        }
      }
    }
  }
  const cells: SizeResult['cells'] = [];
  for (const [key, s] of samples) {
    const [system, user, queries] = key.split('|') as [System, UserKind, QueryClass];
    const c = cpu.get(key)!;
    cells.push({
      system,
      user,
      queries,
      latency: s.summary(),
      cpu: { clientMs: c.client / c.n, ...(database === undefined ? {} : { databaseMs: c.database / c.n, databaseWaitMs: c.wait / c.n }) },
    });
  }
  await opened.close();
  return {
    size,
    users: plan.users.length,
    bigUserMessages: plan.users[0]!.count,
    typicalUserMessages: TYPICAL,
    loadMs: opened.loadMs,
    bytes: opened.bytes,
    cells,
    pgEqualsLmdb: { equal, of: asked },
    tsRankOverlap: overlapOf === 0 ? NaN : overlap / overlapOf,
  };
}

async function main(): Promise<void> {
  const url = pgUrl();
  const sizes: SizeResult[] = [];
  for (const size of SIZES) sizes.push(await measure(url, size));
  const run: PostgresSearchRun = {
    date: new Date().toISOString(),
    command: `npx tsx bench/postgres-search.ts${argv.length > 0 ? ` ${argv.join(' ')}` : ''}`,
    node: process.version,
    cpus: cpus().length,
    loadavg: loadavg(),
    bigShare: BIG_SHARE,
    queriesPerCell: QUERIES,
    sizes,
  };
  const md = renderPostgresSearch(run);
  console.log(md);
  const out = join(dirname(self), 'results');
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'postgres-search.json'), `${JSON.stringify(run, null, 2)}\n`);
  writeFileSync(join(out, 'postgres-search.md'), `${md}\n`);
}

if (process.argv[1] === self) await main();
