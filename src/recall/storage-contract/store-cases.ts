import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ForkError } from '../../memory/contract/fork.ts';
import type { StoredMessage } from '../../message.ts';
import { listSummaries, type SummaryRecord } from '../../provider/summary-record.ts';
import { sessionConversationId } from '../recall-ids.ts';
import type { FactEntry } from '../records/fact-entry.ts';
import type { DailyRecord, NewLogRecord, SessionEntry } from '../records/records.ts';
import { dailyDoc, longTermDoc, sessionDoc } from '../search/doc-numbers.ts';
import { dailyRowText, longTermLines, queryTerms } from '../search/documents.ts';
import { collectNewestMatches } from '../search/keyword-search.ts';
import { dayPasses, rowPasses, type RankedFilters } from '../search/rank-filters.ts';
import { type NewJob } from '../storage/job-queue.ts';
import type { FactsChange, RecallStore } from '../storage/recall-store.ts';
import { StaleWriteError } from '../storage/stale-write-error.ts';
import { type MakeRecallStore, LONG_MS, type Ctx, withStore, ALICE, BOB, DAY1, DAY2, turnWrites, turn, summary, sessionOrder, factChange, rejection, expectStale, expectedRanking, expectSameRanking, errorOf } from './contract-kit.ts';

/** The store's cases of the conformance suite (recall-store-contract.ts), run with and without embeddings. */
export function describeStoreCases(make: MakeRecallStore, embeddings: boolean): void {
  const run = (body: (ctx: Ctx) => Promise<void>) => () => withStore(make, embeddings, body);

  describe('users', () => {
    it(
      'reads a user no write has named as empty',
      run(async ({ store }) => {
        expect(store.embeddings).toBe(embeddings);
        expect(typeof store.engine).toBe('string');
        expect(await store.users()).toEqual([]);
        expect(await store.hasData(ALICE)).toBe(false);
        expect(await store.sessions(ALICE)).toEqual([]);
        expect(await store.session(ALICE, 's1')).toBeUndefined();
        expect(await store.days(ALICE)).toEqual([]);
        expect(await store.dailyDay(ALICE, DAY1)).toEqual([]);
        expect(await store.dialogueLog(ALICE)).toEqual([]);
        expect(await store.longTermVersions(ALICE)).toEqual([]);
        expect(await store.factHistory(ALICE)).toEqual([]);
        expect(await store.factsGeneration(ALICE)).toBe('');
        const state = await store.factsState(ALICE);
        expect(state).toMatchObject({ generation: '', current: [], nextSeq: 1 });
        expect(await store.rank(ALICE, { terms: queryTerms('anything'), filters: {}, limit: 10 })).toEqual([]);
        expect(await store.scanDaily(ALICE, { day: null, keyword: '', limit: 10 })).toEqual([]);
        expect(await store.scanSession(ALICE, 's1', { keyword: '', limit: 10 })).toEqual([]);
        expect(await store.turnKey(ALICE, 's1', 'k')).toBeUndefined();
      }),
    );

    it(
      'lists users sorted, each with data, and keeps every read to its user',
      run(async ({ store }) => {
        await turn(store, { userId: BOB, message: 'bob likes tea', reply: 'noted tea' });
        await turn(store, { userId: ALICE, message: 'alice likes coffee', reply: 'noted coffee' });
        expect(await store.users()).toEqual([ALICE, BOB]);
        expect(await store.hasData(ALICE)).toBe(true);
        expect(await store.hasData(BOB)).toBe(true);
        expect(await store.hasData('carol')).toBe(false);
        // A user whose id another's prefixes stays apart.
        expect(await store.hasData('ali')).toBe(false);
        expect((await store.dailyDay(ALICE, DAY1)).map((r) => r.content)).toEqual(['alice likes coffee', 'noted coffee']);
        expect((await store.dialogueLog(BOB)).map((r) => r.userMessage)).toEqual(['bob likes tea']);
        expect(await store.rank(ALICE, { terms: queryTerms('tea'), filters: {}, limit: 10 })).toEqual([]);
        expect(await store.scanDaily(ALICE, { day: null, keyword: 'tea', limit: 10 })).toEqual([]);
      }),
    );
  });

  describe('sessions', () => {
    it(
      'touchSession registers, lists, keeps a title it has and refreshes updatedAt',
      run(async ({ store }) => {
        const first = await store.touchSession(ALICE, 'a', { title: 'First title', updatedAt: `${DAY1}T10:00:00` });
        expect(first).toMatchObject({ sessionId: 'a', title: 'First title', updatedAt: `${DAY1}T10:00:00`, listed: true });
        const again = await store.touchSession(ALICE, 'a', { title: 'Other title', updatedAt: `${DAY1}T11:00:00` });
        expect(again).toMatchObject({ sessionId: 'a', title: 'First title', updatedAt: `${DAY1}T11:00:00`, listed: true, order: first.order });
        const b = await store.touchSession(ALICE, 'b', { title: 'B', updatedAt: `${DAY1}T09:00:00` });
        expect(b.order).toBeGreaterThan(first.order);
        expect(await store.session(ALICE, 'a')).toEqual(again);
        expect((await store.sessions(ALICE)).map((s) => s.sessionId)).toEqual(['a', 'b']);
        expect(await store.sessions(BOB)).toEqual([]);
      }),
    );

    it(
      "a turn's opening write registers the session unlisted; its touch lists it",
      run(async ({ store }) => {
        const ts = `${DAY1}T10:00:00`;
        const opened = await store.appendTurn({
          userId: ALICE,
          sessionId: 's1',
          entries: [{ message: { role: 'user', content: 'hello there' }, meta: { ts } }],
          opens: { now: ts },
          with: ([row]) => ({ daily: [{ day: DAY1, ts, sessionId: 's1', role: 'user', content: 'hello there', sessionMessageId: row!.message_id }] }),
        });
        expect(await store.session(ALICE, 's1')).toMatchObject({ sessionId: 's1', listed: false });
        const replied = await store.appendTurn(
          {
            userId: ALICE,
            sessionId: 's1',
            entries: [{ message: { role: 'assistant', content: 'hi' }, meta: { ts } }],
            with: ([row]) => ({
              daily: [{ day: DAY1, ts, sessionId: 's1', role: 'assistant', content: 'hi', sessionMessageId: row!.message_id }],
              touch: { title: 'Greeting', updatedAt: ts },
              settles: true,
            }),
          },
          opened.guard,
        );
        expect(replied.records.map((r) => r.message_id)).toEqual([2]);
        expect(replied.session).toMatchObject({ sessionId: 's1', title: 'Greeting', listed: true });
        expect(await store.session(ALICE, 's1')).toEqual(replied.session);
      }),
    );
  });

  describe('appendTurn', () => {
    it(
      'commits the rows with their daily mirror, log row, jobs, turn key and listing',
      run(async ({ store }) => {
        const ts = `${DAY1}T10:00:00`;
        let given: readonly StoredMessage[] = [];
        const done = await store.appendTurn({
          userId: ALICE,
          sessionId: 's1',
          entries: [
            { message: { role: 'user', content: 'I moved to Lisbon' }, meta: { ts } },
            { message: { role: 'assistant', content: 'Lisbon is lovely' }, meta: { ts } },
          ],
          idempotencyKey: 'turn-1:reply',
          opens: { now: ts },
          with: (records) => {
            given = records;
            const w = turnWrites({ userId: ALICE, sessionId: 's1', message: 'I moved to Lisbon', reply: 'Lisbon is lovely', extract: true, title: 'Moving' }, ts, DAY1)(records);
            return { ...w, turnKey: { key: 'turn-1', value: { result: { reply: 'Lisbon is lovely', memoryHits: 0, title: 'Moving', toolCalls: [] }, at: 1 } } };
          },
        });
        expect(done.records.map((r) => [r.message_id, r.message.content])).toEqual([
          [1, 'I moved to Lisbon'],
          [2, 'Lisbon is lovely'],
        ]);
        expect(given.map((r) => r.message_id)).toEqual([1, 2]);
        const stored = await store.transcripts.range(sessionConversationId(ALICE, 's1'));
        expect(stored.map((r) => r.message)).toEqual(done.records.map((r) => r.message));
        const daily = await store.dailyDay(ALICE, DAY1);
        expect(daily).toEqual([
          { day: DAY1, id: 1, ts, role: 'user', content: 'I moved to Lisbon', sessionId: 's1', sessionMessageId: 1 },
          { day: DAY1, id: 2, ts, role: 'assistant', content: 'Lisbon is lovely', sessionId: 's1', sessionMessageId: 2 },
        ]);
        expect(await store.days(ALICE)).toEqual([DAY1]);
        const log = await store.dialogueLog(ALICE);
        expect(log).toHaveLength(1);
        expect(log[0]).toMatchObject({ ts, sessionId: 's1', userMessage: 'I moved to Lisbon', assistantReply: 'Lisbon is lovely', memoryContext: '', toolCalls: [] });
        expect(await store.turnKey(ALICE, 's1', 'turn-1')).toEqual({ result: { reply: 'Lisbon is lovely', memoryHits: 0, title: 'Moving', toolCalls: [] }, at: 1 });
        expect(await store.turnKey(ALICE, 's1', 'turn-2')).toBeUndefined();
        expect(done.session).toMatchObject({ sessionId: 's1', title: 'Moving', updatedAt: ts, listed: true });
        expect(await store.jobs.counts('extract', ALICE)).toEqual({ pending: 1, retrying: 0, dead: 0 });
        const [job] = await store.jobs.lease('extract', { limit: 10, leaseMs: LONG_MS });
        expect(job).toMatchObject({ kind: 'extract', userId: ALICE, key: 's1/2', attempts: 0, payload: { sessionId: 's1', replyId: 2, messageIds: [1, 2] } });
      }),
    );

    it(
      "numbers a session's rows on and each day's daily rows from 1",
      run(async ({ store }) => {
        await turn(store, { message: 'one', reply: 'two' });
        await turn(store, { sessionId: 's2', message: 'three', reply: 'four' });
        const third = await turn(store, { message: 'five', reply: 'six', day: DAY2 });
        expect(third.records.map((r) => r.message_id)).toEqual([3, 4]);
        expect((await store.dailyDay(ALICE, DAY1)).map((r) => [r.id, r.content, r.sessionId, r.sessionMessageId])).toEqual([
          [1, 'one', 's1', 1],
          [2, 'two', 's1', 2],
          [3, 'three', 's2', 1],
          [4, 'four', 's2', 2],
        ]);
        expect((await store.dailyDay(ALICE, DAY2)).map((r) => [r.id, r.content, r.sessionMessageId])).toEqual([
          [1, 'five', 3],
          [2, 'six', 4],
        ]);
        expect(await store.days(ALICE)).toEqual([DAY1, DAY2]);
      }),
    );

    it(
      'a retried keyed append stores no row and no daily row twice',
      run(async ({ store }) => {
        const ts = `${DAY1}T10:00:00`;
        const append = () =>
          store.appendTurn({
            userId: ALICE,
            sessionId: 's1',
            entries: [{ message: { role: 'user', content: 'remember the milk' }, meta: { ts } }],
            idempotencyKey: 'k1:user',
            opens: { now: ts },
            with: ([row]) => ({
              daily: [{ day: DAY1, ts, sessionId: 's1', role: 'user', content: 'remember the milk', sessionMessageId: row!.message_id }],
              jobs: [{ kind: 'summarize', userId: ALICE, payload: { sessionId: 's1' } }],
            }),
          });
        const first = await append();
        const retry = await append();
        expect(retry.records).toEqual(first.records);
        expect(await store.transcripts.range(sessionConversationId(ALICE, 's1'))).toHaveLength(1);
        expect((await store.dailyDay(ALICE, DAY1)).map((r) => r.content)).toEqual(['remember the milk']);
        expect((await store.sessions(ALICE)).map((s) => s.sessionId)).toEqual(['s1']);
        expect((await store.jobs.counts('summarize', ALICE)).pending).toBe(1);
        const next = await turn(store, { message: 'and eggs', reply: 'ok' });
        expect(next.records.map((r) => r.message_id)).toEqual([2, 3]);
      }),
    );
  });

  describe('guards', () => {
    it(
      'after eraseUser, a write under an older incarnation rejects StaleWriteError and stores nothing',
      run(async ({ store }) => {
        const { guard } = await turn(store, { message: 'first words', reply: 'noted' });
        await store.eraseUser(ALICE);
        const ts = `${DAY1}T11:00:00`;
        await expectStale(
          store.appendTurn(
            {
              userId: ALICE,
              sessionId: 's1',
              entries: [{ message: { role: 'assistant', content: 'late reply' }, meta: { ts } }],
              with: ([row]) => ({
                daily: [{ day: DAY1, ts, sessionId: 's1', role: 'assistant', content: 'late reply', sessionMessageId: row!.message_id }],
                log: { ts, sessionId: 's1', userMessage: 'first words', assistantReply: 'late reply', memoryContext: '', toolCalls: [] },
                jobs: [{ kind: 'summarize', userId: ALICE, payload: { sessionId: 's1' } }],
                touch: { title: 'Late', updatedAt: ts },
              }),
            },
            guard,
          ),
          'erased',
        );
        await expectStale(store.touchSession(ALICE, 's1', { title: 'Late', updatedAt: ts }, guard), 'erased');
        const { change } = await factChange(store, ALICE, [{ text: 'Alice lives in Porto' }]);
        await expectStale(store.commitFacts(ALICE, change, { ...guard, generation: '' }), 'erased');
        expect(await store.hasData(ALICE)).toBe(false);
        expect(await store.users()).toEqual([]);
        expect(await store.transcripts.range(sessionConversationId(ALICE, 's1'))).toEqual([]);
        expect(await store.dailyDay(ALICE, DAY1)).toEqual([]);
        expect(await store.dialogueLog(ALICE)).toEqual([]);
        expect(await store.factHistory(ALICE)).toEqual([]);
        expect(await store.session(ALICE, 's1')).toBeUndefined();
        expect(await store.jobs.counts('summarize', ALICE)).toEqual({ pending: 0, retrying: 0, dead: 0 });
        // A new operation (no guard) starts a new incarnation, and its own guard holds.
        const fresh = await turn(store, { message: 'starting over', reply: 'welcome back' });
        expect(fresh.records.map((r) => r.message_id)).toEqual([1, 2]);
        await store.touchSession(ALICE, 's1', { title: 'x', updatedAt: ts }, fresh.guard);
      }),
    );

    it(
      'lockSession serializes two holders of one session, not of two',
      run(async ({ store }) => {
        const events: string[] = [];
        const releaseA = await store.lockSession(ALICE, 's1');
        const second = store.lockSession(ALICE, 's1').then((release) => {
          events.push('second holds');
          return release;
        });
        // Another session is not held up.
        const other = await store.lockSession(ALICE, 's2');
        await other();
        for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
        events.push('first lets go');
        await releaseA();
        const releaseB = await second;
        expect(events).toEqual(['first lets go', 'second holds']);
        await releaseB();
        // Free again.
        await (await store.lockSession(ALICE, 's1'))();
      }),
    );
  });

  describe('order under concurrent writes', () => {
    it(
      "concurrent turns of two sessions number the day's rows without gap or duplicate",
      run(async ({ store }) => {
        await Promise.all([
          turn(store, { sessionId: 'a', message: 'a1', reply: 'a2' }),
          turn(store, { sessionId: 'b', message: 'b1', reply: 'b2' }),
          turn(store, { sessionId: 'c', message: 'c1', reply: 'c2' }),
        ]);
        const rows = await store.dailyDay(ALICE, DAY1);
        expect(rows.map((r) => r.id)).toEqual([1, 2, 3, 4, 5, 6]);
        for (const s of ['a', 'b', 'c']) {
          expect(rows.filter((r) => r.sessionId === s).map((r) => [r.content, r.sessionMessageId])).toEqual([
            [`${s}1`, 1],
            [`${s}2`, 2],
          ]);
        }
        const log = await store.dialogueLog(ALICE);
        expect(new Set(log.map((r) => r.seq)).size).toBe(3);
        const orders = (await store.sessions(ALICE)).map((e) => e.order);
        expect(new Set(orders).size).toBe(3);
      }),
    );

    it(
      'of two concurrent facts changes from one generation, exactly one commits',
      run(async ({ store }) => {
        const a = await factChange(store, ALICE, [{ text: 'Alice plays chess' }]);
        const b = await factChange(store, ALICE, [{ text: 'Alice plays go' }]);
        const results = await Promise.all([
          store.commitFacts(ALICE, a.change, { generation: a.generation }),
          store.commitFacts(ALICE, b.change, { generation: b.generation }),
        ]);
        expect(results.filter(Boolean)).toHaveLength(1);
        const won = results[0] ? a : b;
        expect((await store.factHistory(ALICE)).map((e) => e.text)).toEqual([won === a ? 'Alice plays chess' : 'Alice plays go']);
        expect(await store.factsGeneration(ALICE)).toBe(won.change.generation);
      }),
    );

    it(
      'concurrent lease calls hand each job out once',
      run(async ({ store }) => {
        await store.jobs.enqueue(['a', 'b', 'c', 'd', 'e'].map((s) => ({ kind: 'summarize', userId: ALICE, payload: { sessionId: s } }) as NewJob));
        const batches = await Promise.all([0, 1, 2].map(() => store.jobs.lease('summarize', { limit: 2, leaseMs: LONG_MS })));
        const keys = batches.flat().map((j) => j.key);
        expect(new Set(keys).size).toBe(keys.length);
        expect(keys.sort()).toEqual(['a', 'b', 'c', 'd', 'e']);
      }),
    );
  });

  describe('forkSession', () => {
    it(
      'branches the prefix into a registered, listed, linked target',
      run(async ({ store }) => {
        await turn(store, { message: 'm1', reply: 'm2' });
        await turn(store, { message: 'm3', reply: 'm4' });
        await turn(store, { message: 'm5', reply: 'm6' });
        await store.forkSession(ALICE, { sourceId: 's1', messageId: 4, targetId: 'f1', title: 'Branch', now: `${DAY1}T12:00:00` });
        const rows = await store.transcripts.range(sessionConversationId(ALICE, 'f1'));
        expect(rows.map((r) => [r.message_id, r.message.content])).toEqual([
          [1, 'm1'],
          [2, 'm2'],
          [3, 'm3'],
          [4, 'm4'],
        ]);
        expect(await store.session(ALICE, 'f1')).toMatchObject({ sessionId: 'f1', title: 'Branch', listed: true, fork: { sessionId: 's1', messageId: 4 } });
        expect((await store.sessions(ALICE)).map((s) => s.sessionId)).toEqual(['s1', 'f1']);
        // The source is untouched, and the branch goes on from its prefix.
        expect(await store.transcripts.range(sessionConversationId(ALICE, 's1'))).toHaveLength(6);
        const next = await turn(store, { sessionId: 'f1', message: 'b5', reply: 'b6' });
        expect(next.records.map((r) => r.message_id)).toEqual([5, 6]);
        expect((await store.scanSession(ALICE, 'f1', { keyword: '', limit: 10 })).map((r) => r.message.content)).toEqual(['m1', 'm2', 'm3', 'm4', 'b5', 'b6']);
      }),
    );

    it(
      'refuses an existing target (fork_target_exists) and a missing row (fork_point_missing), storing nothing',
      run(async ({ store }) => {
        await turn(store, { message: 'm1', reply: 'm2' });
        await turn(store, { sessionId: 's2', message: 'x1', reply: 'x2' });
        const exists = await rejection(store.forkSession(ALICE, { sourceId: 's1', messageId: 1, targetId: 's2', title: 'T', now: `${DAY1}T12:00:00` }));
        expect(exists).toBeInstanceOf(ForkError);
        expect((exists as ForkError).code).toBe('fork_target_exists');
        const missing = await rejection(store.forkSession(ALICE, { sourceId: 's1', messageId: 9, targetId: 'f9', title: 'T', now: `${DAY1}T12:00:00` }));
        expect(missing).toBeInstanceOf(ForkError);
        expect((missing as ForkError).code).toBe('fork_point_missing');
        expect(await store.session(ALICE, 'f9')).toBeUndefined();
        expect((await store.sessions(ALICE)).map((s) => s.sessionId)).toEqual(['s1', 's2']);
        expect((await store.transcripts.range(sessionConversationId(ALICE, 's2'))).map((r) => r.message.content)).toEqual(['x1', 'x2']);
      }),
    );

    it(
      "carries over the source's summaries up to the fork point, ids and links kept",
      run(async ({ store }) => {
        const { guard } = await turn(store, { message: 'm1', reply: 'm2' });
        await turn(store, { message: 'm3', reply: 'm4' });
        await turn(store, { message: 'm5', reply: 'm6' });
        const order = await sessionOrder(store, ALICE, 's1');
        const g = { ...guard, sessionOrder: order };
        const s1 = (await store.appendSummary(ALICE, 's1', summary(1, 2, null), g))!;
        const s2 = (await store.appendSummary(ALICE, 's1', summary(3, 4, s1.id), g))!;
        await store.appendSummary(ALICE, 's1', summary(5, 6, s2.id), g);
        await store.forkSession(ALICE, { sourceId: 's1', messageId: 5, targetId: 'f5', title: 'At five', now: `${DAY1}T12:00:00` });
        await store.forkSession(ALICE, { sourceId: 's1', messageId: 1, targetId: 'f1', title: 'At one', now: `${DAY1}T12:00:00` });
        const carried = await listSummaries(store.transcripts, sessionConversationId(ALICE, 'f5'));
        expect(carried).toEqual([s1, s2]);
        expect(await listSummaries(store.transcripts, sessionConversationId(ALICE, 'f1'))).toEqual([]);
        // The target's summaries go on from the last carried one.
        const fOrder = await sessionOrder(store, ALICE, 'f5');
        expect(await store.appendSummary(ALICE, 'f5', summary(5, 5, s1.id), { ...guard, sessionOrder: fOrder })).toBeUndefined();
        const on = await store.appendSummary(ALICE, 'f5', summary(5, 5, s2.id), { ...guard, sessionOrder: fOrder });
        expect(on).toMatchObject({ previous: s2.id, to: 5 });
      }),
    );
  });

  describe('deleteSession', () => {
    it(
      'deletes the transcript, summaries, daily rows, log rows, turn keys and entry of that session only',
      run(async ({ store }) => {
        const { guard } = await turn(store, { message: 'keep me not', reply: 'gone soon' });
        await store.appendTurn({
          userId: ALICE,
          sessionId: 's1',
          entries: [{ message: { role: 'user', content: 'keyed' }, meta: {} }],
          with: ([row]) => ({
            daily: [{ day: DAY1, ts: `${DAY1}T10:30:00`, sessionId: 's1', role: 'user', content: 'keyed', sessionMessageId: row!.message_id }],
            turnKey: { key: 'tk', value: { failedAttempts: 1, at: 5 } },
          }),
        });
        await store.appendSummary(ALICE, 's1', summary(1, 2, null), { ...guard, sessionOrder: await sessionOrder(store, ALICE, 's1') });
        await turn(store, { sessionId: 's2', message: 'stay here', reply: 'staying' });
        expect(await store.deleteSession(ALICE, 's1')).toBe('deleted');
        expect(await store.session(ALICE, 's1')).toBeUndefined();
        expect(await store.transcripts.range(sessionConversationId(ALICE, 's1'))).toEqual([]);
        expect(await listSummaries(store.transcripts, sessionConversationId(ALICE, 's1'))).toEqual([]);
        expect(await store.turnKey(ALICE, 's1', 'tk')).toBeUndefined();
        expect((await store.dailyDay(ALICE, DAY1)).map((r) => r.content)).toEqual(['stay here', 'staying']);
        expect((await store.dialogueLog(ALICE)).map((r) => r.sessionId)).toEqual(['s2']);
        expect(await store.dialogueLog(ALICE, 's1')).toEqual([]);
        expect((await store.sessions(ALICE)).map((s) => s.sessionId)).toEqual(['s2']);
        expect(await store.scanDaily(ALICE, { day: null, keyword: 'keep', limit: 10 })).toEqual([]);
        expect(await store.rank(ALICE, { terms: queryTerms('keep'), filters: {}, limit: 10 })).toEqual([]);
        expect(await store.deleteSession(ALICE, 's1')).toBe('missing');
        expect(await store.deleteSession(ALICE, 'never')).toBe('missing');
      }),
    );

    it(
      "ifLastId: 'changed' and nothing deleted unless the transcript still ends there",
      run(async ({ store }) => {
        await turn(store, { message: 'old', reply: 'older' });
        await turn(store, { message: 'new', reply: 'newer' });
        expect(await store.deleteSession(ALICE, 's1', { ifLastId: 2 })).toBe('changed');
        expect(await store.transcripts.range(sessionConversationId(ALICE, 's1'))).toHaveLength(4);
        expect(await store.dailyDay(ALICE, DAY1)).toHaveLength(4);
        expect(await store.session(ALICE, 's1')).toBeDefined();
        expect(await store.deleteSession(ALICE, 's1', { ifLastId: 4 })).toBe('deleted');
        expect(await store.session(ALICE, 's1')).toBeUndefined();
        expect(await store.dailyDay(ALICE, DAY1)).toEqual([]);
        expect(await store.transcripts.range(sessionConversationId(ALICE, 's1'))).toEqual([]);
      }),
    );
  });

  describe('appendSummary', () => {
    it(
      'stores on the newest summary, and answers undefined (nothing stored) when another came first',
      run(async ({ store }) => {
        const { guard } = await turn(store, { message: 'm1', reply: 'm2' });
        await turn(store, { message: 'm3', reply: 'm4' });
        const g = { ...guard, sessionOrder: await sessionOrder(store, ALICE, 's1') };
        const first = await store.appendSummary(ALICE, 's1', summary(1, 2, null, 'first'), g);
        expect(first).toMatchObject({ text: 'first', from: 1, to: 2, previous: null, model: 'extractive', method: 'extractive' });
        expect(await store.appendSummary(ALICE, 's1', summary(1, 4, null, 'racer'), g)).toBeUndefined();
        const second = await store.appendSummary(ALICE, 's1', summary(3, 4, first!.id, 'second'), g);
        expect(second).toMatchObject({ text: 'second', previous: first!.id, to: 4 });
        expect(await store.appendSummary(ALICE, 's1', summary(3, 4, first!.id, 'stale'), g)).toBeUndefined();
        expect((await listSummaries(store.transcripts, sessionConversationId(ALICE, 's1'))).map((s: SummaryRecord) => s.text)).toEqual(['first', 'second']);
      }),
    );

    it(
      'rejects session_gone for a deleted session, or one deleted and made again, storing nothing',
      run(async ({ store }) => {
        const { guard } = await turn(store, { message: 'm1', reply: 'm2' });
        const order = await sessionOrder(store, ALICE, 's1');
        await store.deleteSession(ALICE, 's1');
        await expectStale(store.appendSummary(ALICE, 's1', summary(1, 2, null), { ...guard, sessionOrder: order }), 'session_gone');
        const again = await turn(store, { message: 'n1', reply: 'n2' });
        expect(await sessionOrder(store, ALICE, 's1')).not.toBe(order);
        await expectStale(store.appendSummary(ALICE, 's1', summary(1, 2, null), { ...again.guard, sessionOrder: order }), 'session_gone');
        expect(await listSummaries(store.transcripts, sessionConversationId(ALICE, 's1'))).toEqual([]);
      }),
    );

    it(
      'rejects erased after the user was erased, storing nothing',
      run(async ({ store }) => {
        const { guard } = await turn(store, { message: 'm1', reply: 'm2' });
        const order = await sessionOrder(store, ALICE, 's1');
        await store.eraseUser(ALICE);
        await expectStale(store.appendSummary(ALICE, 's1', summary(1, 2, null), { ...guard, sessionOrder: order }), 'erased');
        expect(await listSummaries(store.transcripts, sessionConversationId(ALICE, 's1'))).toEqual([]);
        expect(await store.hasData(ALICE)).toBe(false);
      }),
    );
  });

  describe('the daily view and keyword scans', () => {
    const fill = async (store: RecallStore) => {
      await turn(store, { message: 'Coffee at nine', reply: 'noted the coffee', time: '09:00:00' });
      await turn(store, { message: 'tea later', reply: 'TEA noted', time: '09:30:00' });
      await turn(store, { sessionId: 's2', message: 'more COFFEE please', reply: 'ok', time: '10:00:00' });
      await turn(store, { message: 'coffee again', reply: 'coffeecoffee', day: DAY2, time: '08:00:00' });
    };

    it(
      'dailyDay, dailyWindow and days',
      run(async ({ store }) => {
        await fill(store);
        expect(await store.days(ALICE)).toEqual([DAY1, DAY2]);
        const day1 = await store.dailyDay(ALICE, DAY1);
        expect(day1.map((r) => r.id)).toEqual([1, 2, 3, 4, 5, 6]);
        expect(await store.dailyWindow(ALICE, DAY1, 3, 1, 1)).toEqual(day1.slice(1, 4));
        expect(await store.dailyWindow(ALICE, DAY1, 1, 3, 0)).toEqual(day1.slice(0, 1));
        expect(await store.dailyWindow(ALICE, DAY1, 5, 0, 9)).toEqual(day1.slice(4));
        expect(await store.dailyWindow(ALICE, DAY1, 9, 2, 2)).toEqual([]);
        expect(await store.dailyWindow(ALICE, '2026-04-10', 1, 2, 2)).toEqual([]);
        expect((await store.dailyDay(ALICE, DAY2)).map((r) => r.content)).toEqual(['coffee again', 'coffeecoffee']);
      }),
    );

    it(
      'scanDaily: case-folded substring, the newest `limit` matches, oldest first',
      run(async ({ store }) => {
        await fill(store);
        const all = [...(await store.dailyDay(ALICE, DAY1)), ...(await store.dailyDay(ALICE, DAY2))];
        const expected = (rows: DailyRecord[], keyword: string, limit: number) =>
          collectNewestMatches([...rows].reverse(), (r) => r.content, keyword, limit);
        for (const keyword of ['coffee', 'COFFEE', ' Tea ', 'noted', 'zzz', '']) {
          for (const limit of [1, 2, 10]) {
            expect(await store.scanDaily(ALICE, { day: null, keyword, limit })).toEqual(expected(all, keyword, limit));
            expect(await store.scanDaily(ALICE, { day: DAY1, keyword, limit })).toEqual(expected(all.filter((r) => r.day === DAY1), keyword, limit));
          }
        }
        expect((await store.scanDaily(ALICE, { day: null, keyword: 'coffee', limit: 2 })).map((r) => r.content)).toEqual(['coffee again', 'coffeecoffee']);
      }),
    );

    it(
      "scanSession: the same rule over one session's transcript",
      run(async ({ store }) => {
        await fill(store);
        const rows = await store.transcripts.range(sessionConversationId(ALICE, 's1'));
        for (const keyword of ['coffee', 'Noted', 'tea', 'zzz', ' ']) {
          for (const limit of [1, 3, 10]) {
            const want = collectNewestMatches([...rows].reverse(), (r) => String(r.message.content), keyword, limit);
            expect(await store.scanSession(ALICE, 's1', { keyword, limit })).toEqual(want);
          }
        }
        expect((await store.scanSession(ALICE, 's2', { keyword: 'coffee', limit: 10 })).map((r) => r.message.content)).toEqual(['more COFFEE please']);
        expect(await store.scanSession(ALICE, 'nope', { keyword: '', limit: 10 })).toEqual([]);
      }),
    );
  });

  describe('the dialogue log', () => {
    it(
      "lists turns in order, every session's or one's",
      run(async ({ store }) => {
        await turn(store, { message: 'a1', reply: 'r1' });
        await turn(store, { sessionId: 's2', message: 'b1', reply: 'q1' });
        await turn(store, { message: 'a2', reply: 'r2' });
        const log = await store.dialogueLog(ALICE);
        expect(log.map((r) => [r.sessionId, r.userMessage, r.assistantReply])).toEqual([
          ['s1', 'a1', 'r1'],
          ['s2', 'b1', 'q1'],
          ['s1', 'a2', 'r2'],
        ]);
        expect(log.map((r) => r.seq)).toEqual([...log.map((r) => r.seq)].sort((a, b) => a - b));
        expect(new Set(log.map((r) => r.seq)).size).toBe(3);
        expect((await store.dialogueLog(ALICE, 's1')).map((r) => r.userMessage)).toEqual(['a1', 'a2']);
        expect(await store.dialogueLog(ALICE, 's9')).toEqual([]);
      }),
    );
  });

  describe('facts and long-term memory', () => {
    it(
      'commitFacts applies a change on its generation; factsState, factEntries and factHistory read it',
      run(async ({ store }) => {
        const { change, generation } = await factChange(store, ALICE, [{ text: 'Alice drinks tea', key: 'drink' }, { text: 'Alice lives in Porto' }]);
        expect(generation).toBe('');
        expect(await store.commitFacts(ALICE, change, { generation })).toBe(true);
        expect(await store.factsGeneration(ALICE)).toBe(change.generation);
        const state = await store.factsState(ALICE);
        expect(state.generation).toBe(change.generation);
        expect(state.nextSeq).toBe(3);
        expect(state.current.map((e) => [e.id, e.text, e.key])).toEqual([
          ['m1', 'Alice drinks tea', 'drink'],
          ['m2', 'Alice lives in Porto', undefined],
        ]);
        const [m1, missing, m2] = await store.factEntries(ALICE, [1, 7, 2]);
        expect(m1).toEqual(state.current[0]);
        expect(missing).toBeUndefined();
        expect(m2).toEqual(state.current[1]);
        expect(await store.hasData(ALICE)).toBe(true);
        // A change of a fact ends the old entry and points it at its successor.
        const update = await factChange(store, ALICE, [{ text: 'Alice drinks coffee', key: 'drink' }], '2026-04-08T03:00:00.000Z');
        expect(await store.commitFacts(ALICE, update.change, { generation: update.generation })).toBe(true);
        const after = await store.factsState(ALICE);
        expect(after.current.map((e) => e.text)).toEqual(['Alice lives in Porto', 'Alice drinks coffee']);
        const history = await store.factHistory(ALICE);
        expect(history.map((e) => e.id)).toEqual(['m1', 'm2', 'm3']);
        const ended = history[0]!;
        expect(ended).toMatchObject({ validTo: '2026-04-08T03:00:00.000Z', supersededBy: 'm3' });
        expect((await store.factEntries(ALICE, [1]))[0]).toEqual(ended);
        expect(await store.factsState(BOB)).toMatchObject({ generation: '', current: [], nextSeq: 1 });
      }),
    );

    it(
      'a change on a stale generation returns false and writes nothing',
      run(async ({ store }) => {
        const a = await factChange(store, ALICE, [{ text: 'Alice owns a bike' }]);
        const b = await factChange(store, ALICE, [{ text: 'Alice owns a boat' }]);
        expect(await store.commitFacts(ALICE, a.change, { generation: a.generation })).toBe(true);
        expect(await store.commitFacts(ALICE, b.change, { generation: b.generation })).toBe(false);
        expect((await store.factHistory(ALICE)).map((e: FactEntry) => e.text)).toEqual(['Alice owns a bike']);
        expect(await store.factsGeneration(ALICE)).toBe(a.change.generation);
        const c = await factChange(store, ALICE, [{ text: 'Alice owns a boat' }]);
        expect(await store.commitFacts(ALICE, c.change, { generation: c.generation })).toBe(true);
        expect((await store.factsState(ALICE)).current.map((e) => e.text)).toEqual(['Alice owns a bike', 'Alice owns a boat']);
      }),
    );

    it(
      "longTermVersions numbers versions on, and 'undo' drops the newest",
      run(async ({ store }) => {
        const commit = async (longTerm: FactsChange['longTerm']) => {
          const generation = await store.factsGeneration(ALICE);
          const change: FactsChange = { generation: randomUUID(), entries: [], ...(longTerm === undefined ? {} : { longTerm }) };
          expect(await store.commitFacts(ALICE, change, { generation })).toBe(true);
        };
        await commit({ content: 'likes hiking', ts: `${DAY1}T10:00:00`, source: 'set' });
        await commit({ content: 'likes hiking\nhas a cat', ts: `${DAY1}T11:00:00`, source: 'remember_note' });
        expect(await store.longTermVersions(ALICE)).toEqual([
          { version: 1, content: 'likes hiking', ts: `${DAY1}T10:00:00`, source: 'set' },
          { version: 2, content: 'likes hiking\nhas a cat', ts: `${DAY1}T11:00:00`, source: 'remember_note' },
        ]);
        expect((await store.factsState(ALICE)).longTerm).toMatchObject({ version: 2 });
        await commit('undo');
        expect((await store.longTermVersions(ALICE)).map((v) => v.version)).toEqual([1]);
        // The document's shape is kept as given.
        const doc = { lines: ['# Notes', { pre: '- ', ref: 1, post: '' }, ''], raw: false };
        const generation = await store.factsGeneration(ALICE);
        expect(await store.commitFacts(ALICE, { generation: randomUUID(), entries: [], doc }, { generation })).toBe(true);
        expect((await store.factsState(ALICE)).doc).toEqual(doc);
        expect((await store.factsState(ALICE)).longTerm).toMatchObject({ version: 1, content: 'likes hiking' });
        await commit({ content: 'likes biking', ts: `${DAY1}T12:00:00`, source: 'set' });
        expect((await store.longTermVersions(ALICE)).map((v) => [v.version, v.content])).toEqual([
          [1, 'likes hiking'],
          [2, 'likes biking'],
        ]);
        expect(await store.hasData(ALICE)).toBe(true);
      }),
    );
  });

  describe('rank', () => {
    const fill = async (store: RecallStore) => {
      await turn(store, { message: 'I booked a flight to Lisbon for the conference', reply: 'Lisbon flights are quick from here' });
      await turn(store, { message: 'the conference hotel is near the river', reply: 'river views are nice' });
      await turn(store, {
        sessionId: 's2',
        message: 'find my flight',
        reply: 'your flight leaves at nine',
        day: DAY2,
        toolCalls: [{ name: 'search_memory', input: '{"query": "flight lisbon"}', output: 'flight to Lisbon, conference' }],
      });
      await turn(store, { message: 'a conference about databases', reply: 'databases and more databases', day: DAY2 });
      // Another user's rows change nothing of alice's statistics.
      await turn(store, { userId: BOB, message: 'flight flight flight lisbon conference', reply: 'conference' });
      const days = [...(await store.dailyDay(ALICE, DAY1)), ...(await store.dailyDay(ALICE, DAY2))];
      return days;
    };
    const docsOf = (rows: DailyRecord[], filters: RankedFilters) =>
      rows.map((r) => ({ doc: dailyDoc(r.day, r.id)!, text: dailyRowText(r), passes: dayPasses(filters, r.day) && rowPasses(filters, r) }));

    it(
      'scores with BM25 as search/bm25.ts computes it, best first, at most limit, with the rows',
      run(async ({ store }) => {
        const rows = await fill(store);
        for (const query of ['flight to Lisbon', 'conference', 'river databases', 'nothing matches this']) {
          for (const limit of [1, 3, 20]) {
            const got = await store.rank(ALICE, { terms: queryTerms(query), filters: {}, limit });
            expectSameRanking(got, expectedRanking(docsOf(rows, {}), queryTerms(query), limit));
          }
        }
        const [best] = await store.rank(ALICE, { terms: queryTerms('river'), filters: {}, limit: 1 });
        const row = rows.find((r) => dailyDoc(r.day, r.id) === best!.doc)!;
        expect(best!.row).toEqual(row);
      }),
    );

    it(
      'orders equal scores by document number',
      run(async ({ store }) => {
        await turn(store, { message: 'violin lessons', reply: 'noted', day: DAY2 });
        await turn(store, { message: 'violin lessons', reply: 'noted' });
        await turn(store, { message: 'violin lessons', reply: 'noted', sessionId: 's2' });
        const got = await store.rank(ALICE, { terms: queryTerms('violin'), filters: {}, limit: 10 });
        expect(got).toHaveLength(3);
        expect(got[0]!.score).toBeCloseTo(got[2]!.score, 9);
        expect(got.map((d) => d.doc)).toEqual([...got.map((d) => d.doc)].sort((x, y) => x - y));
        expect(got.map((d) => d.row?.day)).toEqual([DAY1, DAY1, DAY2]);
      }),
    );

    it(
      'applies RankedFilters as search/rank-filters.ts defines them, over the same statistics',
      run(async ({ store }) => {
        const rows = await fill(store);
        const terms = queryTerms('flight lisbon conference databases');
        const filters: RankedFilters[] = [
          { sessionId: 's2' },
          { day: DAY2 },
          { from: DAY2, to: DAY2 },
          { to: DAY1 },
          { roles: ['assistant'] },
          { tool: 'search_memory' },
          { roles: ['user'], day: DAY1 },
          { sessionId: 's1', from: DAY1, to: DAY2, roles: ['user', 'assistant'] },
        ];
        for (const f of filters) {
          const got = await store.rank(ALICE, { terms, filters: f, limit: 20 });
          expectSameRanking(got, expectedRanking(docsOf(rows, f), terms, 20));
        }
      }),
    );

    it(
      'indexes the newest long-term version line by line; rebuildIndex gives the same ranking',
      run(async ({ store }) => {
        const rows = await fill(store);
        const content = 'prefers aisle seats on every flight\n\nspeaks at the conference in Lisbon';
        const generation = await store.factsGeneration(ALICE);
        await store.commitFacts(ALICE, { generation: randomUUID(), entries: [], longTerm: { content, ts: `${DAY1}T09:00:00`, source: 'set' } }, { generation });
        const terms = queryTerms('flight conference lisbon');
        const docs = [
          ...docsOf(rows, {}),
          ...longTermLines(content).map((l) => ({ doc: longTermDoc(l.line)!, text: l.text, passes: true })),
        ];
        const expected = expectedRanking(docs, terms, 20);
        expect(expected.some((d) => d.doc < 10)).toBe(true);
        const before = await store.rank(ALICE, { terms, filters: {}, limit: 20 });
        expectSameRanking(before, expected);
        // A long-term line belongs to no session and has the role `memory`.
        const memoryOnly = await store.rank(ALICE, { terms, filters: { roles: ['memory'] }, limit: 20 });
        expect(memoryOnly.map((d) => d.doc)).toEqual(expected.filter((d) => d.doc < 10).map((d) => d.doc));
        expect(memoryOnly.every((d) => d.row === undefined)).toBe(true);
        // The newest version replaces the older one's lines.
        const g2 = await store.factsGeneration(ALICE);
        await store.commitFacts(ALICE, { generation: randomUUID(), entries: [], longTerm: { content: 'prefers window seats', ts: `${DAY1}T09:30:00`, source: 'set' } }, { generation: g2 });
        expect(await store.rank(ALICE, { terms: queryTerms('aisle'), filters: {}, limit: 5 })).toEqual([]);
        expect((await store.rank(ALICE, { terms: queryTerms('window'), filters: {}, limit: 5 })).map((d) => d.doc)).toEqual([longTermDoc(1)]);
        const g3 = await store.factsGeneration(ALICE);
        await store.commitFacts(ALICE, { generation: randomUUID(), entries: [], longTerm: 'undo' }, { generation: g3 });
        expect((await store.rank(ALICE, { terms, filters: { sessionId: 's1' }, limit: 20 })).every((d) => d.doc > 10)).toBe(true);
        // The rows indexed (the long-term lines are indexed again too, not counted: recall-store.ts).
        expect(await store.rebuildIndex(ALICE)).toBe(rows.length);
        expectSameRanking(await store.rank(ALICE, { terms, filters: {}, limit: 20 }), expected);
      }),
    );
  });

  describe('importBatch', () => {
    it(
      'a daily row given twice in one batch is stored and indexed as its last occurrence',
      run(async ({ store }) => {
        await store.importBatch(ALICE, {
          daily: [
            { day: DAY1, id: 3, ts: `${DAY1}T08:00:00`, role: 'user', content: 'first draft about pottery', sessionId: null, sessionMessageId: null },
            { day: DAY1, id: 3, ts: `${DAY1}T08:00:00`, role: 'user', content: 'final text about weaving', sessionId: null, sessionMessageId: null },
          ],
        });
        await store.importBatch(ALICE, { complete: true });
        expect((await store.dailyDay(ALICE, DAY1)).map((r) => [r.id, r.content])).toEqual([[3, 'final text about weaving']]);
        expect((await store.rank(ALICE, { terms: queryTerms('weaving'), filters: {}, limit: 5 })).map((h) => h.doc)).toEqual([dailyDoc(DAY1, 3)]);
        expect(await store.rank(ALICE, { terms: queryTerms('pottery'), filters: {}, limit: 5 })).toEqual([]);
      }),
    );
    it(
      'stores sessions, a transcript, daily rows with their ids, log rows and summaries as given',
      run(async ({ store }) => {
        const entry: SessionEntry = { sessionId: 'imp', title: 'Imported', updatedAt: `${DAY1}T08:00:00`, order: 7, listed: true };
        await store.importBatch(ALICE, { sessions: [entry, { sessionId: 'bare', title: '', updatedAt: `${DAY1}T08:00:00`, order: 8, listed: false }] });
        await store.importBatch(ALICE, {
          transcript: {
            sessionId: 'imp',
            entries: [
              { message: { role: 'user', content: 'imported question about sailing' }, meta: {} },
              { message: { role: 'assistant', content: 'imported answer' }, meta: {} },
            ],
          },
        });
        await store.importBatch(ALICE, {
          daily: [
            { day: DAY1, id: 5, ts: `${DAY1}T08:00:00`, role: 'user', content: 'imported question about sailing', sessionId: 'imp', sessionMessageId: 1 },
            { day: DAY1, id: 9, ts: `${DAY1}T08:00:01`, role: 'assistant', content: 'imported answer', sessionId: 'imp', sessionMessageId: 2 },
          ],
        });
        const log: NewLogRecord = { ts: `${DAY1}T08:00:01`, sessionId: 'imp', userMessage: 'imported question about sailing', assistantReply: 'imported answer', memoryContext: 'ctx', toolCalls: [] };
        await store.importBatch(ALICE, { log: [log] });
        await store.importBatch(ALICE, { summaries: { sessionId: 'imp', entries: [summary(1, 2, null, 'imported summary')] } });
        await store.importBatch(ALICE, {
          sessionDocs: [{ sessionId: 'bare', sessionMessageId: 3, day: DAY2, ts: `${DAY2}T08:00:00`, role: 'user', content: 'a row about kayaking' }],
        });
        expect(await store.session(ALICE, 'imp')).toEqual(entry);
        expect((await store.sessions(ALICE)).map((s) => s.sessionId)).toEqual(['imp', 'bare']);
        expect((await store.transcripts.range(sessionConversationId(ALICE, 'imp'))).map((r) => r.message.content)).toEqual(['imported question about sailing', 'imported answer']);
        expect((await store.dailyDay(ALICE, DAY1)).map((r) => [r.id, r.content])).toEqual([
          [5, 'imported question about sailing'],
          [9, 'imported answer'],
        ]);
        expect(await store.dialogueLog(ALICE)).toMatchObject([log]);
        expect((await listSummaries(store.transcripts, sessionConversationId(ALICE, 'imp'))).map((s) => s.text)).toEqual(['imported summary']);
        const [hit] = await store.rank(ALICE, { terms: queryTerms('sailing'), filters: {}, limit: 5 });
        expect(hit!.doc).toBe(dailyDoc(DAY1, 5));
        // A session document is indexed, shown in no view.
        const [kayak] = await store.rank(ALICE, { terms: queryTerms('kayaking'), filters: {}, limit: 5 });
        expect(kayak!.doc).toBe(sessionDoc(8, 3));
        expect(kayak!.row).toMatchObject({ content: 'a row about kayaking', sessionId: 'bare' });
        expect(await store.dailyDay(ALICE, DAY2)).toEqual([]);
        expect(await store.scanDaily(ALICE, { day: null, keyword: 'kayak', limit: 5 })).toEqual([]);
        // The next turn numbers on from what was imported.
        const next = await turn(store, { sessionId: 'imp', message: 'back again', reply: 'hello' });
        expect(next.records.map((r) => r.message_id)).toEqual([3, 4]);
        expect(await store.session(ALICE, 'imp')).toMatchObject({ order: 7 });
        const fresh = await store.touchSession(ALICE, 'new', { title: 'N', updatedAt: `${DAY2}T09:00:00` });
        expect(fresh.order).toBeGreaterThan(8);
      }),
    );
  });

  describe('eraseUser', () => {
    it(
      "removes everything of the user, leased jobs too, and reports it; other users' data stays",
      run(async ({ store }) => {
        const { guard } = await turn(store, { message: 'secret one', reply: 'secret two', extract: true });
        await store.appendTurn({
          userId: ALICE,
          sessionId: 's1',
          entries: [{ message: { role: 'user', content: 'secret three' }, meta: {} }],
          with: ([row]) => ({
            daily: [{ day: DAY1, ts: `${DAY1}T10:30:00`, sessionId: 's1', role: 'user', content: 'secret three', sessionMessageId: row!.message_id }],
            turnKey: { key: 'tk', value: { failedAttempts: 1, at: 5 } },
          }),
        });
        expect(await store.turnKey(ALICE, 's1', 'tk')).toEqual({ failedAttempts: 1, at: 5 });
        await store.appendSummary(ALICE, 's1', summary(1, 2, null), { ...guard, sessionOrder: await sessionOrder(store, ALICE, 's1') });
        await store.forkSession(ALICE, { sourceId: 's1', messageId: 2, targetId: 'f1', title: 'Fork', now: `${DAY1}T12:00:00` });
        const facts = await factChange(store, ALICE, [{ text: 'Alice has a secret' }]);
        await store.commitFacts(ALICE, { ...facts.change, longTerm: { content: 'a secret line', ts: `${DAY1}T12:00:00`, source: 'set' } }, { generation: facts.generation });
        await store.jobs.enqueue([{ kind: 'summarize', userId: ALICE, payload: { sessionId: 's1' } }]);
        const [leased] = await store.jobs.lease('extract', { limit: 1, leaseMs: LONG_MS });
        await turn(store, { userId: BOB, message: 'bob stays', reply: 'yes', extract: true });

        const report = await store.eraseUser(ALICE);
        expect(report.conversations).toBeGreaterThanOrEqual(2);
        expect(report.keys).toBeGreaterThan(0);
        expect(await store.hasData(ALICE)).toBe(false);
        expect(await store.users()).toEqual([BOB]);
        expect(await store.sessions(ALICE)).toEqual([]);
        for (const s of ['s1', 'f1']) {
          expect(await store.transcripts.range(sessionConversationId(ALICE, s))).toEqual([]);
          expect(await listSummaries(store.transcripts, sessionConversationId(ALICE, s))).toEqual([]);
        }
        expect(await store.days(ALICE)).toEqual([]);
        expect(await store.dialogueLog(ALICE)).toEqual([]);
        expect(await store.longTermVersions(ALICE)).toEqual([]);
        expect(await store.factHistory(ALICE)).toEqual([]);
        expect(await store.factsState(ALICE)).toMatchObject({ current: [], nextSeq: 1 });
        expect(await store.rank(ALICE, { terms: queryTerms('secret'), filters: {}, limit: 10 })).toEqual([]);
        for (const kind of ['extract', 'embed', 'summarize'] as const) {
          expect(await store.jobs.counts(kind, ALICE)).toEqual({ pending: 0, retrying: 0, dead: 0 });
        }
        // The job that was running finds its lease gone: its outcome and effects are no-ops.
        await store.jobs.complete(leased!);
        await store.jobs.fail(leased!, errorOf('late'), undefined);
        expect(await store.jobs.dead('extract', { limit: 10, userId: ALICE })).toEqual([]);
        const late = await factChange(store, ALICE, [{ text: 'late fact' }]);
        await expectStale(store.commitFacts(ALICE, late.change, { generation: late.generation, job: leased! }), 'lease_lost');
        expect(await store.factHistory(ALICE)).toEqual([]);
        // Bob's are untouched.
        expect((await store.dailyDay(BOB, DAY1)).map((r) => r.content)).toEqual(['bob stays', 'yes']);
        expect((await store.jobs.counts('extract', BOB)).pending).toBe(1);
        expect(await store.transcripts.range(sessionConversationId(BOB, 's1'))).toHaveLength(2);
        // Turn keys and fork links went too: the same ids start afresh.
        expect(await store.turnKey(ALICE, 's1', 'tk')).toBeUndefined();
        await turn(store, { message: 'new life', reply: 'hello again' });
        await store.forkSession(ALICE, { sourceId: 's1', messageId: 1, targetId: 'f1', title: 'Fork again', now: `${DAY1}T13:00:00` });
        expect((await store.transcripts.range(sessionConversationId(ALICE, 'f1'))).map((r) => r.message.content)).toEqual(['new life']);
        expect(await store.users()).toEqual([ALICE, BOB]);
        // Erasing a user with nothing is harmless.
        await store.eraseUser('nobody');
      }),
    );
  });
}
