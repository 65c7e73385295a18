import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FactConflictError } from '../../src/recall/index.ts';
import { normalizeFact, factTokens, isNearDuplicate, shapeOf } from '../../src/recall/facts/fact-text.ts';
import { commit } from '../../src/recall/storage/lmdb/recall-dbs.ts';
import { writeLongTerm } from '../../src/recall/storage/lmdb/long-term-store.ts';
import { openRecallDbs } from '../../src/recall/storage/lmdb/recall-dbs.ts';
import type { Job } from '../../src/recall/storage/job-queue.ts';
import { itLmdb, onPostgres, openRecall, type RecallFixture } from '../support/recall-fixture.ts';
import { callsTools, says, scriptedLlm, toolCall } from '../support/scripted-llm.ts';

let fx: RecallFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

const U = 'alice';

/**
 * The first turn's extraction job (session `s`, reply 2) failed `attempts` times and waits
 * `wait`: due `wait` after its last failure, which came after `since` (default: its queuing) and
 * before now, both by the store's clock. Returns the job as the queue stores it.
 */
async function expectWaiting(attempts: number, wait: number, since?: number): Promise<Job<'extract'>> {
  const job = (await fx!.store.jobs.get('extract', U, 's/2'))!;
  expect(job).toMatchObject({ attempts, lastError: { code: 'extraction_failed' } });
  expect(Date.parse(job.nextAt!) - wait).toBeGreaterThanOrEqual(since ?? Date.parse(job.queuedAt));
  // The only extraction job queued: what is left of its wait, from now.
  expect(await fx!.store.jobs.nextDue('extract')).toBeLessThanOrEqual(wait);
  return job;
}

/**
 * The waiting `job`'s backoff passes; returns the store's time then (ms), before its retry. On
 * LMDB the queue keeps the injected clock, which moves to the job's due time. PostgreSQL's
 * queue keeps the database's time, which a test cannot move: the job is made due now through the
 * port (`schedule` only ever brings a queued job's due time sooner, keeping its attempts).
 */
async function backoffPasses(job: Job<'extract'>): Promise<number> {
  const dueAt = Date.parse(job.nextAt!);
  if (!onPostgres) {
    fx!.clock.advance(dueAt - fx!.clock.now());
    return dueAt;
  }
  // Now by the database's clock, read as the due time less the wait left (the job is the only one queued).
  const now = dueAt - (await fx!.store.jobs.nextDue('extract'))!;
  await fx!.store.jobs.schedule({ kind: 'extract', userId: job.userId, payload: job.payload }, 0);
  return now;
}

describe('the text rules', () => {
  it('normalizes width, case, punctuation and spaces alike', () => {
    expect(normalizeFact('  Likes   GREEN tea!! ')).toBe('likes green tea');
    expect(normalizeFact('Ｌｉｋｅｓ　tea。')).toBe('likes tea');
  });

  it('tokenizes Latin by words and CJK by character bigrams', () => {
    expect(factTokens('Likes tea')).toEqual(['likes', 'tea']);
    expect(factTokens('喜欢喝茶')).toEqual(['喜欢', '欢喝', '喝茶']);
  });

  it('calls texts with token-set Jaccard >= 0.8 near-duplicates, and not others', () => {
    expect(isNearDuplicate(shapeOf('the user likes green tea a lot'), shapeOf('The user likes green tea, a lot!'))).toBe(true);
    expect(isNearDuplicate(shapeOf('the user really likes green tea a lot'), shapeOf('the user likes green tea a lot'))).toBe(true);
    expect(isNearDuplicate(shapeOf('likes tea'), shapeOf('likes coffee'))).toBe(false);
  });
});

