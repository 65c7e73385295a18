import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { acquireEnvironment } from '../../src/memory/lmdb/lmdb-environment.ts';
import { createLmdbStore } from '../../src/memory/lmdb/lmdb-store.ts';
import { createPostgresStore } from '../../src/memory/postgres/index.ts';
import { createLmdbRecallStore, createRecall, type RecallStore } from '../../src/recall/index.ts';
import type { NewDailyRecord, SessionEntry } from '../../src/recall/records/records.ts';
import { queryTerms } from '../../src/recall/search/documents.ts';
import { createPostgresRecallStore } from '../../src/postgres.ts';
import { StaleWriteError } from '../../src/recall/storage/stale-write-error.ts';
import { MIGRATIONS } from '../../src/recall/storage/postgres/recall-schema.ts';
import { manualClock, ZONE } from '../support/recall-fixture.ts';
import { sql, usePostgres } from '../support/postgres-server.ts';

// The layered memory's PostgreSQL adapter against the real server: the turn path in one
// transaction, guards after erasure, session locks and job leases across two stores (as two
// processes would hold them), and BM25 ranks equal to the LMDB adapter's on the same rows.
const pg = usePostgres();

function open(schema: string): { store: RecallStore; close: () => Promise<void> } {
  const transcripts = createPostgresStore({ connectionString: pg.url, schema });
  const store = createPostgresRecallStore({ transcripts });
  const close = async () => {
    await store.close();
    await transcripts.close();
  };
  pg.cleanup(close);
  return { store, close };
}

const day = '2026-04-08';
const row = (content: string, sessionMessageId: number, role = 'user'): NewDailyRecord => ({
  day,
  ts: `${day}T10:00:00`,
  role,
  content,
  sessionId: 's1',
  sessionMessageId,
});


/** The LMDB adapter on a temp directory (dropped after the test), to compare rankings with. */
function lmdbTwin(): RecallStore {
  const dir = mkdtempSync(join(tmpdir(), 'mnemo-pg-twin-'));
  const env = acquireEnvironment(dir, { noSync: true });
  const memory = createLmdbStore({ path: dir });
  const lmdb = createLmdbRecallStore({ env, transcripts: memory });
  pg.cleanup(async () => {
    await lmdb.close();
    await memory.close();
    await new Promise((r) => setTimeout(r, 0));
    await env.release();
    rmSync(dir, { recursive: true, force: true });
  });
  return lmdb;
}

