import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresStore } from '../../src/memory/postgres/index.ts';
import { createPostgresRecallStore } from '../../src/postgres.ts';
import { createRecall, type Recall, type RecallStore } from '../../src/recall/index.ts';
import { conceptVector, startEmbeddingsStub, type EmbeddingsStub } from '../support/embeddings-stub.ts';
import { unit } from '../../src/recall/search/vector-codec.ts';
import { pglitePool } from '../support/pglite-pool.ts';
import { openRecall, ZONE, type RecallFixture } from '../support/recall-fixture.ts';
import { distractors, EVIDENCE, QUESTIONS, type FixtureMessage } from '../support/retrieval-fixture.ts';

/**
 * Hybrid search (BM25 fused with vectors by the one RRF of search/hybrid-search.ts) on the
 * PostgreSQL adapter with pgvector (PGlite with the real extension) beside LMDB, on the same
 * rows, the same loopback embeddings and the same questions: the same hits in the same order.
 * The stub's vectors are bags of hashed words, so many similarities are equal in exact
 * arithmetic: pgvector's `<=>` alone (single precision) orders those an ulp apart either way;
 * the adapter's rescoring of its candidates with the fallback's arithmetic keeps LMDB's order.
 */
const U = 'quality';
const DAY = '2026-04-08';
const ORDER: FixtureMessage[] = [...EVIDENCE, ...distractors(300)];

let db: PGlite;
let stub: EmbeddingsStub;
beforeAll(async () => {
  db = await PGlite.create({ extensions: { vector } });
  stub = await startEmbeddingsStub();
}, 120_000);
afterAll(async () => {
  await stub.close();
  await db.close();
});

async function importRows(store: RecallStore, byRow: Map<string, string>): Promise<void> {
  const perSession = new Map<string, number>();
  const daily = ORDER.map((m) => {
    const n = (perSession.get(m.session) ?? 0) + 1;
    perSession.set(m.session, n);
    byRow.set(`${m.session}#${n}`, m.id);
    return { day: DAY, ts: `${DAY}T10:00:00`, role: 'user' as const, content: m.text, sessionId: m.session, sessionMessageId: n };
  });
  await store.importBatch(U, { daily });
  await store.importBatch(U, { complete: true });
}

describe('hybrid search on PostgreSQL with pgvector', () => {
  it('finds what LMDB finds, in the same order', async () => {
    const embeddings = { baseURL: stub.baseURL, apiKey: 'k', model: 'stub-embed', retryBaseMs: 1, requestsPerMinute: 60_000, burst: 1000 };
    const lmdb: RecallFixture = openRecall({ embeddings });
    const pool = pglitePool(db);
    const transcripts = createPostgresStore({ pool, schema: 'hybrid' });
    const store = createPostgresRecallStore({ transcripts, embeddings: true });
    const pg: Recall = createRecall({ timeZone: ZONE, store, embeddings });
    try {
      const rows = new Map<string, string>();
      await importRows(lmdb.store, rows);
      await importRows(store, rows);
      await lmdb.recall.embeddingsIdle();
      await pg.embeddingsIdle();
      const found = async (recall: Recall) => {
        const out: string[][] = [];
        for (const q of QUESTIONS) {
          const answer = await recall.search({ userId: U, query: q.question, limit: 10 });
          expect(answer.ranking).toBe('hybrid');
          out.push(answer.items.map((h) => rows.get(`${h.sessionId}#${h.messageId}`)!));
        }
        return out;
      };
      const [a, b] = [await found(lmdb.recall), await found(pg)];
      const recallAt10 = (hits: string[][]) => QUESTIONS.reduce((n, q, i) => n + q.evidence.filter((e) => hits[i]!.includes(e)).length, 0);
      expect(recallAt10(b)).toBe(recallAt10(a));
      expect(b).toEqual(a);
      // The vector side alone, deeper than hybrid asks: the same ids, order and similarities.
      for (const q of QUESTIONS) {
        const v = unit(Float32Array.from(conceptVector(q.question)));
        expect(await store.nearest(U, { item: 'd', vector: v, filters: {}, limit: 100 })).toEqual(await lmdb.store.nearest(U, { item: 'd', vector: v, filters: {}, limit: 100 }));
      }
    } finally {
      await pg.close();
      await store.close();
      await transcripts.close();
      await pool.end();
      await lmdb.close();
    }
  }, 300_000);
});