describe('entries with history', () => {
  it('a fact with the key of a current one supersedes it: the old one ends and points at the new', async () => {
    fx = openRecall();
    const first = await fx.recall.remember(U, { text: 'favorite drink is tea', key: 'drink' });
    expect(first.status).toBe('added');
    expect(first.entry).toMatchObject({ id: 'm1', userId: U, key: 'drink', version: 1, source: { via: 'api' } });
    fx.clock.advance(1000);
    const second = await fx.recall.remember(U, { text: 'favorite drink is coffee', key: 'drink' });
    expect(second).toMatchObject({ status: 'superseded', entry: { id: 'm2', version: 2, supersedes: 'm1', verdict: { verdict: 'update', by: 'key' } } });
    expect((await fx.recall.listMemory(U)).map((e) => e.text)).toEqual(['favorite drink is coffee']);
    const history = await fx.recall.memoryHistory(U);
    expect(history.map((e) => [e.id, e.validTo !== undefined, e.supersededBy])).toEqual([
      ['m1', true, 'm2'],
      ['m2', false, undefined],
    ]);
    expect(history[0]!.validTo).toBe(history[1]!.validFrom);
  });

  it('as of a time answers what was believed then', async () => {
    fx = openRecall();
    await fx.recall.remember(U, { text: 'lives in Paris', key: 'city' });
    const before = new Date(fx.clock.now()).toISOString();
    fx.clock.advance(60_000);
    await fx.recall.remember(U, { text: 'lives in Berlin', key: 'city' });
    expect((await fx.recall.listMemory(U, { asOf: before })).map((e) => e.text)).toEqual(['lives in Paris']);
    expect((await fx.recall.listMemory(U)).map((e) => e.text)).toEqual(['lives in Berlin']);
    expect(await fx.recall.listMemory(U, { asOf: '2000-01-01T00:00:00Z' })).toEqual([]);
    await expect(fx.recall.listMemory(U, { asOf: 'yesterday-ish' })).rejects.toMatchObject({ code: 'invalid_message' });
  });

  it('the same fact twice, or nearly the same, is stored once and never deletes the first', async () => {
    fx = openRecall();
    await fx.recall.remember(U, { text: 'The user likes green tea a lot' });
    expect((await fx.recall.remember(U, { text: 'the user likes green tea a lot' })).status).toBe('duplicate');
    expect((await fx.recall.remember(U, { text: 'The user likes green tea, a lot!' })).status).toBe('duplicate');
    expect((await fx.recall.listMemory(U)).map((e) => e.id)).toEqual(['m1']);
    expect(await fx.recall.memoryHistory(U)).toHaveLength(1);
  });

  it('a keyed fact that a keyless entry already says takes that entry over, so the next change of the key replaces it', async () => {
    fx = openRecall();
    await fx.recall.remember(U, { text: 'favorite drink is tea' });
    const keyed = await fx.recall.remember(U, { text: 'Favorite drink is tea', key: 'drink' });
    expect(keyed).toMatchObject({ status: 'superseded', entry: { key: 'drink', supersedes: 'm1', verdict: { verdict: 'duplicate', by: 'rules' } } });
    await fx.recall.remember(U, { text: 'favorite drink is coffee', key: 'drink' });
    expect((await fx.recall.listMemory(U)).map((e) => e.text)).toEqual(['favorite drink is coffee']);
  });

  it('forget ends validity: gone from the current view, kept in the history', async () => {
    fx = openRecall();
    const { entry } = await fx.recall.remember(U, { text: 'has a cat' });
    fx.clock.advance(1000);
    const ended = await fx.recall.forgetMemory(U, entry.id);
    expect(ended.validTo).toBeDefined();
    expect(ended.supersededBy).toBeUndefined();
    expect(await fx.recall.listMemory(U)).toEqual([]);
    expect(await fx.recall.memoryHistory(U)).toHaveLength(1);
    await expect(fx.recall.forgetMemory(U, entry.id)).rejects.toMatchObject({ code: 'memory_not_found' });
  });

  it("one user's ids reach nothing of another's", async () => {
    fx = openRecall();
    const { entry } = await fx.recall.remember(U, { text: 'has a cat' });
    await expect(fx.recall.forgetMemory('bob', entry.id)).rejects.toMatchObject({ code: 'memory_not_found' });
    await expect(fx.recall.updateMemory('bob', entry.id, { text: 'x', version: 1 })).rejects.toMatchObject({ code: 'memory_not_found' });
    expect(await fx.recall.listMemory('bob')).toEqual([]);
    expect(await fx.recall.listMemory(U)).toHaveLength(1);
  });

  it('bad input is refused and stores nothing', async () => {
    fx = openRecall();
    await expect(fx.recall.remember(U, { text: '  ' })).rejects.toMatchObject({ code: 'invalid_message' });
    await expect(fx.recall.remember(U, { text: 'x'.repeat(2001) })).rejects.toMatchObject({ code: 'invalid_message' });
    await expect(fx.recall.remember(U, { text: 'ok', key: 'a\u0000b' })).rejects.toMatchObject({ code: 'invalid_message' });
    await expect(fx.recall.updateMemory(U, 'm1', { text: 'x', version: 0 })).rejects.toMatchObject({ code: 'invalid_message' });
    expect(await fx.recall.memoryHistory(U)).toEqual([]);
  });
});

