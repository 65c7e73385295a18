import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli-process.ts';
import { sql, usePostgres } from '../support/postgres-server.ts';
import { MIGRATIONS } from '../../src/recall/storage/postgres/recall-schema.ts';
import { MIGRATIONS as LANGGRAPH_MIGRATIONS } from '../../src/langgraph/storage/postgres/langgraph-schema.ts';

// `mnemo migrate` as a deploy runs it: a real process, a real database.
const db = usePostgres();
const cwd = mkdtempSync(join(tmpdir(), 'mnemo-migrate-'));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

async function migrate(args: string[], env: Record<string, string> = {}): Promise<{ code: number | string; out: string; err: string }> {
  const p = runCli(['migrate', ...args], { cwd, env });
  const code = await p.exited;
  return { code, out: p.lines.map((l) => JSON.stringify(l)).join('\n'), err: p.stderr() };
}

describe('mnemo migrate', () => {
  it('creates the message store, layered memory and LangGraph tables in the schema, and a second run changes nothing', async () => {
    const schema = db.schema('migrate');
    const first = await migrate(['--postgres', db.url, '--pg-schema', schema], { DATABASE_URL: '' });
    expect(first.code, first.err).toBe(0);
    expect(JSON.parse(first.out)).toMatchObject({ migrated: schema, recall_version: MIGRATIONS.length, langgraph_version: LANGGRAPH_MIGRATIONS.length, vectors: 'bytea' });
    const tables = async () =>
      (await sql<{ table_name: string }>(db.url, 'SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name', [schema])).map((r) => r.table_name);
    const made = await tables();
    expect(made).toEqual(expect.arrayContaining(['messages', 'recall_users', 'recall_sessions', 'recall_postings', 'recall_jobs', 'recall_schema_version', 'langgraph_checkpoints', 'langgraph_items', 'langgraph_schema_version']));
    const version = await sql<{ version: number }>(db.url, `SELECT version FROM ${pg.escapeIdentifier(schema)}.recall_schema_version`);
    expect(version).toEqual([{ version: MIGRATIONS.length }]);

    // Again, through the environment this time: idempotent.
    const second = await migrate([], { DATABASE_URL: db.url, MNEMO_PG_SCHEMA: schema });
    expect(second.code, second.err).toBe(0);
    expect(await tables()).toEqual(made);
  }, 60_000);

  it('exits 1 with storage_unavailable for a database nobody answers, and 2 without one', async () => {
    const down = await migrate(['--postgres', 'postgres://postgres@127.0.0.1:1/none']);
    expect(down.code).toBe(1);
    expect(down.err).toMatch(/^mnemo: storage_unavailable: /);
    const none = await migrate([], { DATABASE_URL: '' });
    expect(none.code).toBe(2);
    expect(none.err).toContain('needs --postgres');
  }, 60_000);
});
