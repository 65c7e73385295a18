import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { itLmdb, onPostgres, openRecall, type RecallFixture } from '../support/recall-fixture.ts';
import { dropSchema, freshSchema } from '../support/postgres-server.ts';
import { conceptVector, startEmbeddingsStub, type EmbeddingsStub } from '../support/embeddings-stub.ts';
import { vectorRanking } from '../../src/recall/storage/lmdb/embeddings/vector-query.ts';
import { unit } from '../../src/recall/search/vector-codec.ts';
import { createSearchPool } from '../../src/recall/index.ts';
import { dailyDoc } from '../../src/recall/search/doc-numbers.ts';
import type { EmbeddingsOptions } from '../../src/recall/embeddings/embeddings-options.ts';
import { openRecallDbs } from '../../src/recall/storage/lmdb/recall-dbs.ts';
import { tokenBucket } from '../../src/recall/embeddings/rate-limiter.ts';
import { reciprocalRankFusion } from '../../src/recall/search/rrf.ts';
import { startRuntime } from '../../src/runtime.ts';
import { exit, whereis } from '../../src/otp/index.ts';
import { embedDrainName } from '../../supervisors/recall.ts';

let fx: RecallFixture | undefined;
let stub: EmbeddingsStub | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await fx?.close();
  fx = undefined;
  await stub?.close();
  stub = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A directory that outlives one fixture (reopened with other options). */
function keptDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'mnemo-embed-'));
  dirs.push(d);
  return d;
}

const U = 'u1';

function embeddingsFor(s: EmbeddingsStub, extra: Partial<EmbeddingsOptions> = {}): EmbeddingsOptions {
  return { baseURL: s.baseURL, apiKey: 'test', model: 'stub-embed', retryBaseMs: 1, requestsPerMinute: 60_000, burst: 1000, ...extra };
}

async function say(sessionId: string, ...messages: string[]): Promise<void> {
  for (const message of messages) await fx!.recall.chat({ userId: U, sessionId, message });
}

/** The user's vectors (of documents and facts) and embedding jobs, through the storage port. */
async function counts(f: RecallFixture, userId: string) {
  const any = unit(Float32Array.from(conceptVector('anything at all')));
  const near = async (item: 'd' | 'f') => (await f.store.nearest(userId, { item, vector: any, filters: {}, limit: 100_000 })).length;
  const jobs = await f.store.jobs.counts('embed', userId);
  return { vectors: (await near('d')) + (await near('f')), queue: jobs.pending, dead: jobs.dead };
}

