import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { dailyDoc, longTermDoc } from '../search/doc-numbers.ts';
import { dailyRowText } from '../search/documents.ts';
import { textHash, unit } from '../search/vector-codec.ts';
import { jobKey } from '../storage/job-queue.ts';
import { type MakeRecallStore, LONG_MS, type Ctx, withStore, ALICE, BOB, DAY1, DAY2, turn, factChange } from './contract-kit.ts';

/** The embedding cases of the conformance suite (recall-store-contract.ts): a store opened with embeddings. */
export function describeEmbeddingCases(make: MakeRecallStore): void {
  const run = (body: (ctx: Ctx) => Promise<void>) => () => withStore(make, true, body);
  const vec = (...xs: number[]) => unit(new Float32Array(xs));
  const cosine = (a: Float32Array, b: Float32Array) => {
    const [ua, ub] = [unit(a), unit(b)];
    return ua.reduce((s, x, i) => s + x * ub[i]!, 0);
  };

  describe('embeddings', () => {
    it(
      'stored rows and facts queue their embedding jobs; itemText is the text to embed',
      run(async ({ store }) => {
        await turn(store, { message: 'embed me', reply: 'embedded', toolCalls: [{ name: 'remember_note', input: 'x', output: 'y' }] });
        const facts = await factChange(store, ALICE, [{ text: 'Alice likes embeddings' }]);
        await store.commitFacts(ALICE, facts.change, { generation: facts.generation });
        const rows = await store.dailyDay(ALICE, DAY1);
        const jobs = await store.jobs.lease('embed', { limit: 10, leaseMs: LONG_MS });
        const items = jobs.map((j) => `${j.payload.item}:${j.payload.id}`).sort();
        expect(items).toEqual([...rows.map((r) => `d:${dailyDoc(r.day, r.id)}`), 'f:1'].sort());
        for (const j of jobs) expect(j.key).toBe(jobKey({ kind: 'embed', userId: ALICE, payload: j.payload }));
        for (const r of rows) expect(await store.itemText(ALICE, 'd', dailyDoc(r.day, r.id)!)).toBe(dailyRowText(r));
        expect(await store.itemText(ALICE, 'f', 1)).toBe('Alice likes embeddings');
        expect(await store.itemText(ALICE, 'd', dailyDoc(DAY2, 1)!)).toBeUndefined();
      }),
    );

    it(
      'putVectors stores only under a held lease and the current text; nearest ranks by cosine with filters',
      run(async ({ store }) => {
        await turn(store, { message: 'north', reply: 'east' });
        await turn(store, { sessionId: 's2', message: 'south', reply: 'west', day: DAY2 });
        const jobs = await store.jobs.lease('embed', { limit: 10, leaseMs: LONG_MS });
        expect(jobs).toHaveLength(4);
        const vectors: Record<string, Float32Array> = { north: vec(1, 0, 0), east: vec(0.6, 0.8, 0), south: vec(-1, 0.1, 0), west: vec(0, 0, 1) };
        const writes = [];
        for (const job of jobs) {
          const text = (await store.itemText(ALICE, 'd', job.payload.id))!;
          writes.push({ item: 'd' as const, id: job.payload.id, hash: textHash(text), vector: vectors[text]!, job });
        }
        const [first, ...rest] = writes;
        // A wrong hash (the text embedded is not the item's) or a lease not held: nothing stored.
        expect(await store.putVectors(ALICE, [{ ...first!, hash: (first!.hash + 1) >>> 0 }])).toBe(0);
        expect(await store.putVectors(ALICE, [{ ...first!, job: { ...first!.job, token: 'not-a-lease' } }])).toBe(0);
        expect((await store.jobs.counts('embed', ALICE)).pending).toBe(4);
        expect(await store.putVectors(ALICE, [first!, ...rest])).toBe(4);
        expect((await store.jobs.counts('embed', ALICE)).pending).toBe(0);
        // Stored once: the same write again is no longer held.
        expect(await store.putVectors(ALICE, [first!])).toBe(0);

        const query = vec(1, 0.2, 0);
        const rows = [...(await store.dailyDay(ALICE, DAY1)), ...(await store.dailyDay(ALICE, DAY2))];
        const expected = rows
          .map((r) => ({ id: dailyDoc(r.day, r.id)!, similarity: cosine(vectors[r.content]!, query), row: r }))
          .sort((a, b) => b.similarity - a.similarity);
        const near = await store.nearest(ALICE, { item: 'd', vector: query, filters: {}, limit: 3 });
        expect(near.map((d) => d.id)).toEqual(expected.slice(0, 3).map((d) => d.id));
        near.forEach((d, i) => expect(d.similarity).toBeCloseTo(expected[i]!.similarity, 5));
        expect(near[0]!.row).toMatchObject({ content: 'north', day: DAY1, sessionId: 's1' });
        const filtered = await store.nearest(ALICE, { item: 'd', vector: query, filters: { day: DAY2 }, limit: 10 });
        expect(filtered.map((d) => d.id)).toEqual(expected.filter((d) => d.row.day === DAY2).map((d) => d.id));
        const roles = await store.nearest(ALICE, { item: 'd', vector: query, filters: { roles: ['user'], sessionId: 's1' }, limit: 10 });
        expect(roles.map((d) => d.row?.content)).toEqual(['north']);
        expect(await store.nearest(BOB, { item: 'd', vector: query, filters: {}, limit: 10 })).toEqual([]);
      }),
    );

    it(
      'nearest over current facts; a fact ended is no longer found',
      run(async ({ store }) => {
        const a = await factChange(store, ALICE, [{ text: 'Alice drinks tea', key: 'drink' }, { text: 'Alice has a dog' }]);
        await store.commitFacts(ALICE, a.change, { generation: a.generation });
        const jobs = await store.jobs.lease('embed', { limit: 10, leaseMs: LONG_MS });
        const v: Record<number, Float32Array> = { 1: vec(1, 0), 2: vec(0, 1) };
        const writes = await Promise.all(
          jobs.map(async (job) => ({ item: 'f' as const, id: job.payload.id, hash: textHash((await store.itemText(ALICE, 'f', job.payload.id))!), vector: v[job.payload.id]!, job })),
        );
        expect(await store.putVectors(ALICE, writes)).toBe(2);
        const near = await store.nearest(ALICE, { item: 'f', vector: vec(1, 0.1), filters: {}, limit: 5 });
        expect(near.map((d) => d.id)).toEqual([1, 2]);
        expect(near[0]!.similarity).toBeCloseTo(cosine(v[1]!, vec(1, 0.1)), 5);
        const b = await factChange(store, ALICE, [{ text: 'Alice drinks coffee', key: 'drink' }], '2026-04-08T03:00:00.000Z');
        await store.commitFacts(ALICE, b.change, { generation: b.generation });
        expect((await store.nearest(ALICE, { item: 'f', vector: vec(1, 0.1), filters: {}, limit: 5 })).map((d) => d.id)).not.toContain(1);
      }),
    );

    it(
      'a long-term line rewritten queues its embedding again: the older lease and text store nothing',
      run(async ({ store }) => {
        const write = async (content: string) => {
          const generation = await store.factsGeneration(ALICE);
          await store.commitFacts(ALICE, { generation: randomUUID(), entries: [], longTerm: { content, ts: `${DAY1}T10:00:00`, source: 'set' } }, { generation });
        };
        await write('likes green tea');
        const [old] = await store.jobs.lease('embed', { limit: 10, leaseMs: LONG_MS });
        expect(old!.payload).toEqual({ item: 'd', id: longTermDoc(1) });
        const oldText = (await store.itemText(ALICE, 'd', old!.payload.id))!;
        expect(oldText).toBe('likes green tea');
        await write('likes black coffee');
        expect(await store.itemText(ALICE, 'd', longTermDoc(1)!)).toBe('likes black coffee');
        expect(await store.putVectors(ALICE, [{ item: 'd', id: longTermDoc(1)!, hash: textHash(oldText), vector: vec(1, 0), job: old! }])).toBe(0);
        const [fresh] = await store.jobs.lease('embed', { limit: 10, leaseMs: LONG_MS });
        expect(fresh!.payload).toEqual({ item: 'd', id: longTermDoc(1) });
        // The new lease with the old text's hash stores nothing either.
        expect(await store.putVectors(ALICE, [{ item: 'd', id: longTermDoc(1)!, hash: textHash(oldText), vector: vec(1, 0), job: fresh! }])).toBe(0);
        expect(await store.putVectors(ALICE, [{ item: 'd', id: longTermDoc(1)!, hash: textHash('likes black coffee'), vector: vec(1, 0), job: fresh! }])).toBe(1);
        expect((await store.nearest(ALICE, { item: 'd', vector: vec(1, 0), filters: {}, limit: 5 })).map((d) => d.id)).toEqual([longTermDoc(1)]);
      }),
    );

    it(
      "a deleted session's rows lose their vectors and embedding jobs",
      run(async ({ store }) => {
        await turn(store, { message: 'north', reply: 'east' });
        await turn(store, { sessionId: 's2', message: 'south', reply: 'west' });
        const jobs = await store.jobs.lease('embed', { limit: 10, leaseMs: LONG_MS });
        const texts = await Promise.all(jobs.map(async (job) => (await store.itemText(ALICE, 'd', job.payload.id))!));
        const mine = jobs.filter((_, i) => ['north', 'east'].includes(texts[i]!));
        const writes = mine.map((job, i) => ({ item: 'd' as const, id: job.payload.id, hash: textHash(texts[jobs.indexOf(job)]!), vector: vec(1, i), job }));
        expect(await store.putVectors(ALICE, writes)).toBe(2);
        expect((await store.jobs.counts('embed', ALICE)).pending).toBe(2);
        await store.deleteSession(ALICE, 's1');
        expect(await store.nearest(ALICE, { item: 'd', vector: vec(1, 0), filters: {}, limit: 10 })).toEqual([]);
        await store.deleteSession(ALICE, 's2');
        expect(await store.jobs.counts('embed', ALICE)).toEqual({ pending: 0, retrying: 0, dead: 0 });
        for (const job of jobs) expect(await store.itemText(ALICE, 'd', job.payload.id)).toBeUndefined();
      }),
    );

    it(
      'backfillEmbeddings leaves every item without a vector queued, once',
      run(async ({ store }) => {
        await turn(store, { message: 'alpha', reply: 'beta' });
        await store.backfillEmbeddings(ALICE);
        const counts = await store.jobs.counts('embed', ALICE);
        expect(counts.pending).toBe(2);
        await store.backfillEmbeddings(ALICE);
        expect(await store.jobs.counts('embed', ALICE)).toEqual(counts);
        await store.backfillEmbeddings(BOB);
        expect(await store.jobs.counts('embed', BOB)).toEqual({ pending: 0, retrying: 0, dead: 0 });
        // Imported rows (kept as given) are queued by the backfill if their import did not queue them.
        await store.importBatch(BOB, {
          daily: [
            { day: DAY1, id: 3, ts: `${DAY1}T08:00:00`, role: 'user', content: 'imported one', sessionId: null, sessionMessageId: null },
            { day: DAY1, id: 4, ts: `${DAY1}T08:00:01`, role: 'assistant', content: 'imported two', sessionId: null, sessionMessageId: null },
          ],
        });
        await store.backfillEmbeddings(BOB);
        const queued = await store.jobs.lease('embed', { limit: 10, leaseMs: LONG_MS });
        expect(queued.filter((j) => j.userId === BOB).map((j) => j.payload.id).sort()).toEqual([dailyDoc(DAY1, 3), dailyDoc(DAY1, 4)]);
      }),
    );

    it(
      "an erasure removes the user's vectors and embedding jobs",
      run(async ({ store }) => {
        await turn(store, { message: 'north', reply: 'east' });
        const jobs = await store.jobs.lease('embed', { limit: 10, leaseMs: LONG_MS });
        const writes = await Promise.all(
          jobs.map(async (job) => ({ item: 'd' as const, id: job.payload.id, hash: textHash((await store.itemText(ALICE, 'd', job.payload.id))!), vector: vec(1, job.payload.id % 7), job })),
        );
        expect(await store.putVectors(ALICE, writes.slice(0, 1))).toBe(1);
        await store.eraseUser(ALICE);
        expect(await store.nearest(ALICE, { item: 'd', vector: vec(1, 0), filters: {}, limit: 10 })).toEqual([]);
        expect(await store.jobs.counts('embed', ALICE)).toEqual({ pending: 0, retrying: 0, dead: 0 });
        expect(await store.putVectors(ALICE, writes.slice(1))).toBe(0);
      }),
    );
  });
}