describe('compare-and-set updates', () => {
  it('of many concurrent updates from one version exactly one wins; the others get memory_conflict', async () => {
    fx = openRecall();
    const { entry } = await fx.recall.remember(U, { text: 'prefers window seats' });
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) => fx!.recall.updateMemory(U, entry.id, { text: `prefers seat number ${i}`, version: 1 })),
    );
    const won = results.filter((r) => r.status === 'fulfilled');
    const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(19);
    for (const r of lost) {
      expect(r.reason).toBeInstanceOf(FactConflictError);
      expect(r.reason).toMatchObject({ code: 'memory_conflict' });
    }
    const current = await fx.recall.listMemory(U);
    expect(current).toHaveLength(1);
    expect(current[0]).toMatchObject({ version: 2, supersedes: entry.id });
    expect(current[0]!.text).toBe((won[0] as PromiseFulfilledResult<{ entry: { text: string } }>).value.entry.text);
  });

  it('a stale version is refused even on the current entry', async () => {
    fx = openRecall();
    const { entry } = await fx.recall.remember(U, { text: 'likes jazz' });
    const next = await fx.recall.updateMemory(U, entry.id, { text: 'likes blues', version: 1 });
    await expect(fx.recall.updateMemory(U, next.entry.id, { text: 'likes rock', version: 1 })).rejects.toMatchObject({ code: 'memory_conflict' });
    await expect(fx.recall.updateMemory(U, entry.id, { text: 'likes rock', version: 1 })).rejects.toMatchObject({
      code: 'memory_conflict',
      actual: { version: 2, current: next.entry.id },
    });
  });

  it('an update that says what another current entry says merges into it', async () => {
    fx = openRecall();
    await fx.recall.remember(U, { text: 'likes hiking' });
    const b = await fx.recall.remember(U, { text: 'likes swimming' });
    const w = await fx.recall.updateMemory(U, b.entry.id, { text: 'Likes hiking.', version: 1 });
    expect(w).toMatchObject({ status: 'duplicate', entry: { id: 'm1' } });
    expect((await fx.recall.listMemory(U)).map((e) => e.text)).toEqual(['likes hiking']);
  });
});

