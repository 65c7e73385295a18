import { describe, expect, it } from 'vitest';
import { createPostgresStore } from '../../src/memory/postgres/index.ts';
import { startRuntime } from '../../src/runtime.ts';
import { startServer } from '../../src/server/index.ts';
import { http } from '../support/http.ts';
import { sql, usePostgres } from '../support/postgres-server.ts';

// runtime.recall on PostgreSQL, end to end: two runtimes on one database (as two app servers
// would be), each with its own pools and recall service; what one stores the other reads,
// searches and erases.
const pg = usePostgres();

async function runtimeOn(schema: string, name: string) {
  const store = createPostgresStore({ connectionString: pg.url, schema });
  const runtime = await startRuntime({ name, storage: { store } });
  pg.cleanup(async () => {
    await runtime.stop();
    await store.close();
  });
  return runtime;
}

describe('runtime.recall on PostgreSQL', () => {
  it('a chat turn in one runtime is listed, searchable and erasable from another', async () => {
    const schema = pg.schema('recall_e2e');
    const a = await runtimeOn(schema, `pg_recall_a_${schema}`);
    const b = await runtimeOn(schema, `pg_recall_b_${schema}`);

    const turn = await a.recall.chat({ userId: 'alice', sessionId: 'trip', message: 'I am flying to Lisbon on Friday' });
    expect(turn.title).not.toBe('');

    expect((await b.recall.listSessions('alice')).map((s) => [s.sessionId, s.title])).toEqual([['trip', turn.title]]);
    expect((await b.recall.sessionMessages('alice', 'trip')).map((r) => r.role)).toEqual(['user', 'assistant']);
    const { items } = await b.recall.search({ userId: 'alice', query: 'Lisbon' });
    expect(items.map((h) => [h.source, h.sessionId, h.messageId])).toContainEqual(['session', 'trip', 1]);
    expect((await b.recall.searchDaily({ userId: 'alice', keyword: 'lisbon' })).map((r) => r.content)).toContain('I am flying to Lisbon on Friday');

    // A second turn in B numbers on from A's rows.
    await b.recall.chat({ userId: 'alice', sessionId: 'trip', message: 'and back on Monday' });
    expect((await a.recall.sessionMessages('alice', 'trip')).map((r) => r.messageId)).toEqual([1, 2, 3, 4]);

    const report = await b.recall.eraseUser('alice');
    expect(report.conversations).toBeGreaterThanOrEqual(1);
    expect(await a.recall.listSessions('alice')).toEqual([]);
    expect((await a.recall.search({ userId: 'alice', query: 'Lisbon' })).items).toEqual([]);
    expect(await a.recall.sessionMessages('alice', 'trip')).toEqual([]);
    // Nothing of the user is left in any table.
    const left = await sql<{ n: string }>(
      pg.url,
      `SELECT (SELECT count(*) FROM "${schema}".messages WHERE conversation_id LIKE '%alice%')
            + (SELECT count(*) FROM "${schema}".recall_daily WHERE user_id = 'alice')
            + (SELECT count(*) FROM "${schema}".recall_postings WHERE user_id = 'alice')
            + (SELECT count(*) FROM "${schema}".recall_log WHERE user_id = 'alice')
            + (SELECT count(*) FROM "${schema}".recall_jobs WHERE user_id = 'alice')
            + (SELECT count(*) FROM "${schema}".recall_users WHERE user_id = 'alice') AS n`,
    );
    expect(Number(left[0]!.n)).toBe(0);
  });

  it('facts written in one runtime supersede by key in the other, and the long-term document follows', async () => {
    const schema = pg.schema('recall_e2e_facts');
    const a = await runtimeOn(schema, `pg_facts_a_${schema}`);
    const b = await runtimeOn(schema, `pg_facts_b_${schema}`);
    await a.recall.remember('bob', { text: 'Bob drinks tea', key: 'drink' });
    await b.recall.remember('bob', { text: 'Bob drinks coffee now', key: 'drink' });
    expect((await a.recall.listFacts('bob')).map((f) => f.text)).toEqual(['Bob drinks coffee now']);
    expect((await a.recall.factHistory('bob')).map((f) => [f.text, f.validTo === undefined])).toEqual([
      ['Bob drinks tea', false],
      ['Bob drinks coffee now', true],
    ]);
    expect(await b.recall.getLongTerm('bob')).toContain('coffee');
    expect((await a.recall.rankFacts('bob', 'coffee')).map((f) => f.entry.text)).toEqual(['Bob drinks coffee now']);
  });

  it('the HTTP API of two servers on one database: a chat posted to one is listed, searched and deleted through the other', async () => {
    const schema = pg.schema('recall_http');
    const servers = await Promise.all(
      ['a', 'b'].map(async (label) => {
        const runtime = await runtimeOn(schema, `pg_http_${label}_${schema}`);
        const server = await startServer({ recall: runtime.recall, runtime, host: '127.0.0.1', port: 0, token: null, adminToken: null });
        pg.cleanup(() => server.close());
        return (method: string, path: string, body?: unknown) =>
          http(server.url, method, path, { headers: { 'x-mnemo-request': '1' }, ...(body === undefined ? {} : { body }) });
      }),
    );
    const [a, b] = servers as [(typeof servers)[number], (typeof servers)[number]];
    const chat = await a('POST', '/api/chat', { user_id: 'dora', session_id: 'plans', message: 'Meet Ines at the Porto cafe' });
    expect(chat.status).toBe(200);
    const listed = await b('GET', '/api/conversations?user_id=dora');
    expect((listed.json as { items: Array<{ session_id: string }> }).items.map((i) => i.session_id)).toEqual(['plans']);
    const found = await b('GET', '/api/search?user_id=dora&q=Porto');
    expect((found.json as { items: Array<{ session_id: string; message_id: number }> }).items.map((i) => [i.session_id, i.message_id])).toContainEqual(['plans', 1]);
    expect((await b('DELETE', '/api/conversations/plans?user_id=dora')).status).toBe(200);
    expect(((await a('GET', '/api/conversations?user_id=dora')).json as { items: unknown[] }).items).toEqual([]);
    expect(((await a('GET', '/api/conversations/plans/messages?user_id=dora')).json as { items?: unknown[] }).items ?? []).toEqual([]);
  });

  it('storage: { postgres: url } runs runtime.recall too', async () => {
    const runtime = await startRuntime({ name: 'pg_recall_owned', storage: { postgres: pg.url } });
    try {
      const userId = `owned-${process.pid}-${Date.now()}`;
      await runtime.recall.chat({ userId, sessionId: 's1', message: 'hello from the owned store' });
      expect((await runtime.recall.listSessions(userId)).map((s) => s.sessionId)).toEqual(['s1']);
      // Compaction is LMDB's: refused before anything is erased.
      await expect(runtime.recall.eraseUser(userId, { compact: true })).rejects.toMatchObject({ code: 'invalid_option' });
      expect((await runtime.recall.listSessions(userId)).map((s) => s.sessionId)).toEqual(['s1']);
      await runtime.recall.eraseUser(userId);
      expect(await runtime.recall.listSessions(userId)).toEqual([]);
    } finally {
      await runtime.stop();
    }
  });
});
