import { createHash } from 'node:crypto';
import pg from 'pg';
import { startRuntime } from '../../../src/runtime.ts';
import type { AdapterFactory, AdapterInfo, LogAdapter } from '../types.ts';
import { memoryLog } from './mnemo.ts';

/**
 * Mnemo on PostgreSQL as a user runs it: `startRuntime({ storage: { postgres } })`, writes
 * through the same per-conversation actors as Mnemo (LMDB); `add` resolves once PostgreSQL
 * acknowledged the commit (the server of `scripts/postgres.sh` keeps fsync and
 * synchronous_commit on). The server is `MNEMO_PG_URL`; without it the suite skips this store
 * with a note. Each store gets its own schema, named from its directory, and drops it on close,
 * so it takes part only in the workloads that never reopen a store (`info.workloads`). Its
 * bytes on disk are its relations' (tables, indexes, TOAST), as PostgreSQL counts them: the
 * server's WAL is shared, not counted.
 */
let runtimes = 0;

const info: AdapterInfo = {
  id: 'mnemo-postgres',
  label: 'Mnemo (PostgreSQL)',
  durable: true,
  durability: 'the commit acknowledged by PostgreSQL (fsync on, synchronous_commit on: a WAL flush), via runtime.memory.add (per-conversation actor)',
  notes: 'startRuntime({storage: {postgres: MNEMO_PG_URL}}), one server on the same machine over TCP loopback; a fresh schema per store',
  workloads: ['append', 'disk'],
  compaction: 'VACUUM FULL of its schema\'s tables (each rewritten, indexes rebuilt)',
};

function schemaOf(dir: string): string {
  return `bench_${createHash('sha1').update(dir).digest('hex').slice(0, 16)}`;
}

export const mnemoPostgres: AdapterFactory = {
  info,
  unavailable: () => (process.env['MNEMO_PG_URL'] ? undefined : 'MNEMO_PG_URL is not set (eval "$(scripts/postgres.sh start)" sets it)'),
  async open(dir) {
    const url = process.env['MNEMO_PG_URL'];
    if (!url) throw new Error(`${info.id}: MNEMO_PG_URL is not set`);
    const schema = schemaOf(dir);
    const runtime = await startRuntime({ name: `bench-pg${++runtimes}`, dataDir: dir, storage: { postgres: url, schema } });
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    const adapter: LogAdapter = {
      info,
      ...memoryLog(runtime.memory),
      async footprint() {
        const { rows } = await admin.query<{ bytes: string; relations: string }>(
          `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) AS bytes, count(*) AS relations
             FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = $1 AND c.relkind IN ('r', 'm')`,
          [schema],
        );
        const bytes = Number(rows[0]!.bytes);
        return { allocatedBytes: bytes, apparentBytes: bytes, files: Number(rows[0]!.relations) };
      },
      async compact() {
        const { rows } = await admin.query<{ name: string }>(
          `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r'`,
          [schema],
        );
        for (const { name } of rows) await admin.query(`VACUUM FULL ${pg.escapeIdentifier(schema)}.${pg.escapeIdentifier(name)}`);
      },
      async close() {
        try {
          await runtime.stop();
          await admin.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
        } finally {
          await admin.end();
        }
      },
    };
    return adapter;
  },
};