describe('the document view', () => {
  it('getLongTerm renders the entries; a document write becomes one entry per line', async () => {
    fx = openRecall();
    await fx.recall.setLongTerm(U, 'likes tea\n- lives in Beijing');
    expect((await fx.recall.listMemory(U)).map((e) => e.text)).toEqual(['likes tea', 'lives in Beijing']);
    await fx.recall.remember(U, { text: 'born in May' });
    expect(await fx.recall.getLongTerm(U)).toBe('likes tea\n- lives in Beijing\n- born in May');
    const [tea] = await fx.recall.listMemory(U);
    await fx.recall.updateMemory(U, tea!.id, { text: 'likes coffee', version: 1 });
    expect(await fx.recall.getLongTerm(U)).toBe('likes coffee\n- lives in Beijing\n- born in May');
  });

  it('a rewritten document supersedes reworded lines and ends dropped ones, keeping them in the history', async () => {
    fx = openRecall();
    await fx.recall.setLongTerm(U, 'the user likes green tea a lot\nhas a dog');
    await fx.recall.setLongTerm(U, 'The user likes green tea, a lot!\nhas a cat');
    const history = await fx.recall.memoryHistory(U);
    expect(history.map((e) => [e.text, e.validTo === undefined, e.supersededBy])).toEqual([
      ['the user likes green tea a lot', false, 'm3'],
      ['has a dog', false, undefined],
      ['The user likes green tea, a lot!', true, undefined],
      ['has a cat', true, undefined],
    ]);
    expect(await fx.recall.getLongTerm(U)).toBe('The user likes green tea, a lot!\nhas a cat');
    expect(await fx.recall.undoLongTerm(U)).toBe('the user likes green tea a lot\nhas a dog');
  });

  it('an imported memory.md exports back byte for byte, and stays the document after a change renders', async () => {
    const src = mkdtempSync(join(tmpdir(), 'mnemo-facts-src-'));
    const out = mkdtempSync(join(tmpdir(), 'mnemo-facts-out-'));
    try {
      const raw = '# 记忆\n\n- 用户喜欢喝茶  \n- 生日是五月三号\n\n';
      mkdirSync(join(src, U));
      writeFileSync(join(src, U, 'memory.md'), raw);
      fx = openRecall();
      await fx.recall.importDemoFolder(src);
      expect((await fx.recall.listMemory(U)).map((e) => [e.text, e.source.via])).toEqual([
        ['用户喜欢喝茶', 'import'],
        ['生日是五月三号', 'import'],
      ]);
      await fx.recall.exportDemoFolder(out);
      expect(readFileSync(join(out, U, 'memory.md'), 'utf8')).toBe(raw);
      expect(await fx.recall.getLongTerm(U)).toBe(raw.trim());
      const [, birthday] = await fx.recall.listMemory(U);
      await fx.recall.forgetMemory(U, birthday!.id);
      await fx.recall.remember(U, { text: '住在北京' });
      expect(await fx.recall.getLongTerm(U)).toBe('# 记忆\n\n- 用户喜欢喝茶  \n- 住在北京');
    } finally {
      rmSync(src, { recursive: true, force: true });
      rmSync(out, { recursive: true, force: true });
    }
  });

  // LMDB's: the data an older version left in its databases.
  itLmdb('a long-term document written before facts existed still reads, and converts on first use', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mnemo-facts-legacy-'));
    try {
      fx = openRecall({ dir });
      // What an older version left: a document version and no entries.
      const dbs = openRecallDbs({ root: fx.env.root, path: dir });
      await commit(dbs, () => writeLongTerm(dbs, U, 'likes tea\nborn in May', 'remember_note', '2026-04-08T10:00:00'));
      await fx.recall.close();
      await fx.close();
      fx = openRecall({ dir });
      expect(await fx.recall.getLongTerm(U)).toBe('likes tea\nborn in May');
      expect((await fx.recall.listMemory(U)).map((e) => [e.text, e.source.via])).toEqual([
        ['likes tea', 'document'],
        ['born in May', 'document'],
      ]);
      expect((await fx.recall.longTermHistory(U)).map((v) => v.content)).toEqual(['likes tea\nborn in May']);
    } finally {
      await fx?.close();
      fx = undefined;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('ranked injection', () => {
  it('a small memory is injected whole, exactly as the Demo did', async () => {
    fx = openRecall();
    await fx.recall.setLongTerm(U, 'likes tea');
    await fx.recall.chat({ userId: U, sessionId: 's', message: 'hi' });
    expect((await fx.recall.dialogueLog(U))[0]!.memoryContext).toBe('[SESSION]\nuser: hi\n[LONG_TERM]\nlikes tea');
  });

  it('past the token budget the entries relevant to the message go in, and the rest stay out', async () => {
    fx = openRecall({ longTermTokens: 40 });
    for (let i = 0; i < 60; i++) await fx.recall.remember(U, { text: `note number ${i} about topic${i}` });
    await fx.recall.remember(U, { text: 'favorite color is teal' });
    await fx.recall.chat({ userId: U, sessionId: 's', message: 'what is my favorite color?' });
    const context = (await fx.recall.dialogueLog(U))[0]!.memoryContext;
    const section = context.split('[LONG_TERM]\n')[1]!.split('\n');
    expect(section[0]).toBe('favorite color is teal');
    expect(section.length).toBeLessThan(61);
    const ranked = await fx.recall.rankMemory(U, 'topic7', { tokenBudget: 40 });
    expect(ranked[0]!.entry.text).toBe('note number 7 about topic7');
    expect(ranked.reduce((n, r) => n + r.tokens, 0)).toBeLessThanOrEqual(40);
  });

  it('remember_note in a turn whose section was cut keeps the entries the model never saw', async () => {
    const llm = scriptedLlm([callsTools(toolCall('n', 'remember_note', { note: 'favorite color is teal\nlikes tea' })), says('ok'), says('t')]);
    fx = openRecall({ llm, longTermTokens: 30 });
    for (let i = 0; i < 40; i++) await fx.recall.remember(U, { text: `note number ${i} about topic${i}` });
    await fx.recall.remember(U, { text: 'favorite color is teal' });
    const before = (await fx.recall.listMemory(U)).map((e) => e.text);
    await fx.recall.chat({ userId: U, sessionId: 's', message: 'my favorite color?' });
    const shown = (await fx.recall.dialogueLog(U))[0]!.memoryContext.split('[LONG_TERM]\n')[1]!.split('\n');
    expect(shown[0]).toBe('favorite color is teal');
    expect(shown.length).toBeLessThan(10);
    // Shown and left out of the note: ended. Never shown: kept. New in the note: added.
    const expected = [...before.filter((t) => t === 'favorite color is teal' || !shown.includes(t)), 'likes tea'];
    expect((await fx.recall.listMemory(U)).map((e) => e.text).sort()).toEqual(expected.sort());
  });
});

describe('the facts tools', () => {
  it('remember, update_memory and forget work one fact at a time', async () => {
    fx = openRecall({ language: 'en' });
    const tools = Object.fromEntries(fx.recall.memoryTools(U, 's').map((t) => [t.name, t]));
    const run = (name: string, args: Record<string, unknown>) => tools[name]!.execute(args as never, {} as never);
    expect(await run('remember', { text: 'likes tea', key: 'drink' })).toBe('stored m1');
    expect(await run('remember', { text: 'Likes tea!' })).toBe('already remembered: m1');
    expect(await run('update_memory', { key: 'drink', text: 'likes coffee' })).toBe('updated m2');
    expect(await run('forget', { memory: 'likes coffee' })).toBe('forgotten m2');
    expect(await run('forget', { id: 'm2' })).toBe('no such memory');
    expect(await fx.recall.listMemory(U)).toEqual([]);
    expect((await fx.recall.memoryHistory(U))[0]!.source).toEqual({ via: 'tool', sessionId: 's' });
  });

  it('answer in Chinese by default (the server language)', async () => {
    fx = openRecall();
    const tools = Object.fromEntries(fx.recall.memoryTools(U, 's').map((t) => [t.name, t]));
    const run = (name: string, args: Record<string, unknown>) => tools[name]!.execute(args as never, {} as never);
    expect(await run('remember', { text: 'likes tea', key: 'drink' })).toBe('已记住 m1');
    expect(await run('remember', { text: 'Likes tea!' })).toBe('已经记住过：m1');
    expect(await run('update_memory', { key: 'drink', text: 'likes coffee' })).toBe('已修改 m2');
    expect(await run('forget', { memory: 'likes coffee' })).toBe('已忘记 m2');
    expect(await run('forget', { id: 'm2' })).toBe('没有这条记忆');
    expect(await run('remember', { text: ' ' })).toBe('没有要记住的内容');
  });
});

describe('with a facts model', () => {
  it('the judge decides keyless facts: a contradiction supersedes the old fact (never deletes both), and the verdict is kept', async () => {
    const judge = scriptedLlm([says('{"verdict": "contradiction", "target": "m1"}')]);
    fx = openRecall({ factsLlm: judge });
    await fx.recall.remember(U, { text: 'is a vegetarian' });
    const w = await fx.recall.remember(U, { text: 'is not a vegetarian anymore' });
    expect(w).toMatchObject({ status: 'superseded', entry: { verdict: { verdict: 'contradiction', target: 'm1', by: 'model' } } });
    expect((await fx.recall.listMemory(U)).map((e) => e.text)).toEqual(['is not a vegetarian anymore']);
    expect(judge.calls).toHaveLength(1);
  });

  it('a judge that fails leaves the rules to decide, and says so on the entry', async () => {
    fx = openRecall({ factsLlm: scriptedLlm([says('no idea')]) });
    await fx.recall.remember(U, { text: 'likes tea' });
    const w = await fx.recall.remember(U, { text: 'likes tea in the morning' });
    expect(w).toMatchObject({ status: 'added', entry: { verdict: { verdict: 'new', by: 'rules' } } });
    expect(await fx.recall.listMemory(U)).toHaveLength(2);
  });

  it('facts are extracted from a finished turn in the background, with the turn as source', async () => {
    const llm = scriptedLlm([says('noted'), says('title')]);
    const facts = scriptedLlm([says('{"facts": [{"text": "favorite drink is tea", "key": "drink"}]}')]);
    fx = openRecall({ llm, factsLlm: facts });
    await fx.recall.chat({ userId: U, sessionId: 's', message: 'I love tea' });
    await fx.recall.extractionIdle();
    expect(await fx.recall.listMemory(U)).toEqual([
      expect.objectContaining({ text: 'favorite drink is tea', key: 'drink', source: { via: 'extraction', sessionId: 's', messageIds: [1, 2] } }),
    ]);
  });

  // The backoff cases read the failed job's due time through the queue's port (`get`, `nextDue`),
  // by the store's clock. They move time past a backoff the way each engine allows
  // (`backoffPasses`): LMDB's queue keeps the injected clock; PostgreSQL's keeps the database's,
  // which a test cannot move, so there the wait is cut short through the port.
  it('a turn whose extraction failed is retried at the next start, after its backoff', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mnemo-facts-resume-'));
    try {
      const extraction = { maxAttempts: 3, backoffMs: 60_000 };
      fx = openRecall({ dir, extraction, llm: scriptedLlm([says('noted'), says('title')]), factsLlm: scriptedLlm([new Error('down')]) });
      await fx.recall.chat({ userId: U, sessionId: 's', message: 'I live in Oslo' });
      await fx.recall.extractionIdle();
      expect(await fx.recall.listMemory(U)).toEqual([]);
      expect(await fx.recall.extractionStatus()).toMatchObject({ pending: 1, retrying: 1, dead: 0 });
      const failed = await expectWaiting(1, 60_000);
      const clock = fx.clock;
      await fx.close();
      // Between the two starts the backoff passes: LMDB's injected clock moves to the due time.
      // PostgreSQL's time cannot be moved: the new start's queue is told the job is due in 100 ms
      // (`schedule`, sooner only), and its worker wakes for it.
      if (!onPostgres) clock.advance(Date.parse(failed.nextAt!) - clock.now());
      let retried!: () => void;
      const called = new Promise<void>((resolve) => (retried = resolve));
      const facts = scriptedLlm(() => {
        retried();
        return says('{"facts": [{"text": "lives in Oslo"}]}');
      });
      fx = openRecall({ dir, clock, extraction, factsLlm: facts });
      if (onPostgres) await fx.store.jobs.schedule({ kind: 'extract', userId: U, payload: failed.payload }, 100);
      await called;
      await fx.recall.extractionIdle();
      expect((await fx.recall.listMemory(U)).map((e) => e.text)).toEqual(['lives in Oslo']);
      expect(await fx.recall.extractionStatus()).toMatchObject({ pending: 0, retrying: 0, dead: 0 });
    } finally {
      await fx?.close();
      fx = undefined;
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a job that keeps failing is retried maxAttempts times, then dead-lettered, and the same user\'s later turns are still extracted', async () => {
    // The model fails every extraction of "poison" (an error, then answers that are not JSON).
    let poisonCalls = 0;
    const facts = scriptedLlm((messages) => {
      const turn = String(messages[1]!.content);
      if (turn.includes('poison')) {
        poisonCalls++;
        if (poisonCalls === 1) throw new Error('HTTP 500');
        return says('sorry, no JSON today');
      }
      return says('{"facts": [{"text": "likes tea", "key": "drink"}]}');
    });
    fx = openRecall({ llm: scriptedLlm([], says('ok')), factsLlm: facts, extraction: { maxAttempts: 3, backoffMs: 0 } });
    await fx.recall.chat({ userId: U, sessionId: 's', message: 'poison' });
    await fx.recall.chat({ userId: U, sessionId: 's', message: 'I like tea' });
    await fx.recall.extractionIdle();
    expect(poisonCalls).toBe(3);
    expect((await fx.recall.listMemory(U)).map((e) => e.text)).toEqual(['likes tea']);
    const status = await fx.recall.extractionStatus();
    expect(status).toMatchObject({ pending: 0, retrying: 0, dead: 1 });
    expect(status.deadJobs).toEqual([
      expect.objectContaining({ userId: U, sessionId: 's', replyId: 2, messageIds: [1, 2], attempts: 3, lastError: { code: 'invalid_extraction_answer', message: 'the model did not answer the JSON object asked for' } }),
    ]);
    // Dead is final: a later turn does not try it again.
    await fx.recall.chat({ userId: U, sessionId: 's', message: 'I like tea a lot' });
    await fx.recall.extractionIdle();
    expect(poisonCalls).toBe(3);
    // Erasing the user erases its dead letters too.
    await fx.recall.eraseUser(U);
    expect(await fx.recall.extractionStatus()).toEqual({ pending: 0, retrying: 0, dead: 0, deadJobs: [] });
  });

  it('a failed job waits its exponential backoff while later jobs go ahead', async () => {
    let failures = 0;
    const facts = scriptedLlm((messages) => {
      if (String(messages[1]!.content).includes('flaky') && failures < 2) {
        failures++;
        throw new Error('HTTP 503');
      }
      return says(String(messages[1]!.content).includes('flaky') ? '{"facts": [{"text": "is flaky"}]}' : '{"facts": []}');
    });
    fx = openRecall({ llm: scriptedLlm([], says('ok')), factsLlm: facts, extraction: { maxAttempts: 5, backoffMs: 60_000 } });
    const attemptsOfFlaky = () => facts.calls.filter((c) => String(c.messages[1]!.content).includes('flaky')).length;
    await fx.recall.chat({ userId: U, sessionId: 's', message: 'flaky' });
    await fx.recall.extractionIdle();
    expect(attemptsOfFlaky()).toBe(1);
    const first = await expectWaiting(1, 60_000);
    // While it waits, a later turn is extracted and the flaky one is not tried.
    await fx.recall.chat({ userId: U, sessionId: 's', message: 'hello' });
    await fx.recall.extractionIdle();
    expect(attemptsOfFlaky()).toBe(1);
    expect(facts.calls).toHaveLength(2);
    expect(await fx.recall.extractionStatus()).toMatchObject({ pending: 1, retrying: 1 });
    const due = await backoffPasses(first);
    await fx.recall.chat({ userId: U, sessionId: 's', message: 'hello again' });
    await fx.recall.extractionIdle();
    expect(attemptsOfFlaky()).toBe(2);
    // The second failure doubles the wait: 2 minutes, from a failure after the job fell due.
    const second = await expectWaiting(2, 120_000, due);
    await fx.recall.chat({ userId: U, sessionId: 's', message: 'still here' });
    await fx.recall.extractionIdle();
    expect(attemptsOfFlaky()).toBe(2);
    await backoffPasses(second);
    await fx.recall.chat({ userId: U, sessionId: 's', message: 'and again' });
    await fx.recall.extractionIdle();
    expect(attemptsOfFlaky()).toBe(3);
    expect((await fx.recall.listMemory(U)).map((e) => e.text)).toEqual(['is flaky']);
    expect(await fx.recall.extractionStatus()).toMatchObject({ pending: 0, dead: 0 });
    expect(await fx.store.jobs.get('extract', U, first.key)).toBeUndefined();
  });

  it('refuses invalid retry options', () => {
    expect(() => openRecall({ extraction: { maxAttempts: 0 } })).toThrow(expect.objectContaining({ code: 'invalid_option' }));
  });

  it('offline, no turn is queued and remember_note still writes entries', async () => {
    fx = openRecall();
    await fx.recall.chat({ userId: U, sessionId: 's', message: 'hi' });
    const tools = Object.fromEntries(fx.recall.memoryTools(U, 's').map((t) => [t.name, t]));
    await tools['remember_note']!.execute({ note: 'likes tea' } as never, {} as never);
    expect((await fx.recall.listMemory(U)).map((e) => e.text)).toEqual(['likes tea']);
    expect(await fx.store.jobs.counts('extract')).toEqual({ pending: 0, retrying: 0, dead: 0 });
  });
});