describe('createPostgresRecallStore: the turn', () => {
  it('a chat turn stores transcript, daily rows, postings, log and listing, read back by a second store', async () => {
    const schema = pg.schema('recall_turn');
    const a = open(schema);
    const recall = createRecall({ store: a.store, clock: manualClock(), timeZone: ZONE });
    pg.cleanup(() => recall.close());
    const result = await recall.chat({ userId: 'u1', sessionId: 's1', message: 'my cat is called Miso' });
    expect(result.reply).not.toBe('');

    const b = open(schema);
    const other = createRecall({ store: b.store, clock: manualClock(), timeZone: ZONE });
    pg.cleanup(() => other.close());
    expect((await other.sessionMessages('u1', 's1')).map((r) => [r.role, r.messageId])).toEqual([
      ['user', 1],
      ['assistant', 2],
    ]);
    expect((await other.dailyMessages('u1')).map((r) => [r.role, r.content.slice(0, 21), r.sessionId])).toContainEqual(['user', 'my cat is called Miso', 's1']);
    expect((await other.listSessions('u1')).map((s) => s.sessionId)).toEqual(['s1']);
    const { items } = await other.search({ userId: 'u1', query: 'Miso' });
    expect(items.map((h) => [h.source, h.sessionId])).toContainEqual(['session', 's1']);
    expect((await other.dialogueLog('u1', 's1'))[0]).toMatchObject({ userMessage: 'my cat is called Miso' });
    const postings = await sql<{ n: string }>(pg.url, `SELECT count(*) AS n FROM "${schema}".recall_postings WHERE user_id = 'u1' AND term = 'miso'`);
    expect(Number(postings[0]!.n)).toBeGreaterThan(0);
  });

  it('text with NUL, escapes and astral characters round-trips in rows, titles and search', async () => {
    const schema = pg.schema('recall_text');
    const { store } = open(schema);
    const recall = createRecall({ store, clock: manualClock(), timeZone: ZONE });
    pg.cleanup(() => recall.close());
    const message = 'nul\u0000 "quoted" \\ 🚲 bicyclette';
    const result = await recall.chat({ userId: 'u1', sessionId: 's1', message });
    expect((await recall.sessionMessages('u1', 's1'))[0]!.content).toBe(message);
    expect((await recall.listSessions('u1'))[0]!.title).toBe(result.title);
    expect((await recall.dailyMessages('u1'))[0]!.content).toBe(message);
    expect((await recall.search({ userId: 'u1', query: 'bicyclette' })).items.length).toBeGreaterThan(0);
    expect((await recall.searchDaily({ userId: 'u1', keyword: '🚲' })).map((r) => r.content)).toContain(message);
  });

  it('a turn whose side writes fail stores no transcript row either (one transaction)', async () => {
    const schema = pg.schema('recall_atomic');
    const { store } = open(schema);
    await expect(
      store.appendTurn({
        userId: 'u1',
        sessionId: 's1',
        entries: [{ message: { role: 'user', content: 'hello' } }],
        opens: { now: `${day}T10:00:00` },
        // Called after the rows were numbered, inside the transaction: its failure rolls them back.
        with: () => {
          throw new RangeError('side writes failed');
        },
      }),
    ).rejects.toThrow('side writes failed');
    expect(await store.transcripts.lastId('session/u1/s1')).toBe(0);
    expect(await store.session('u1', 's1')).toBeUndefined();
    expect(await store.hasData('u1')).toBe(false);
  });

  it('appendTurn rejects a guard taken before an erasure, and stores nothing', async () => {
    const schema = pg.schema('recall_guard');
    const { store } = open(schema);
    const first = await store.appendTurn({
      userId: 'u1',
      sessionId: 's1',
      entries: [{ message: { role: 'user', content: 'hello there' } }],
      opens: { now: `${day}T10:00:00` },
      with: (records) => ({ daily: records.map((r) => row('hello there', r.message_id)) }),
    });
    expect(first.records.map((r) => r.message_id)).toEqual([1]);
    expect(first.guard.incarnation).toEqual(expect.any(String));
    const report = await store.eraseUser('u1');
    expect(report.conversations).toBeGreaterThanOrEqual(1);
    expect(await store.hasData('u1')).toBe(false);
    await expect(
      store.appendTurn(
        { userId: 'u1', sessionId: 's1', entries: [{ message: { role: 'assistant', content: 'late reply' } }], with: (records) => ({ daily: records.map((r) => row('late reply', r.message_id, 'assistant')) }) },
        first.guard,
      ),
    ).rejects.toBeInstanceOf(StaleWriteError);
    expect(await store.transcripts.lastId('session/u1/s1')).toBe(0);
    expect(await store.dailyDay('u1', day)).toEqual([]);
    expect(await store.users()).toEqual([]);
    // A fresh turn starts over at 1, under a new incarnation.
    const again = await store.appendTurn({
      userId: 'u1',
      sessionId: 's1',
      entries: [{ message: { role: 'user', content: 'again' } }],
      opens: { now: `${day}T11:00:00` },
      with: (records) => ({ daily: records.map((r) => row('again', r.message_id)) }),
    });
    expect(again.records[0]!.message_id).toBe(1);
    expect(again.guard.incarnation).not.toBe(first.guard.incarnation);
    expect((await store.dailyDay('u1', day)).map((r) => r.id)).toEqual([1]);
  });

  it('a keyed append retried stores its rows and daily mirrors once', async () => {
    const schema = pg.schema('recall_keyed');
    const { store } = open(schema);
    const append = () =>
      store.appendTurn({
        userId: 'u1',
        sessionId: 's1',
        entries: [{ message: { role: 'user', content: 'once only' } }],
        idempotencyKey: 'k1',
        opens: { now: `${day}T10:00:00` },
        with: (records) => ({ daily: records.map((r) => row('once only', r.message_id)) }),
      });
    const one = await append();
    const two = await append();
    expect(two.records).toEqual(one.records);
    expect((await store.dailyDay('u1', day)).map((r) => r.content)).toEqual(['once only']);
    expect(await store.transcripts.lastId('session/u1/s1')).toBe(1);
  });
});