describe('hybrid recall with embeddings', () => {
  it('finds a paraphrase that shares no word with its row through vectors, which BM25 alone misses', async () => {
    stub = await startEmbeddingsStub();
    const dir = keptDir();
    fx = openRecall({ dir, embeddings: embeddingsFor(stub) });
    await say('s1', 'I parked my car near the station', 'The weather in spring is lovely');
    await say('s2', 'My physician recommends more walking');
    await fx.recall.embeddingsIdle();
    const hitsResult = await fx.recall.search({ userId: U, query: 'automobile terminal' });
    const hits = hitsResult.items;
    expect(hitsResult.ranking).toBe('hybrid');
    expect(hitsResult.pendingEmbeddings).toBe(0);
    expect(hits[0]).toMatchObject({ sessionId: 's1', messageId: 1, source: 'session', role: 'user' });
    expect(hits[0]!.snippet).toContain('parked my car');
    // A query that BM25 matches still ranks its row first, and filters apply to both sides.
    const doctor = (await fx.recall.search({ userId: U, query: 'which doctor said walking', sessionId: 's2' })).items;
    expect(doctor[0]).toMatchObject({ sessionId: 's2', messageId: 1 });
    expect(doctor.every((h) => h.sessionId === 's2')).toBe(true);
    // The same rows without embeddings: BM25 finds nothing for the paraphrase, and says BM25.
    await fx.close();
    const again = openRecall({ dir });
    fx = again;
    const bm25Result = await again.recall.search({ userId: U, query: 'automobile terminal' });
    const bm25 = bm25Result.items;
    expect(bm25).toEqual([]);
    expect(bm25Result.ranking).toBe('bm25');
  });

  it('the model\'s search_memory tool ranks hybrid too and says so', async () => {
    stub = await startEmbeddingsStub();
    fx = openRecall({ embeddings: embeddingsFor(stub) });
    await say('s1', 'I parked my car near the station');
    await fx.recall.embeddingsIdle();
    const tool = fx.recall.memoryTools(U, 's1').find((t) => t.name === 'search_memory')!;
    const out = String(await tool.execute({ query: 'automobile terminal' }, {} as never));
    expect(out).toMatch(/会话 s1 #1 user（相关度 [0-9.]+）：I parked my car/); // the default language, zh
    expect(out.split('\n').at(-1)).toBe('(ranking: hybrid)');
  });

  it('without an endpoint is BM25 alone, says so, and queues nothing', async () => {
    fx = openRecall();
    await say('s1', 'I parked my car near the station');
    const hitsResult = await fx.recall.search({ userId: U, query: 'car station' });
    const hits = hitsResult.items;
    expect(hitsResult.ranking).toBe('bm25');
    expect(hitsResult.pendingEmbeddings).toBe(0);
    expect(hits[0]).toMatchObject({ sessionId: 's1', messageId: 1 });
    expect(await fx.recall.embeddingsStatus()).toEqual({ configured: false });
    expect(await counts(fx, U)).toEqual({ vectors: 0, queue: 0, dead: 0 });
  });

  it('falls back to BM25 and says why when the query cannot be embedded', async () => {
    stub = await startEmbeddingsStub();
    fx = openRecall({ embeddings: embeddingsFor(stub) });
    await say('s1', 'I parked my car near the station');
    await fx.recall.embeddingsIdle();
    stub.failNext(1, 500);
    const hitsResult = await fx.recall.search({ userId: U, query: 'car station' });
    const hits = hitsResult.items;
    expect(hitsResult.ranking).toBe('bm25');
    expect(hitsResult.embeddingsError).toMatch(/500/);
    expect(hits[0]).toMatchObject({ sessionId: 's1', messageId: 1 });
  });

  it('answers BM25 when the endpoint does not answer the query in queryTimeoutMs', async () => {
    stub = await startEmbeddingsStub();
    fx = openRecall({ embeddings: embeddingsFor(stub, { queryTimeoutMs: 50 }) });
    await say('s1', 'I parked my car near the station');
    await fx.recall.embeddingsIdle();
    stub.hold();
    const hitsResult = await fx.recall.search({ userId: U, query: 'car station' });
    const hits = hitsResult.items;
    expect(hitsResult.ranking).toBe('bm25');
    expect(hitsResult.embeddingsError).toBeDefined();
    expect(hits[0]).toMatchObject({ sessionId: 's1', messageId: 1 });
    stub.release();
  });

  it('embeds each row once in the background, retries a 429 and keeps going', async () => {
    stub = await startEmbeddingsStub();
    stub.failNext(1, 429);
    fx = openRecall({ embeddings: embeddingsFor(stub) });
    await say('s1', 'first message about dogs', 'second message about houses');
    await fx.recall.embeddingsIdle();
    const status = await fx.recall.embeddingsStatus(U);
    // Two turns: four rows (user and offline reply), each stored once; one request refused.
    expect(status).toMatchObject({ configured: true, pending: 0, userPending: 0, dead: 0, failures: 1, draining: true });
    expect(await counts(fx, U)).toEqual({ vectors: 4, queue: 0, dead: 0 });
    expect(stub.requests).toBe(stub.answered + 1);
  });

  it('gives a row up after maxAttempts and counts it as a dead letter', async () => {
    stub = await startEmbeddingsStub();
    stub.failNext(1_000, 400);
    fx = openRecall({ embeddings: embeddingsFor(stub, { maxAttempts: 2 }) });
    await say('s1', 'a message that never embeds');
    await fx.recall.embeddingsIdle();
    expect(await fx.recall.embeddingsStatus()).toMatchObject({ pending: 0, dead: 2, embedded: 0 });
    expect(await counts(fx, U)).toEqual({ vectors: 0, queue: 0, dead: 2 });
    // BM25 still finds it.
    stub.failNext(0);
    expect(((await fx.recall.search({ userId: U, query: 'never embeds' })).items)[0]).toMatchObject({ sessionId: 's1', messageId: 1 });
  });

  it('backfills rows written before embeddings were turned on, at the first query', async () => {
    const dir = keptDir();
    fx = openRecall({ dir });
    await say('s1', 'I parked my car near the station');
    await fx.close();
    stub = await startEmbeddingsStub();
    fx = openRecall({ dir, embeddings: embeddingsFor(stub) });
    const firstResult = await fx.recall.search({ userId: U, query: 'automobile terminal' });
    const first = firstResult.items;
    expect(firstResult.ranking).toBe('hybrid');
    await fx.recall.embeddingsIdle();
    const hitsResult = await fx.recall.search({ userId: U, query: 'automobile terminal' });
    const hits = hitsResult.items;
    expect(hits[0]).toMatchObject({ sessionId: 's1', messageId: 1 });
    expect(await counts(fx, U)).toMatchObject({ vectors: 2, queue: 0 });
  });

  it('deleting a session and erasing a user remove their vectors and queue entries', async () => {
    stub = await startEmbeddingsStub();
    fx = openRecall({ embeddings: embeddingsFor(stub) });
    await say('s1', 'I parked my car near the station');
    await say('s2', 'My dog loves the park');
    await fx.recall.chat({ userId: 'u2', sessionId: 'x', message: 'another user entirely' });
    await fx.recall.embeddingsIdle();
    expect((await counts(fx, U)).vectors).toBe(4);
    // Searched once before (the user's vectors are now cached in memory): the deletion must reach the cache too.
    expect(((await fx.recall.search({ userId: U, query: 'automobile terminal' })).items)[0]).toMatchObject({ sessionId: 's1' });
    await fx.recall.deleteSession(U, 's1');
    expect((await counts(fx, U)).vectors).toBe(2);
    expect(((await fx.recall.search({ userId: U, query: 'automobile terminal' })).items).some((h) => h.sessionId === 's1')).toBe(false);
    stub.hold();
    await say('s3', 'queued but not yet embedded');
    expect((await counts(fx, U)).queue).toBeGreaterThan(0);
    await fx.recall.eraseUser(U);
    expect(await counts(fx, U)).toEqual({ vectors: 0, queue: 0, dead: 0 });
    expect((await counts(fx, 'u2')).vectors).toBe(2);
    stub.release();
    await fx.recall.embeddingsIdle();
    expect(await counts(fx, U)).toEqual({ vectors: 0, queue: 0, dead: 0 });
  });

  it('a batch in flight when its user is erased stores nothing of theirs when it is answered; the other user’s rows are embedded', async () => {
    stub = await startEmbeddingsStub();
    fx = openRecall({ embeddings: embeddingsFor(stub) });
    stub.hold();
    await say('s1', 'I parked my car near the station');
    // The drain's request holding the user's row is out, and answered only after the erasure.
    await stub.waitForRequests(1);
    await fx.recall.chat({ userId: 'u2', sessionId: 'x', message: 'another user entirely' });
    await fx.recall.eraseUser(U);
    stub.release();
    await fx.recall.embeddingsIdle();
    expect(stub.answered).toBeGreaterThan(0);
    expect(await counts(fx, U)).toEqual({ vectors: 0, queue: 0, dead: 0 });
    expect(await counts(fx, 'u2')).toEqual({ vectors: 2, queue: 0, dead: 0 });
  });

  it('finds an imported session row that no daily file holds, by its words and by a paraphrase', async () => {
    stub = await startEmbeddingsStub();
    const src = keptDir();
    mkdirSync(join(src, 'u', 'sessions'), { recursive: true });
    writeFileSync(join(src, 'u', 'conversations.json'), JSON.stringify({ s: { title: 'car', updated_at: '2026-04-06T10:00:00' } }));
    const rows = [
      { ts: '2026-04-06T10:00:00', role: 'user', content: 'I parked my car near the station', tags: ['session'], meta: {}, message_id: 1 },
      { ts: '2026-04-06T10:00:01', role: 'assistant', content: 'My dog loves the park', tags: ['session'], meta: {}, message_id: 2 },
    ];
    writeFileSync(join(src, 'u', 'sessions', 's.jsonl'), rows.map((r) => `${JSON.stringify(r)}\n`).join(''));
    fx = openRecall({ embeddings: embeddingsFor(stub) });
    await fx.recall.importDemoFolder(src);
    const byWordsResult = await fx.recall.search({ userId: 'u', query: 'car station' });
    const byWords = byWordsResult.items;
    expect(byWordsResult.ranking).toBe('hybrid');
    expect(byWords[0]).toMatchObject({ sessionId: 's', messageId: 1, source: 'session' });
    await fx.recall.embeddingsIdle();
    expect(await counts(fx, 'u')).toEqual({ vectors: 2, queue: 0, dead: 0 });
    const byMeaning = (await fx.recall.search({ userId: 'u', query: 'automobile terminal', roles: ['user'] })).items;
    expect(byMeaning.map((h) => [h.source, h.sessionId, h.messageId])).toEqual([['session', 's', 1]]);
    await fx.recall.deleteSession('u', 's');
    expect(await counts(fx, 'u')).toEqual({ vectors: 0, queue: 0, dead: 0 });
  });

  it('ranks long-term facts by their vectors too: a paraphrase finds its fact', async () => {
    stub = await startEmbeddingsStub();
    const dir = keptDir();
    fx = openRecall({ dir, embeddings: embeddingsFor(stub) });
    await fx.recall.remember(U, { text: 'Allergic to peanuts' });
    await fx.recall.remember(U, { text: 'Lives in a small flat in Porto' });
    await fx.recall.remember(U, { text: 'Prefers tea over coffee' });
    await fx.recall.embeddingsIdle();
    const ranked = await fx.recall.rankMemory(U, 'groundnut intolerance');
    expect(ranked[0]!.entry.text).toBe('Allergic to peanuts');
    expect(ranked[0]!.score).toBeGreaterThan(0);
    await fx.close();
    fx = openRecall({ dir });
    const bm25 = await fx.recall.rankMemory(U, 'groundnut intolerance');
    expect(bm25.every((r) => r.score === 0)).toBe(true);
  });
});

describe('the parts', () => {
  itLmdb('a vector scan on the search pool answers what the inline scan does', async () => {
    stub = await startEmbeddingsStub();
    fx = openRecall({ embeddings: embeddingsFor(stub) });
    await say('s1', 'I parked my car near the station', 'My dog loves the park');
    await fx.recall.embeddingsIdle();
    const dbs = openRecallDbs(fx.env);
    const query = unit(Float32Array.from(conceptVector('automobile terminal')));
    const inline = vectorRanking({ vectors: dbs.embed.vectors, daily: dbs.daily, longTerm: dbs.longTerm, sessionDocs: dbs.search.sessionDocs }, U, query, {}, 10);
    const pool = createSearchPool({ maxThreads: 1 });
    try {
      const pooled = await pool.run({ kind: 'vector', path: dbs.path, userId: U, query: [...query], filters: {}, n: 10 });
      expect(pooled).toEqual(inline);
      expect(inline[0]![0]).toBe(dailyDoc('2026-04-08', 1));
    } finally {
      await pool.close();
    }
  });

  it('reciprocal rank fusion puts a document both rankings hold above one only one ranks first', () => {
    const fused = reciprocalRankFusion([
      ['a', 'b', 'c'],
      ['d', 'b', 'a'],
    ]);
    expect(fused.map(([id]) => id)).toEqual(['a', 'b', 'd', 'c']);
    expect(fused[0]![1]).toBeCloseTo(1 / 61 + 1 / 63);
  });

  it('the token bucket lets a burst through, then spaces requests by the rate', async () => {
    let now = 0;
    const slept: number[] = [];
    const bucket = tokenBucket(60, 2, {
      now: () => now,
      sleep: async (ms) => {
        slept.push(ms);
        now += ms;
      },
    });
    await bucket.take();
    await bucket.take();
    expect(slept).toEqual([]);
    await bucket.take();
    await bucket.take();
    expect(slept).toEqual([1000, 1000]);
  });
});

describe('the supervised drain in a runtime', () => {
  it('restarts after its process is killed and drains what was written meanwhile', async () => {
    stub = await startEmbeddingsStub();
    const dir = keptDir();
    const schema = freshSchema('recall_drain');
    const storage = onPostgres ? { storage: { postgres: process.env['MNEMO_PG_URL']!, schema } } : { dataDir: dir, lmdb: { noSync: true } };
    const runtime = await startRuntime({ ...storage, recall: { pool: false, embeddings: embeddingsFor(stub) } });
    try {
      await runtime.recall.chat({ userId: U, sessionId: 's1', message: 'I parked my car near the station' });
      await runtime.recall.embeddingsIdle();
      const before = whereis(embedDrainName(runtime.name))!;
      expect(before).toBeDefined();
      stub.hold();
      await runtime.recall.chat({ userId: U, sessionId: 's1', message: 'My dog loves the park' });
      exit(before, 'kill');
      stub.release();
      for (let i = 0; i < 200 && (whereis(embedDrainName(runtime.name)) ?? before) === before; i++) await new Promise((r) => setTimeout(r, 5));
      expect(whereis(embedDrainName(runtime.name))).not.toBe(before);
      await runtime.recall.embeddingsIdle();
      expect(await runtime.recall.embeddingsStatus(U)).toMatchObject({ pending: 0, dead: 0, draining: true });
      const hitsResult = await runtime.recall.search({ userId: U, query: 'puppy' });
      const hits = hitsResult.items;
      expect(hitsResult.ranking).toBe('hybrid');
      expect(hits[0]).toMatchObject({ sessionId: 's1', messageId: 3 });
    } finally {
      await runtime.stop();
      if (onPostgres) await dropSchema(process.env['MNEMO_PG_URL']!, schema);
    }
  });
});
