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

/** Runs the program, SIGKILLs it once it printed `turns` turn lines; resolves once it is dead. */
function runUntilKilled(job: { url: string; schema: string; userId: string; sessions: string[]; turns: number; label: string }, turns: number): Promise<void> {
  const child = spawn(process.execPath, ['--import', 'tsx', program], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, RECALL_TURNS: JSON.stringify(job) } });
  let seen = 0;
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdout.on('data', (d: Buffer) => {
    seen += d.toString().split('\n').filter((line) => line.startsWith('turn ')).length;
    if (seen >= turns) child.kill('SIGKILL');
  });
  return new Promise((resolve, reject) =>
    child.on('exit', (code, signal) => (signal === 'SIGKILL' ? resolve() : reject(new Error(`exited by itself (${code}): ${stderr}`)))),
  );
}

describe('the layered memory, many processes, one database', () => {
  it('a process SIGKILLed mid-turns leaves every turn whole: each session row has its daily row, each reply its log row', async () => {
    const schema = db.schema('recall_kill');
    const sessions = ['k1', 'k2', 'k3'];
    await runUntilKilled({ url: db.url, schema, userId: 'erin', sessions, turns: 1_000, label: 'killed' }, 7);
    const counts = await sql<{ session_id: string; rows: string; replies: string; daily: string; mirrored: string; logs: string }>(
      db.url,
      `SELECT s.session_id,
              (SELECT count(*) FROM ${pg.escapeIdentifier(schema)}.messages m WHERE m.conversation_id = 'session/erin/' || s.session_id) AS rows,
              (SELECT count(*) FROM ${pg.escapeIdentifier(schema)}.messages m WHERE m.conversation_id = 'session/erin/' || s.session_id AND m.message->>'role' = 'assistant') AS replies,
              (SELECT count(*) FROM ${pg.escapeIdentifier(schema)}.recall_daily d WHERE d.user_id = 'erin' AND d.session_id = s.session_id) AS daily,
              (SELECT count(DISTINCT session_message_id) FROM ${pg.escapeIdentifier(schema)}.recall_daily d WHERE d.user_id = 'erin' AND d.session_id = s.session_id) AS mirrored,
              (SELECT count(*) FROM ${pg.escapeIdentifier(schema)}.recall_log l WHERE l.user_id = 'erin' AND l.session_id = s.session_id) AS logs
       FROM ${pg.escapeIdentifier(schema)}.recall_sessions s WHERE s.user_id = 'erin' ORDER BY s.session_id`,
    );
    expect(counts.map((c) => c.session_id)).toEqual(sessions);
    let turns = 0;
    for (const c of counts) {
      expect(Number(c.daily), c.session_id).toBe(Number(c.rows));
      expect(Number(c.mirrored), c.session_id).toBe(Number(c.rows));
      expect(Number(c.logs), c.session_id).toBe(Number(c.replies));
      // A turn cut between its two writes leaves its user row alone, never a reply without one.
      expect(Number(c.rows) - 2 * Number(c.replies), c.session_id).toBeGreaterThanOrEqual(0);
      expect(Number(c.rows) - 2 * Number(c.replies), c.session_id).toBeLessThanOrEqual(1);
      turns += Number(c.replies);
    }
    expect(turns).toBeGreaterThanOrEqual(7);
  }, 120_000);


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