describe('createPostgresRecallStore: options', () => {
  it('refuses transcripts that are not a PostgreSQL store, a bad lockConnections, and no connection, with invalid_option', () => {
    const notPostgres = { get: async () => [] } as unknown as Parameters<typeof createPostgresRecallStore>[0]['transcripts'];
    expect(() => createPostgresRecallStore({ transcripts: notPostgres! })).toThrow(expect.objectContaining({ code: 'invalid_option' }));
    expect(() => createPostgresRecallStore({ connectionString: pg.url, lockConnections: 0 })).toThrow(expect.objectContaining({ code: 'invalid_option' }));
    expect(() => createPostgresRecallStore({} as never)).toThrow(expect.objectContaining({ code: 'invalid_option' }));
  });
});

describe('createPostgresRecallStore: migrations', () => {
  it('many stores opening a fresh schema at once migrate it once; an older version is brought forward, its rows kept', async () => {
    const schema = pg.schema('recall_migrate');
    const stores = [open(schema), open(schema), open(schema), open(schema)];
    await Promise.all(stores.map(({ store }) => store.touchSession('u1', 's1', { title: 't', updatedAt: `${day}T10:00:00` })));
    const version = async () => Number((await sql<{ version: number }>(pg.url, `SELECT version FROM "${schema}".recall_schema_version`))[0]!.version);
    expect(await version()).toBe(MIGRATIONS.length);
    expect(await sql(pg.url, `SELECT * FROM "${schema}".recall_schema_version`)).toHaveLength(1);

    // Back to version 1 (as a store of the first release left it): the next store migrates it.
    const older = pg.schema('recall_migrate_v1');
    await sql(pg.url, `CREATE SCHEMA "${older}"`);
    await sql(pg.url, MIGRATIONS[0]!(`"${older}"`));
    await sql(pg.url, `CREATE TABLE "${older}".recall_schema_version (version integer NOT NULL); INSERT INTO "${older}".recall_schema_version VALUES (1)`);
    await sql(pg.url, `INSERT INTO "${older}".recall_sessions (user_id, session_id, title, updated_at, ord, listed) VALUES ('u1', 'old', 'kept', '${day}T09:00:00', 1, true)`);
    const { store } = open(older);
    expect(await store.session('u1', 'old')).toEqual({ sessionId: 'old', title: 'kept', updatedAt: `${day}T09:00:00`, order: 1, listed: true });
    expect(Number((await sql<{ version: number }>(pg.url, `SELECT version FROM "${older}".recall_schema_version`))[0]!.version)).toBe(MIGRATIONS.length);
  });
});

describe('createPostgresRecallStore: a first turn cut short', () => {
  const userRowOnly = (store: RecallStore, sessionId: string) =>
    store.appendTurn({
      userId: 'u1',
      sessionId,
      entries: [{ message: { role: 'user', content: 'left without a reply' } }],
      opens: { now: `${day}T10:00:00` },
      with: (records) => ({ daily: records.map((r) => row('left without a reply', r.message_id)) }),
    });

  it('is listed by the next store to open, titled from its message, unless a turn of it holds its lock', async () => {
    const schema = pg.schema('recall_cut_short');
    const first = open(schema);
    await userRowOnly(first.store, 'killed');
    await userRowOnly(first.store, 'running');
    const held = await first.store.lockSession('u1', 'running'); // a turn still in flight
    expect((await first.store.session('u1', 'killed'))?.listed).toBe(false);
    // A store opening later (another process starting) repairs what it can, before its close resolves.
    const next = open(schema);
    await next.close();
    const killed = await first.store.session('u1', 'killed');
    expect(killed).toMatchObject({ listed: true, updatedAt: expect.stringMatching(/^2026|^20/) });
    expect(killed!.title).not.toBe('');
    expect((await first.store.session('u1', 'running'))?.listed).toBe(false);
    await held();
    // Its own turn's end lists it as usual; a store opening later finds nothing to do.
    const again = open(schema);
    await again.close();
    expect((await first.store.session('u1', 'running'))?.listed).toBe(true);
  });
});

