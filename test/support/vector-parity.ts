import { expect } from 'vitest';
import { dailyDoc } from '../../src/recall/search/doc-numbers.ts';
import { cosineWith, encodeVector, textHash } from '../../src/recall/search/vector-codec.ts';
import type { RecallStore } from '../../src/recall/storage/recall-store.ts';
import { ALICE, BOB, DAY1, DAY2, factChange, LONG_MS, turn } from '../../src/recall/storage-contract/contract-kit.ts';

/**
 * Vectors stored through the storage port and the order `nearest` must give them: the fallback's
 * rule computed here in JS (the bytes `encodeVector` stores, `cosineWith`, ties by higher id for
 * facts and lower doc for documents). A store passes when it gives exactly that order, so the
 * pgvector path (test/pglite/pgvector.test.ts) and the fallback on a server
 * (test/postgres/recall-vectors.test.ts) give the same ids in the same order for the same vectors.
 *
 * The seed holds what makes orders differ if handled differently: exact ties (one vector for two
 * items), vectors of another dimension (similarity 0, above every negative one), a zero vector.
 */
export const DIMS = 8;

export interface Seeded {
  /** `d:doc` / `f:seq` → the vector stored. */
  vectors: Map<string, Float32Array>;
  /** doc → its day. */
  days: Map<number, string>;
}

/** A deterministic generator (mulberry32). */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function randomVector(next: () => number, dims = DIMS): Float32Array {
  return Float32Array.from({ length: dims }, () => next() * 2 - 1);
}

/** `turns` turns (two rows each, over two days and sessions) and `facts` facts of ALICE, a few rows of BOB, all embedded. */
export async function seedVectors(store: RecallStore, options: { turns: number; facts: number; seed: number }): Promise<Seeded> {
  const next = random(options.seed);
  for (let i = 0; i < options.turns; i++) {
    await turn(store, { sessionId: i % 2 === 0 ? 's1' : 's2', day: i % 3 === 0 ? DAY2 : DAY1, message: `message ${i}`, reply: `reply ${i}` });
  }
  await turn(store, { userId: BOB, message: 'bob asks', reply: 'bob hears' });
  if (options.facts > 0) {
    const f = await factChange(store, ALICE, Array.from({ length: options.facts }, (_, i) => ({ text: `fact number ${i}` })));
    await store.commitFacts(ALICE, f.change, { generation: f.generation });
  }
  const vectors = new Map<string, Float32Array>();
  const days = new Map<number, string>();
  for (const day of [DAY1, DAY2]) for (const r of await store.dailyDay(ALICE, day)) days.set(dailyDoc(r.day, r.id)!, day);
  const jobs = await store.jobs.lease('embed', { limit: 100_000, leaseMs: LONG_MS });
  jobs.sort((a, b) => a.userId.localeCompare(b.userId) || a.payload.item.localeCompare(b.payload.item) || a.payload.id - b.payload.id);
  const byUser = new Map<string, typeof jobs>();
  for (const job of jobs) byUser.set(job.userId, [...(byUser.get(job.userId) ?? []), job]);
  for (const [userId, mine] of byUser) {
    const writes = [];
    let previous: Float32Array | undefined;
    for (const [i, job] of mine.entries()) {
      const { item, id } = job.payload;
      // Every 7th: the previous item's vector (an exact tie); every 11th: another dimension; the 13th: zero.
      const vector = i % 7 === 6 && previous !== undefined ? previous : i % 11 === 10 ? randomVector(next, DIMS - 3) : i === 12 ? new Float32Array(DIMS) : randomVector(next);
      previous = vector;
      const text = (await store.itemText(userId, item, id))!;
      writes.push({ item, id, hash: textHash(text), vector, job });
      if (userId === ALICE) vectors.set(`${item}:${id}`, vector);
    }
    expect(await store.putVectors(userId, writes)).toBe(writes.length);
  }
  return { vectors, days };
}

/** The fallback's order of ALICE's vectors of `item` for `query`, at most `limit`, kept by `keep`. */
export function expectedNearest(seeded: Seeded, item: 'd' | 'f', query: Float32Array, limit: number, keep: (id: number) => boolean = () => true): number[] {
  const q = encodeVector(0, query).subarray(4);
  const unitQuery = new Float32Array(q.length / 4).map((_, i) => q.readFloatLE(i * 4));
  const scored: [number, number][] = [];
  for (const [key, vector] of seeded.vectors) {
    const [kind, id] = [key.slice(0, 1), Number(key.slice(2))];
    if (kind === item && keep(id)) scored.push([id, cosineWith(encodeVector(0, vector), unitQuery)]);
  }
  scored.sort((a, b) => b[1] - a[1] || (item === 'f' ? b[0] - a[0] : a[0] - b[0]));
  return scored.slice(0, limit).map(([id]) => id);
}

/** `nearest` of the store equals the fallback's order for `queries` random queries (the first of another dimension) and an empty one, unfiltered and by day, documents and facts. */
export async function expectFallbackOrder(store: RecallStore, seeded: Seeded, options: { queries: number; seed: number; limit: number }): Promise<void> {
  const next = random(options.seed);
  for (let i = 0; i < options.queries; i++) {
    const query = i === 0 ? randomVector(next, DIMS - 3) : randomVector(next);
    for (const item of ['d', 'f'] as const) {
      const got = await store.nearest(ALICE, { item, vector: query, filters: {}, limit: options.limit });
      expect(got.map((d) => d.id)).toEqual(expectedNearest(seeded, item, query, options.limit));
    }
    const byDay = await store.nearest(ALICE, { item: 'd', vector: query, filters: { day: DAY2 }, limit: options.limit });
    expect(byDay.map((d) => d.id)).toEqual(expectedNearest(seeded, 'd', query, options.limit, (doc) => seeded.days.get(doc) === DAY2));
  }
  // A query of no length: every similarity 0, the ties' order alone.
  for (const item of ['d', 'f'] as const) {
    const got = await store.nearest(ALICE, { item, vector: new Float32Array(0), filters: {}, limit: options.limit });
    expect(got.map((d) => d.id)).toEqual(expectedNearest(seeded, item, new Float32Array(0), options.limit));
  }
}
