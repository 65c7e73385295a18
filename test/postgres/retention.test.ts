import { describe, expect, it } from 'vitest';
import { createPostgresStore } from '../../src/memory/postgres/index.ts';
import { summaryConversationId } from '../../src/provider/summary-record.ts';
import { sessionConversationId } from '../../src/recall/recall-ids.ts';
import { startRuntime, type Runtime } from '../../src/runtime.ts';
import type { SweepReport } from '../../src/retention/retention-sweep.ts';
import { manualClock, type ManualClock } from '../support/recall-fixture.ts';
import { sql, usePostgres, within } from '../support/postgres-server.ts';

// Retention on PostgreSQL: the sweep is one recurring job of recall's job queue, so of many
// runtimes on one schema (as many servers on one database) one runs each round, from where the
// last round stopped, and only what aged out goes.
const pg = usePostgres();
const HOUR = 3_600_000;
const msg = (content: string) => [{ role: 'user' as const, content }];

async function runtimesOn(schema: string, n: number, clock: ManualClock, retention: { perTick?: number; sweepEveryMs: number }): Promise<Runtime[]> {
  const runtimes: Runtime[] = [];
  for (let i = 0; i < n; i++) {
    const store = createPostgresStore({ connectionString: pg.url, schema, clock });
    const runtime = await startRuntime({ name: `pg_retention_${i}_${schema}`, storage: { store }, wallClock: clock, recall: { clock }, retention: { idleTtlMs: HOUR, ...retention } });
    pg.cleanup(async () => {
      await runtime.stop();
      await store.close();
    });
    runtimes.push(runtime);
  }
  return runtimes;
}

async function count(schema: string, table: string, where: string, values: unknown[]): Promise<number> {
  const rows = await sql<{ n: string }>(pg.url, `SELECT count(*) AS n FROM "${schema}".${table} WHERE ${where}`, values);
  return Number(rows[0]!.n);
}

