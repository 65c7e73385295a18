import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createPostgresStore } from '../../src/memory/postgres/index.ts';
import { createPostgresRecallStore } from '../../src/postgres.ts';
import { sql, usePostgres } from '../support/postgres-server.ts';

/**
 * The layered memory across real processes: separate Node processes, each a runtime with its own
 * pools, take chat turns in the same sessions of one database. The session lock (an advisory
 * lock) serializes the turns of a session across them, and the database numbers every row.
 */
const db = usePostgres();
const program = fileURLToPath(new URL('../programs/postgres-recall-turns.ts', import.meta.url));

function runChild(job: { url: string; schema: string; userId: string; sessions: string[]; turns: number; label: string }): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', program], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, RECALL_TURNS: JSON.stringify(job) } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  db.cleanup(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
}

describe('the layered memory, many processes, one database', () => {
  it("two processes taking turns in one session never interleave a turn's rows; every row is numbered once", async () => {
    const schema = db.schema('recall_procs');
    const turns = 4;
    const results = await Promise.all(
      ['p1', 'p2'].map((label) => runChild({ url: db.url, schema, userId: 'carol', sessions: ['shared', `own-${label}`], turns, label })),
    );
    for (const r of results) expect(r.code, r.stderr).toBe(0);

    const store = createPostgresStore({ connectionString: db.url, schema });
    const recall = createPostgresRecallStore({ transcripts: store });
    db.cleanup(async () => {
      await recall.close();
      await store.close();
    });
    // The shared session: 2 processes × 4 turns, each turn a user row then its reply.
    const rows = await store.range('session/carol/shared');
    expect(rows.map((r) => r.message_id)).toEqual(Array.from({ length: 2 * turns * 2 }, (_, i) => i + 1));
    expect(rows.map((r) => r.message.role)).toEqual(Array.from({ length: 2 * turns }, () => ['user', 'assistant']).flat());
    // Every session row has exactly one daily row, and the day's ids are 1..n with no duplicate.
    const daily = await sql<{ day: string; ids: string[]; n: string; distinct_rows: string }>(
      db.url,
      `SELECT day, array_agg(id ORDER BY id)::text[] AS ids, count(*) AS n, count(DISTINCT (session_id, session_message_id)) AS distinct_rows
       FROM ${pg.escapeIdentifier(schema)}.recall_daily WHERE user_id = 'carol' GROUP BY day`,
    );
    const total = daily.reduce((sum, d) => sum + Number(d.n), 0);
    expect(total).toBe(2 * turns * 2 + 2 * (turns * 2)); // the shared session's rows, and each own session's
    for (const d of daily) {
      expect(d.ids.map(Number)).toEqual(Array.from({ length: Number(d.n) }, (_, i) => i + 1));
      expect(Number(d.distinct_rows)).toBe(Number(d.n));
    }
    expect((await recall.dialogueLog('carol')).map((l) => l.seq)).toEqual(Array.from({ length: 4 * turns }, (_, i) => i + 1));
    expect((await recall.sessions('carol')).map((s) => [s.sessionId, s.listed]).sort()).toEqual([
      ['own-p1', true],
      ['own-p2', true],
      ['shared', true],
    ]);
  }, 120_000);
});
