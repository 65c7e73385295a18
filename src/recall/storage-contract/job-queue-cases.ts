import { describe, expect, it } from 'vitest';
import { jobKey, type JobKind, type NewJob } from '../storage/job-queue.ts';
import type { RecallStore } from '../storage/recall-store.ts';
import { type MakeRecallStore, SHORT_MS, LONG_MS, type Ctx, withStore, ALICE, BOB, factChange, expectStale, errorOf } from './contract-kit.ts';

/** The job queue's cases of the conformance suite (recall-store-contract.ts): job-queue.ts's promises. */
export function describeJobQueueCases(make: MakeRecallStore): void {
  const run = (body: (ctx: Ctx) => Promise<void>) => () => withStore(make, false, body);
  const summarize = (userId: string, sessionId: string, incarnation?: string): NewJob => ({
    kind: 'summarize',
    userId,
    payload: { sessionId, ...(incarnation === undefined ? {} : { incarnation }) },
  });
  const leaseAll = <K extends JobKind>(store: RecallStore, kind: K, leaseMs = LONG_MS) => store.jobs.lease(kind, { limit: 100, leaseMs });

  describe('job queue', () => {
    it(
      'leases due jobs once, distinct, with a token; nothing while they are held',
      run(async ({ store }) => {
        expect(await store.jobs.nextDue('summarize')).toBeUndefined();
        await store.jobs.enqueue([summarize(ALICE, 's1'), summarize(ALICE, 's2'), summarize(BOB, 's1')]);
        expect(await store.jobs.nextDue('summarize')).toBe(0);
        expect(await store.jobs.counts('summarize')).toEqual({ pending: 3, retrying: 0, dead: 0 });
        expect(await store.jobs.counts('summarize', ALICE)).toEqual({ pending: 2, retrying: 0, dead: 0 });
        expect(await store.jobs.counts('extract')).toEqual({ pending: 0, retrying: 0, dead: 0 });
        const two = await store.jobs.lease('summarize', { limit: 2, leaseMs: LONG_MS });
        expect(two).toHaveLength(2);
        const third = await leaseAll(store, 'summarize');
        expect(third).toHaveLength(1);
        const all = [...two, ...third];
        expect(new Set(all.map((j) => `${j.userId}/${j.key}`)).size).toBe(3);
        expect(new Set(all.map((j) => j.token)).size).toBe(3);
        for (const j of all) {
          expect(j).toMatchObject({ kind: 'summarize', attempts: 0 });
          expect(j.key).toBe(jobKey({ kind: 'summarize', userId: j.userId, payload: j.payload }));
          expect(typeof j.queuedAt).toBe('string');
          expect(Number.isNaN(Date.parse(j.queuedAt))).toBe(false);
        }
        expect(await leaseAll(store, 'summarize')).toEqual([]);
        expect(await leaseAll(store, 'extract')).toEqual([]);
        for (const j of all) await store.jobs.complete(j);
        expect(await store.jobs.counts('summarize')).toEqual({ pending: 0, retrying: 0, dead: 0 });
        expect(await store.jobs.nextDue('summarize')).toBeUndefined();
      }),
    );

    it(
      'a lease past its expiry is taken over; the old token completes and fails nothing',
      run(async ({ store, pass }) => {
        await store.jobs.enqueue([summarize(ALICE, 's1')]);
        const [old] = await store.jobs.lease('summarize', { limit: 1, leaseMs: SHORT_MS });
        await pass(SHORT_MS);
        const [taken] = await leaseAll(store, 'summarize');
        expect(taken).toMatchObject({ userId: ALICE, key: 's1' });
        expect(taken!.token).not.toBe(old!.token);
        // The lost lease's effects and outcomes store nothing.
        const facts = await factChange(store, ALICE, [{ text: 'from a lost lease' }]);
        await expectStale(store.commitFacts(ALICE, facts.change, { generation: facts.generation, job: old! }), 'lease_lost');
        expect(await store.factHistory(ALICE)).toEqual([]);
        await store.jobs.complete(old!);
        await store.jobs.fail(old!, errorOf('lost'), undefined);
        expect(await store.jobs.counts('summarize', ALICE)).toEqual({ pending: 1, retrying: 0, dead: 0 });
        // The current holder's effects commit.
        const held = await factChange(store, ALICE, [{ text: 'from the holder' }]);
        expect(await store.commitFacts(ALICE, held.change, { generation: held.generation, job: taken! })).toBe(true);
        await store.jobs.complete(taken!);
        expect(await store.jobs.counts('summarize', ALICE)).toEqual({ pending: 0, retrying: 0, dead: 0 });
      }),
    );

    it(
      'fail schedules a retry on the store clock, counting the attempt and keeping the error',
      run(async ({ store, pass }) => {
        await store.jobs.enqueue([summarize(ALICE, 'later'), summarize(ALICE, 'soon')]);
        const jobs = await leaseAll(store, 'summarize');
        const later = jobs.find((j) => j.key === 'later')!;
        const soon = jobs.find((j) => j.key === 'soon')!;
        await store.jobs.fail(later, errorOf('first failure'), LONG_MS);
        await store.jobs.fail(soon, errorOf('quick failure'), SHORT_MS);
        expect(await store.jobs.counts('summarize', ALICE)).toEqual({ pending: 2, retrying: 2, dead: 0 });
        const wait = await store.jobs.nextDue('summarize');
        expect(wait).toBeGreaterThanOrEqual(0);
        expect(wait).toBeLessThanOrEqual(SHORT_MS);
        await pass(SHORT_MS);
        const again = await leaseAll(store, 'summarize');
        expect(again.map((j) => j.key)).toEqual(['soon']);
        expect(again[0]).toMatchObject({ attempts: 1, lastError: errorOf('quick failure') });
        await store.jobs.complete(again[0]!);
        const rest = (await store.jobs.nextDue('summarize'))!;
        expect(rest).toBeGreaterThan(SHORT_MS);
        expect(rest).toBeLessThanOrEqual(LONG_MS);
      }),
    );

    it(
      'get reads a queued job as stored, leased or not: its attempts, its last error, its due time by the store clock',
      run(async ({ store }) => {
        expect(await store.jobs.get('summarize', ALICE, 's1')).toBeUndefined();
        await store.jobs.enqueue([summarize(ALICE, 's1'), summarize(ALICE, 's2'), summarize(ALICE, 's3')]);
        const queued = (await store.jobs.get('summarize', ALICE, 's1'))!;
        expect(queued).toMatchObject({ kind: 'summarize', userId: ALICE, key: 's1', payload: { sessionId: 's1' }, attempts: 0 });
        expect(queued.lastError).toBeUndefined();
        expect(queued.nextAt).toBeUndefined();
        expect(await store.jobs.get('summarize', BOB, 's1')).toBeUndefined();
        expect(await store.jobs.get('extract', ALICE, 's1')).toBeUndefined();
        const jobs = await leaseAll(store, 'summarize');
        const byKey = (key: string) => jobs.find((j) => j.key === key)!;
        expect(await store.jobs.get('summarize', ALICE, 's1')).toMatchObject({ key: 's1', attempts: 0 });
        await store.jobs.fail(byKey('s1'), errorOf('first failure'), LONG_MS);
        await store.jobs.fail(byKey('s2'), errorOf('gave up'), undefined);
        await store.jobs.complete(byKey('s3'));
        expect(await store.jobs.get('summarize', ALICE, 's2')).toBeUndefined();
        expect(await store.jobs.get('summarize', ALICE, 's3')).toBeUndefined();
        const failed = (await store.jobs.get('summarize', ALICE, 's1'))!;
        expect(failed).toMatchObject({ attempts: 1, lastError: errorOf('first failure'), queuedAt: queued.queuedAt });
        // Due LONG_MS after the failure, which came after the queuing and before now (nextDue's, same clock).
        expect(Date.parse(failed.nextAt!) - LONG_MS).toBeGreaterThanOrEqual(Date.parse(queued.queuedAt));
        expect(await store.jobs.nextDue('summarize')).toBeLessThanOrEqual(LONG_MS);
      }),
    );

    it(
      'fail without a retry makes a dead letter: listed, re-queued by requeueDead, dropped by purgeDead',
      run(async ({ store }) => {
        await store.jobs.enqueue([summarize(ALICE, 'd1'), summarize(ALICE, 'd2'), summarize(BOB, 'd1')]);
        for (const job of await leaseAll(store, 'summarize')) await store.jobs.fail(job, errorOf(`gave up on ${job.key}`), undefined);
        expect(await store.jobs.counts('summarize')).toEqual({ pending: 0, retrying: 0, dead: 3 });
        expect(await store.jobs.counts('summarize', BOB)).toEqual({ pending: 0, retrying: 0, dead: 1 });
        expect(await leaseAll(store, 'summarize')).toEqual([]);
        const dead = await store.jobs.dead('summarize', { limit: 10 });
        expect(dead.map((d) => [d.userId, d.key])).toEqual([
          [ALICE, 'd1'],
          [ALICE, 'd2'],
          [BOB, 'd1'],
        ]);
        for (const d of dead) {
          expect(d).toMatchObject({ kind: 'summarize', attempts: 1, lastError: errorOf(`gave up on ${d.key}`) });
          expect(Number.isNaN(Date.parse(d.deadAt))).toBe(false);
        }
        expect((await store.jobs.dead('summarize', { limit: 1 })).map((d) => d.key)).toEqual(['d1']);
        expect((await store.jobs.dead('summarize', { limit: 10, userId: BOB })).map((d) => d.userId)).toEqual([BOB]);
        expect(await store.jobs.requeueDead('summarize', ALICE)).toBe(2);
        expect(await store.jobs.counts('summarize')).toEqual({ pending: 2, retrying: 0, dead: 1 });
        const back = await leaseAll(store, 'summarize');
        expect(back.map((j) => [j.userId, j.key, j.attempts])).toEqual(
          expect.arrayContaining([
            [ALICE, 'd1', 0],
            [ALICE, 'd2', 0],
          ]),
        );
        expect(await store.jobs.purgeDead('summarize', '2000-01-01T00:00:00.000Z')).toBe(0);
        expect(await store.jobs.purgeDead('summarize', '9999-01-01T00:00:00.000Z')).toBe(1);
        expect(await store.jobs.counts('summarize')).toEqual({ pending: 2, retrying: 0, dead: 0 });
      }),
    );

    it(
      'queuing a queued job again replaces its payload and resets its attempts',
      run(async ({ store }) => {
        await store.jobs.enqueue([summarize(ALICE, 's1', 'inc-1')]);
        const [first] = await leaseAll(store, 'summarize');
        await store.jobs.fail(first!, errorOf('once'), 0);
        await store.jobs.enqueue([summarize(ALICE, 's1', 'inc-2')]);
        expect(await store.jobs.counts('summarize', ALICE)).toEqual({ pending: 1, retrying: 0, dead: 0 });
        const [again] = await leaseAll(store, 'summarize');
        expect(again).toMatchObject({ key: 's1', attempts: 0, payload: { sessionId: 's1', incarnation: 'inc-2' } });
        // And a dead letter queued again is a live job.
        await store.jobs.fail(again!, errorOf('dead'), undefined);
        await store.jobs.enqueue([summarize(ALICE, 's1', 'inc-3')]);
        expect(await store.jobs.counts('summarize', ALICE)).toMatchObject({ pending: 1 });
      }),
    );

    it(
      'a job queued again while leased is a new job: the old lease neither completes nor fails it',
      run(async ({ store }) => {
        await store.jobs.enqueue([summarize(ALICE, 's1', 'old')]);
        const [old] = await leaseAll(store, 'summarize');
        await store.jobs.enqueue([summarize(ALICE, 's1', 'new')]);
        await store.jobs.complete(old!);
        await store.jobs.fail(old!, errorOf('stale'), undefined);
        expect(await store.jobs.counts('summarize', ALICE)).toEqual({ pending: 1, retrying: 0, dead: 0 });
        const [fresh] = await leaseAll(store, 'summarize');
        expect(fresh).toMatchObject({ payload: { incarnation: 'new' } });
      }),
    );

    it(
      'a recurring job: schedule queues it once (later calls only make it due sooner), reschedule keeps it with the next payload',
      run(async ({ store, pass }) => {
        const sweep = (conversations?: string): NewJob => ({ kind: 'sweep', userId: '', payload: conversations === undefined ? {} : { conversations } });
        await store.jobs.schedule(sweep(), 0);
        await store.jobs.schedule(sweep('ignored'), LONG_MS); // queued already: nothing changes
        expect(await store.jobs.counts('sweep')).toEqual({ pending: 1, retrying: 0, dead: 0 });
        const [round] = await leaseAll(store, 'sweep');
        expect(round).toMatchObject({ userId: '', key: 'retention', payload: {}, attempts: 0 });
        await store.jobs.schedule(sweep('ignored'), 0); // leased: its lease stays too
        expect(await leaseAll(store, 'sweep')).toEqual([]);
        await store.jobs.fail(round!, errorOf('storage down'), 0);
        const [retried] = await leaseAll(store, 'sweep');
        expect(retried).toMatchObject({ attempts: 1, payload: {} });
        await store.jobs.reschedule(retried!, { conversations: 'c9' }, LONG_MS);
        await store.jobs.reschedule(round!, { conversations: 'stale' }, 0); // a lost lease: nothing
        expect(await leaseAll(store, 'sweep')).toEqual([]);
        expect(await store.jobs.nextDue('sweep')).toBeGreaterThan(SHORT_MS);
        await store.jobs.schedule(sweep('ignored'), LONG_MS); // not sooner: nothing changes
        expect(await store.jobs.nextDue('sweep')).toBeGreaterThan(SHORT_MS);
        await store.jobs.schedule(sweep('ignored'), SHORT_MS); // sooner: due then, its payload kept
        expect(await store.jobs.nextDue('sweep')).toBeLessThanOrEqual(SHORT_MS);
        await pass(SHORT_MS);
        const [next] = await leaseAll(store, 'sweep');
        expect(next).toMatchObject({ payload: { conversations: 'c9' }, attempts: 0 });
        expect(next!.lastError).toBeUndefined();
        expect(await store.jobs.counts('sweep')).toEqual({ pending: 1, retrying: 0, dead: 0 });
        // An erasure of a user leaves the job of no user alone.
        await store.eraseUser(ALICE);
        expect(await store.jobs.counts('sweep')).toEqual({ pending: 1, retrying: 0, dead: 0 });
      }),
    );

    it(
      'subscribe tells of jobs queued, until unsubscribed',
      run(async ({ store }) => {
        let calls = 0;
        let told!: () => void;
        const heard = new Promise<void>((resolve) => (told = resolve));
        const off = store.jobs.subscribe('summarize', () => {
          calls++;
          told();
        });
        await store.jobs.enqueue([summarize(ALICE, 's1')]);
        await heard;
        expect(calls).toBeGreaterThan(0);
        off();
        const before = calls;
        await store.jobs.enqueue([summarize(ALICE, 's2')]);
        for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve));
        expect(calls).toBe(before);
      }),
    );
  });
}