describe('createPostgresRecallStore: across stores on one database', () => {
  it('lockSession held by one store makes the other wait until it is released', async () => {
    const schema = pg.schema('recall_lock');
    const a = open(schema).store;
    const b = open(schema).store;
    const order: string[] = [];
    const releaseA = await a.lockSession('u1', 's1');
    order.push('a locked');
    const bLocked = b.lockSession('u1', 's1').then((release) => {
      order.push('b locked');
      return release;
    });
    // Round trips to the database while A holds it: B is still waiting.
    for (let i = 0; i < 5; i++) await a.sessions('u1');
    const other = await b.lockSession('u1', 's2'); // another session is not held
    await other();
    order.push('a releases');
    await releaseA();
    const releaseB = await bLocked;
    await releaseB();
    expect(order).toEqual(['a locked', 'a releases', 'b locked']);
  });

  it('a job whose lease expired is taken over by the other store, and the first lease writes nothing', async () => {
    const schema = pg.schema('recall_lease');
    const a = open(schema).store;
    const b = open(schema).store;
    await a.jobs.enqueue([{ kind: 'summarize', userId: 'u1', payload: { sessionId: 's1' } }]);
    const [mine] = await a.jobs.lease('summarize', { limit: 5, leaseMs: 60_000 });
    expect(mine).toMatchObject({ kind: 'summarize', userId: 'u1', key: 's1', attempts: 0 });
    // Held: the other store gets nothing.
    expect(await b.jobs.lease('summarize', { limit: 5, leaseMs: 60_000 })).toEqual([]);
    // A lease of 0 ms expires at once (the database's clock): the other store takes it over.
    await a.jobs.fail(mine!, { code: 'x', message: 'retry now' }, 0);
    const [retried] = await a.jobs.lease('summarize', { limit: 5, leaseMs: 0 });
    expect(retried?.attempts).toBe(1);
    let taken: Awaited<ReturnType<typeof b.jobs.lease>> = [];
    while (taken.length === 0) taken = await b.jobs.lease('summarize', { limit: 5, leaseMs: 60_000 });
    expect(taken[0]!.token).not.toBe(retried!.token);
    // The first lease is lost: its effects and its outcome change nothing.
    const state = await a.factsState('u1');
    await expect(a.commitFacts('u1', { generation: 'g1', entries: [] }, { generation: state.generation, job: { kind: 'summarize', userId: 'u1', key: 's1', token: retried!.token } })).rejects.toMatchObject({
      code: 'write_stale',
      reason: 'lease_lost',
    });
    await a.jobs.complete(retried!);
    expect(await b.jobs.counts('summarize')).toEqual({ pending: 1, retrying: 1, dead: 0 });
    await b.jobs.complete(taken[0]!);
    expect(await a.jobs.counts('summarize')).toEqual({ pending: 0, retrying: 0, dead: 0 });
  });

  it("a store's subscribers hear of jobs another store queued (LISTEN/NOTIFY), after their commit", async () => {
    const schema = pg.schema('recall_notify');
    const a = open(schema).store;
    const b = open(schema).store;
    let heard = 0;
    const unsubscribe = b.jobs.subscribe('summarize', () => heard++);
    // Queued until one is heard: B's LISTEN connection opens in the background.
    for (let i = 0; heard === 0; i++) {
      await a.jobs.enqueue([{ kind: 'summarize', userId: 'u1', payload: { sessionId: `s${i}` } }]);
      await b.jobs.counts('summarize'); // a round trip on B's side
    }
    // A turn rolled back after queuing a job tells nothing: NOTIFY is delivered at commit only.
    let extracts = 0;
    const unsubscribeExtract = b.jobs.subscribe('extract', () => extracts++);
    const extract = (replyId: number) => ({ kind: 'extract' as const, userId: 'u1', payload: { sessionId: 's1', replyId, userMessage: 'u', assistantReply: 'a', messageIds: [1, 2] } });
    await expect(
      a.appendTurn({
        userId: 'u1',
        sessionId: 's1',
        entries: [{ message: { role: 'user', content: 'x' } }],
        // The second job has no key (an unknown kind): the database refuses it after the first was queued.
        with: () => ({ daily: [], jobs: [extract(1), { kind: 'bogus' } as never] }),
      }),
    ).rejects.toMatchObject({ code: 'storage_failed' });
    await a.jobs.enqueue([extract(2)]);
    while (extracts === 0) await b.jobs.counts('extract');
    // Everything sent before this marker has been heard once it is.
    const marker = heard;
    await a.jobs.enqueue([{ kind: 'summarize', userId: 'u1', payload: { sessionId: 'marker' } }]);
    while (heard === marker) await b.jobs.counts('summarize');
    expect(extracts).toBe(1);
    expect((await a.jobs.counts('extract')).pending).toBe(1);
    unsubscribeExtract();
    unsubscribe();
  });

  it('an erasure removes a leased job: its lease is lost', async () => {
    const schema = pg.schema('recall_erase_job');
    const { store } = open(schema);
    await store.jobs.enqueue([{ kind: 'summarize', userId: 'u1', payload: { sessionId: 's1' } }]);
    const [job] = await store.jobs.lease('summarize', { limit: 1, leaseMs: 60_000 });
    await store.eraseUser('u1');
    await expect(store.commitFacts('u1', { generation: 'g', entries: [] }, { generation: '', job: { kind: job!.kind, userId: 'u1', key: job!.key, token: job!.token } })).rejects.toMatchObject({
      reason: 'lease_lost',
    });
    expect(await store.jobs.counts('summarize')).toEqual({ pending: 0, retrying: 0, dead: 0 });
  });
});