describe('retention on PostgreSQL: the sweep as a job', () => {
  it('rounds asked of three runtimes at once run one after another, each from where the last stopped', async () => {
    const schema = pg.schema('retention_rounds');
    const clock = manualClock();
    const [a, b, c] = await runtimesOn(schema, 3, clock, { perTick: 2, sweepEveryMs: 24 * HOUR });
    const old = ['c1', 'c2', 'c3', 'c4', 'c5', 'c6'];
    for (const id of old) await a!.memory.add(id, msg(`${id} long ago`));
    clock.advance(2 * HOUR);

    const reports = await Promise.all([a!, b!, c!].map((r) => r.retention.sweep()));
    // Leased in turn (one job), the cursor handed on: three rounds of two, none overlapping.
    const cleared = reports.flatMap((r) => r.cleared);
    expect(cleared.sort()).toEqual(old);
    for (const r of reports) expect(r).toMatchObject({ examined: 2, failed: 0 });
    for (const id of old) expect(await b!.memory.lastId(id)).toBe(0);
    expect(await count(schema, 'recall_jobs', `kind = 'sweep'`, [])).toBe(1);
  });

  it('on their timers, many runtimes sweep the aged conversations and sessions once; nothing else goes', async () => {
    const schema = pg.schema('retention_timer');
    const clock = manualClock();
    const [a, b, c] = await runtimesOn(schema, 3, clock, { sweepEveryMs: 150 });
    // Aged: a conversation with its summaries, a session of alice's (transcript, daily, log, index).
    await a!.memory.add('old', msg('written long ago'));
    await a!.memory.add(summaryConversationId('old'), [{ role: 'assistant', content: 'a summary of old' }]);
    await b!.recall.chat({ userId: 'alice', sessionId: 'stale', message: 'my passport number ends in 4711' });
    clock.advance(2 * HOUR);
    // Fresh: a conversation, a session of alice's and one of bob's.
    await c!.memory.add('fresh', msg('written just now'));
    await c!.recall.chat({ userId: 'alice', sessionId: 'live', message: 'the train leaves at nine' });
    await a!.recall.chat({ userId: 'bob', sessionId: 'live', message: 'bob keeps this' });

    await within('the sweep clears the aged conversation and session', async () => {
      expect(await a!.memory.lastId('old')).toBe(0);
      expect((await b!.recall.listSessions('alice')).map((s) => s.sessionId)).toEqual(['live']);
    });
    expect(await c!.memory.lastId(summaryConversationId('old'))).toBe(0);
    expect(await count(schema, 'messages', 'conversation_id = $1', [sessionConversationId('alice', 'stale')])).toBe(0);
    expect(await count(schema, 'recall_sessions', `user_id = 'alice' AND session_id = 'stale'`, [])).toBe(0);
    expect(await count(schema, 'recall_log', `user_id = 'alice' AND session_id = 'stale'`, [])).toBe(0);
    expect((await a!.recall.search({ userId: 'alice', query: 'passport' })).items).toEqual([]);
    expect((await a!.recall.searchDaily({ userId: 'alice', keyword: 'passport' }))).toEqual([]);
    // What did not age stays.
    expect(await b!.memory.get('fresh')).toEqual(msg('written just now'));
    expect((await c!.recall.sessionMessages('alice', 'live')).map((r) => r.role)).toEqual(['user', 'assistant']);
    expect((await c!.recall.sessionMessages('bob', 'live')).map((r) => r.role)).toEqual(['user', 'assistant']);
    expect((await b!.recall.search({ userId: 'alice', query: 'train' })).items.length).toBeGreaterThan(0);
    // One sweep job, handed on from round to round.
    expect(await count(schema, 'recall_jobs', `kind = 'sweep'`, [])).toBe(1);
  });

  it('a conversation written in another runtime since it aged is kept; an erased user is not brought back', async () => {
    const schema = pg.schema('retention_races');
    const clock = manualClock();
    const [a, b] = await runtimesOn(schema, 2, clock, { sweepEveryMs: 24 * HOUR });
    await a!.recall.chat({ userId: 'erin', sessionId: 'old', message: 'erase me' });
    await a!.memory.add('kept', msg('first'));
    clock.advance(2 * HOUR);
    await b!.recall.eraseUser('erin');
    // Written in another runtime after it aged: younger than its TTL again, kept.
    await b!.memory.add('kept', msg('again'));
    clock.advance(HOUR / 2);
    const report: SweepReport = await a!.retention.sweep();
    expect(report).toMatchObject({ cleared: [], deletedSessions: [], failed: 0 });
    expect(await a!.memory.lastId('kept')).toBe(2);
    // The sweep's delete of a session it read before the erasure finds no user, and makes no row for them.
    expect(await a!.recall.deleteSession('erin', 'old', { ifLastId: 2 })).toBe(false);
    // Nothing of erin in any table (the sweep job is of no user).
    for (const table of ['recall_users', 'recall_sessions', 'recall_daily', 'recall_log', 'recall_jobs']) {
      expect(await count(schema, table, `user_id = 'erin'`, [])).toBe(0);
    }
    expect(await count(schema, 'messages', `conversation_id LIKE 'session/erin/%'`, [])).toBe(0);
  });

  it('a conversation’s own TTL, set in one runtime, rules the sweep in another; it goes with its conversation and its user', async () => {
    const schema = pg.schema('retention_ttl');
    const clock = manualClock();
    const [a, b] = await runtimesOn(schema, 2, clock, { sweepEveryMs: 24 * HOUR });
    for (const c of ['default', 'longer', 'shorter', 'never']) await a!.memory.add(c, msg(c));
    await a!.retention.setTtl('longer', 10 * HOUR);
    await a!.retention.setTtl('shorter', 60_000);
    await a!.retention.setTtl('never', null);
    expect(await b!.retention.getTtl('longer')).toBe(10 * HOUR);
    expect(await b!.retention.getTtl('never')).toBeNull();
    expect(await b!.retention.getTtl('default')).toBeUndefined();
    await expect(b!.retention.setTtl('x', 0)).rejects.toMatchObject({ code: 'invalid_option' });
    clock.advance(2 * 60_000);
    expect((await b!.retention.sweep()).cleared).toEqual(['shorter']);
    clock.advance(2 * HOUR);
    expect((await a!.retention.sweep()).cleared).toEqual(['default']);
    clock.advance(100 * HOUR);
    expect((await b!.retention.sweep()).cleared).toEqual(['longer']);
    expect(await a!.memory.get('never')).toEqual(msg('never'));
    // A cleared conversation's own TTL goes with it; a user's erasure takes their sessions' TTLs.
    expect(await a!.retention.getTtl('longer')).toBeUndefined();
    await a!.recall.chat({ userId: 'erin', sessionId: 's', message: 'hello' });
    await a!.retention.setTtl(sessionConversationId('erin', 's'), null);
    await b!.recall.eraseUser('erin');
    expect(await a!.retention.getTtl(sessionConversationId('erin', 's'))).toBeUndefined();
    expect(await count(schema, 'conversation_ttl', 'true', [])).toBe(1); // 'never'
  });
});