describe('createPostgresRecallStore: ranking', () => {
  it('a larger corpus, after a session is deleted and the long-term document rewritten, ranks as LMDB does', async () => {
    const words = ['cat', 'dog', 'garden', 'rose', 'train', 'station', 'coffee', 'tea', 'lisbon', 'porto', 'bike', 'rain', '咖啡', '火车'];
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const sessionsOf = ['a', 'b', 'c'].map((id, i): SessionEntry => ({ sessionId: id, title: id, updatedAt: `${day}T10:00:00`, order: i + 1, listed: true }));
    const corpus: NewDailyRecord[] = Array.from({ length: 240 }, (_, i) => {
      const d = `2026-04-${String(1 + (i % 6)).padStart(2, '0')}`;
      const n = 2 + Math.floor(next() * 9);
      return {
        day: d,
        id: 1 + Math.floor(i / 6),
        ts: `${d}T10:00:00`,
        role: i % 2 === 0 ? 'user' : 'assistant',
        content: Array.from({ length: n }, () => words[Math.floor(next() * words.length)]).join(' '),
        sessionId: sessionsOf[i % 3]!.sessionId,
        sessionMessageId: 1 + Math.floor(i / 3),
      };
    });
    const schema = pg.schema('recall_rank_big');
    const { store } = open(schema);
    const lmdb = lmdbTwin();
    for (const s of [store, lmdb]) {
      await s.importBatch('u1', { sessions: sessionsOf, daily: corpus });
      for (const content of ['likes coffee\nlives in porto', 'likes tea\n\nlives in lisbon\nrides a bike']) {
        const state = await s.factsState('u1');
        await s.commitFacts('u1', { generation: `g-${content.length}`, entries: [], longTerm: { content, ts: `${day}T09:00:00`, source: 'set' } }, { generation: state.generation });
      }
      expect(await s.deleteSession('u1', 'b')).toBe('deleted');
    }
    for (const query of ['coffee', 'tea lisbon', 'cat dog garden rose', 'train station rain', '咖啡 火车', 'bike porto']) {
      for (const filters of [{}, { sessionId: 'a' }, { from: '2026-04-02', to: '2026-04-04' }, { roles: ['memory'] }]) {
        const q = { terms: queryTerms(query), filters, limit: 12 };
        const fromPg = await store.rank('u1', q);
        expect(fromPg, `${query} ${JSON.stringify(filters)}`).toEqual(await lmdb.rank('u1', q));
        if (Object.keys(filters).length === 0) expect(fromPg.length, query).toBeGreaterThan(0);
      }
    }
  });

  const texts = [
    'the cat sat on the mat',
    'a cat and a dog',
    'dogs chase cats in the garden',
    'my garden has roses and a cat',
    'roses are red',
    'the dog sleeps',
    'cat cat cat',
    'nothing here',
    'roses are red', // the same text as another row: a tie, broken by doc
  ];
  const sessionEntry: SessionEntry = { sessionId: 's1', title: 'cats', updatedAt: `${day}T10:00:00`, order: 1, listed: true };
  const sessionEntry2: SessionEntry = { sessionId: 's2', title: 'dogs', updatedAt: `${day}T10:00:00`, order: 2, listed: true };
  const rows: NewDailyRecord[] = texts.map((content, i) => ({
    day: i < 4 ? day : '2026-04-09',
    id: i < 4 ? i + 1 : i - 3,
    ts: `${i < 4 ? day : '2026-04-09'}T10:0${i}:00`,
    role: i % 2 === 0 ? 'user' : 'assistant',
    content,
    sessionId: i % 3 === 0 ? 's2' : 's1',
    sessionMessageId: i + 1,
  }));

  it('orders hits exactly as the LMDB adapter does on the same rows, filters and ties included', async () => {
    const schema = pg.schema('recall_rank');
    const { store } = open(schema);
    const lmdb = lmdbTwin();
    for (const s of [store, lmdb]) {
      await s.importBatch('u1', { sessions: [sessionEntry, sessionEntry2], daily: rows });
      const state = await s.factsState('u1');
      await s.commitFacts('u1', { generation: 'g1', entries: [], longTerm: { content: 'likes cats\n\ngarden roses', ts: `${day}T09:00:00`, source: 'set' } }, { generation: state.generation });
    }
    const queries: Array<[string, Parameters<RecallStore['rank']>[1]['filters']]> = [
      ['cat', {}],
      ['cat dog', {}],
      ['garden roses cat', {}],
      ['cat', { sessionId: 's1' }],
      ['cat dog roses', { day: '2026-04-09' }],
      ['cat', { roles: ['memory', 'user'] }],
      ['roses', {}],
    ];
    for (const [query, filters] of queries) {
      const q = { terms: queryTerms(query), filters, limit: 5 };
      const fromPg = await store.rank('u1', q);
      const fromLmdb = await lmdb.rank('u1', q);
      expect(fromPg, query).toEqual(fromLmdb);
      expect(fromPg.length, query).toBeGreaterThan(0);
    }
    expect(await store.rebuildIndex('u1')).toBe(await lmdb.rebuildIndex('u1'));
    expect(await store.rank('u1', { terms: queryTerms('cat dog'), filters: {}, limit: 10 })).toEqual(await lmdb.rank('u1', { terms: queryTerms('cat dog'), filters: {}, limit: 10 }));
    // The keyword scans agree too.
    expect(await store.scanDaily('u1', { day: null, keyword: 'CAT', limit: 3 })).toEqual(await lmdb.scanDaily('u1', { day: null, keyword: 'CAT', limit: 3 }));
    expect(await store.dailyWindow('u1', day, 2, 1, 1)).toEqual(await lmdb.dailyWindow('u1', day, 2, 1, 1));
    expect(await store.sessions('u1')).toEqual(await lmdb.sessions('u1'));
  });
});
