import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { JOURNAL_FILE } from '../../src/memory/lmdb/journal.ts';
import { rebuildEnvironment } from '../../src/memory/lmdb/environment-rebuild.ts';
import { join } from 'node:path';
import type { Key, RootDatabase } from 'lmdb';
import { afterEach, describe, expect, it } from 'vitest';
import type { LlmResponse, LlmService } from '../../src/llm/llm-service.ts';
import type { Message } from '../../src/message.ts';
import { CONVERSATION_DBS, FORKS_DB, MESSAGES_DB } from '../../src/memory/lmdb/lmdb-table.ts';
import { createSummarizer } from '../../src/provider/summarizer.ts';
import { summaryConversationId } from '../../src/provider/summary-record.ts';
import { sessionConversationId, sessionConversationPrefix } from '../../src/recall/recall-ids.ts';
import { DB_NAMES, HIGH, MARKER_START } from '../../src/recall/storage/lmdb/recall-dbs.ts';
import { EMBED_DB_NAMES } from '../../src/recall/storage/lmdb/embeddings/embed-dbs.ts';
import { startEmbeddingsStub } from '../support/embeddings-stub.ts';
import { startRuntime, type Runtime } from '../../src/runtime.ts';
import { itLmdb, manualClock, onPostgres, openRecall, ZONE, type RecallFixture } from '../support/recall-fixture.ts';
import { dropSchema, freshSchema } from '../support/postgres-server.ts';
import { callsTools, says, scriptedLlm, toolCall } from '../support/scripted-llm.ts';

let fx: RecallFixture | undefined;
let runtime: Runtime | undefined;
let dir: string | undefined;
let schema: string | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
  await runtime?.stop();
  runtime = undefined;
  if (schema !== undefined) await dropSchema(process.env['MNEMO_PG_URL']!, schema);
  schema = undefined;
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** Each user's messages carry `{USER}_...` markers; the model answers in kind, with tools. */
function markerLlm(): LlmService {
  const who = (messages: readonly Message[]) => (JSON.stringify(messages).includes('ALICE_') ? 'ALICE' : 'BOB');
  return {
    async chat(messages, options): Promise<LlmResponse> {
      const u = who(messages);
      if (options?.tools === undefined) {
        const isSummary = messages[0]?.role === 'system';
        return says(isSummary ? `${u}_SUMMARY_MARKER summary` : `${u}_TITLE_MARKER`);
      }
      if (messages.at(-1)?.role === 'tool') return says(`${u}_REPLY_MARKER done`);
      return callsTools(
        toolCall(`${u}-1`, 'remember_note', { note: `${u}_LONGTERM_MARKER likes oolong` }),
        toolCall(`${u}-2`, 'search_session', { keyword: `${u}_MSG` }),
      );
    },
  };
}

const ALICE_MARKERS = ['ALICE_MSG', 'ALICE_REPLY', 'ALICE_TITLE', 'ALICE_LONGTERM', 'ALICE_SUMMARY', 'ALICE_LT2', 'ALICE_GHOST'];
const BOB_MARKERS = ['BOB_MSG', 'BOB_REPLY', 'BOB_TITLE', 'BOB_LONGTERM', 'BOB_SUMMARY'];
/** A session id whose conversation id is hashed (`session#...`): not under the user's prefix. */
const LONG_SESSION = '😀'.repeat(128);

/** `durable`: with fsyncs, and so with the write-ahead journal (noSync has none). */
async function startWithRecall(durable = false): Promise<Runtime> {
  const name = `erase_${Math.random().toString(36).slice(2, 8)}`;
  const recall = { llm: markerLlm(), pool: false as const, clock: manualClock(), timeZone: ZONE, summary: { keepLast: 1, maxTokens: 20 } };
  if (onPostgres) return startRuntime({ name, storage: { postgres: process.env['MNEMO_PG_URL']!, schema: (schema = freshSchema('erase')) }, recall });
  dir = mkdtempSync(join(tmpdir(), 'mnemo-erase-'));
  return startRuntime({ name, dataDir: join(dir, 'data'), lmdb: { noSync: !durable }, recall });
}

async function writeUser(rt: Runtime, user: 'alice' | 'bob'): Promise<void> {
  const U = user.toUpperCase();
  for (const s of [`${user}-s1`, `${user}-s2`]) {
    for (let i = 1; i <= 3; i++) {
      await rt.recall.chat({ userId: user, sessionId: s, message: `${U}_MSG_MARKER ${i} ${'some words to summarize '.repeat(4)}` });
    }
  }
  await rt.recall.summaryIdle();
}

function lmdbRoot(rt: Runtime): RootDatabase {
  if (rt.storage.kind !== 'lmdb') throw new Error('expected LMDB');
  return rt.storage.root;
}

/** The user a recall key belongs to: its first part, or its second after a marker. */
function keyUser(key: Key): unknown {
  // lmdb-js reads a one-part key `[userId]` back as the bare string.
  if (typeof key === 'string') return key;
  if (!Array.isArray(key)) return undefined;
  return typeof key[0] === 'string' && key[0].startsWith(MARKER_START) ? key[1] : key[0];
}

function recallKeyUsers(root: RootDatabase): Map<string, Set<unknown>> {
  const out = new Map<string, Set<unknown>>();
  for (const name of Object.values(DB_NAMES)) {
    const users = new Set<unknown>();
    for (const key of root.openDB(name, { encoding: 'json' }).getKeys()) users.add(keyUser(key));
    out.set(name, users);
  }
  return out;
}

/** The fork links (`forks` db: `['of', fork]`, `['by', source, fork]`) naming the user's conversations. */
function forkLinksOf(root: RootDatabase, user: string): Key[] {
  const prefix = sessionConversationPrefix(user);
  return [...root.openDB(FORKS_DB, { encoding: 'json' }).getKeys()].filter(
    (key) => Array.isArray(key) && key.slice(1).some((part) => typeof part === 'string' && part.startsWith(prefix)),
  );
}

function conversationsOf(root: RootDatabase): Set<string> {
  const ids = new Set<string>();
  for (const key of root.openDB(MESSAGES_DB, { encoding: 'json' }).getKeys()) ids.add((key as [string, number])[0]);
  return ids;
}

describe('recall.eraseUser', () => {
  // itLmdb: what LMDB's databases and files hold after an erasure (PostgreSQL's tables are
  // checked in test/postgres/erasure.test.ts and recall-runtime.test.ts).
  itLmdb('removes every byte of the user: a rebuilt copy of the environment holds no marker or id of theirs, and all of the other user', async () => {
    runtime = await startWithRecall(true);
    const rt = runtime;
    await writeUser(rt, 'alice');
    await writeUser(rt, 'bob');
    await rt.recall.setLongTerm('alice', 'ALICE_LT2_MARKER second version');
    await rt.recall.chat({ userId: 'alice', sessionId: LONG_SESSION, message: 'ALICE_MSG_MARKER in a hashed session' });
    // A transcript the index does not know (written past recall): found by the prefix scan.
    await rt.memory.add(sessionConversationId('alice', 'ghost'), [{ role: 'user', content: 'ALICE_GHOST_MARKER' }]);
    const root = lmdbRoot(rt);

    // The schema's rule, after real writes: every key of every recall db belongs to a user.
    // (A db this scenario leaves empty, e.g. the facts' key index with no keyed fact, holds none.)
    for (const [name, users] of recallKeyUsers(root)) {
      expect([...users].filter((u) => u !== 'alice' && u !== 'bob'), name).toEqual([]);
    }
    const aliceSessions = (await rt.recall.listSessions('alice')).length;
    expect(aliceSessions).toBe(3);
    expect(await createSummarizer(rt.memory).latest(sessionConversationId('alice', 'alice-s1'))).toBeDefined();

    // The ghost row went through the write-ahead journal: its record holds the marker.
    const journal = join(dir!, 'data', JOURNAL_FILE);
    expect(readFileSync(journal).includes('ALICE_GHOST_MARKER')).toBe(true);

    const report = await rt.recall.eraseUser('alice');
    expect(report.conversations).toBeGreaterThanOrEqual(7); // 3 sessions + the ghost + their summaries
    // The journal is zeroed after the erasure: no record of the user's is left in it.
    const journalBytes = readFileSync(journal);
    for (const marker of ALICE_MARKERS) expect(journalBytes.includes(marker), `journal: ${marker}`).toBe(false);

    expect(await rt.recall.listSessions('alice')).toEqual([]);
    expect(await rt.recall.getLongTerm('alice')).toBe('');
    expect(await rt.recall.longTermHistory('alice')).toEqual([]);
    expect(await rt.recall.dialogueLog('alice')).toEqual([]);
    expect(await rt.recall.searchDaily({ userId: 'alice', keyword: '', limit: 200 })).toEqual([]);
    expect(await rt.memory.lastId(sessionConversationId('alice', 'ghost'))).toBe(0);
    expect(await rt.memory.lastId(sessionConversationId('alice', LONG_SESSION))).toBe(0);
    for (const [name, users] of recallKeyUsers(root)) expect([...users].filter((u) => u !== 'bob'), name).toEqual([]);
    expect([...conversationsOf(root)].filter((c) => !c.includes('bob'))).toEqual([]);
    expect((await rt.recall.listSessions('bob')).length).toBe(2);
    expect(await rt.recall.getLongTerm('bob')).toContain('BOB_LONGTERM_MARKER');

    const copy = join(dir!, 'copy');
    mkdirSync(copy);
    await root.flushed;
    // The copy eraseUser(u, { compact: true }) swaps in: rebuilt from what is left.
    await rebuildEnvironment(root, copy);
    const bytes = readFileSync(join(copy, 'data.mdb'));
    for (const marker of ALICE_MARKERS) expect(bytes.includes(marker), marker).toBe(false);
    // Nor their ids (LMDB's page copy would keep an erased key that a branch page has as a separator).
    for (const id of ['alice', 'alice-s1', 'alice-s2']) expect(bytes.includes(id), id).toBe(false);
    for (const marker of BOB_MARKERS) expect(bytes.includes(marker), marker).toBe(true);
    expect(bytes.includes('bob')).toBe(true);
  }, 60_000);

  itLmdb('erases the user’s embeddings: vectors, queued rows and dead letters, and keeps the other user’s', async () => {
    const stub = await startEmbeddingsStub();
    try {
      fx = openRecall({ embeddings: { baseURL: stub.baseURL, apiKey: 'k', model: 'm', retryBaseMs: 1, requestsPerMinute: 60_000, burst: 1000, maxAttempts: 1 } });
      const r = fx.recall;
      for (const u of ['alice', 'bob']) {
        await r.chat({ userId: u, sessionId: 's', message: `${u} parked the car` });
        await r.remember(u, { text: `${u} is allergic to peanuts` });
      }
      await r.embeddingsIdle();
      stub.failNext(1, 400);
      await r.chat({ userId: 'alice', sessionId: 's', message: 'this one dies' });
      await r.embeddingsIdle();
      stub.hold();
      await r.chat({ userId: 'alice', sessionId: 's', message: 'this one waits' });
      const root = fx.env.root;
      const users = (name: string) => [...root.openDB(name, { encoding: 'json' }).getKeys()].map(keyUser);
      expect(users(EMBED_DB_NAMES.vectors)).toContain('alice');
      expect(users(EMBED_DB_NAMES.queue)).toContain('alice');
      expect(users(EMBED_DB_NAMES.dead)).toContain('alice');
      await r.eraseUser('alice');
      for (const name of Object.values(EMBED_DB_NAMES)) expect(users(name).filter((u) => u !== 'bob'), name).toEqual([]);
      expect(users(EMBED_DB_NAMES.vectors).length).toBe(3); // bob's two rows and his fact
      stub.release();
      await r.embeddingsIdle();
      for (const name of Object.values(EMBED_DB_NAMES)) expect(users(name).filter((u) => u !== 'bob'), name).toEqual([]);
    } finally {
      await stub.close();
    }
  });

  itLmdb('erases a key of the user from every db named in DB_NAMES, whatever it holds, and marks under every marker', async () => {
    fx = openRecall();
    await fx.recall.chat({ userId: 'bob', sessionId: 's', message: 'hi' });
    const root = fx.env.root;
    for (const name of [...Object.values(DB_NAMES), ...Object.values(EMBED_DB_NAMES)]) {
      const db = root.openDB(name, { encoding: 'json' });
      await db.put(['alice', 'probe', 1], 1);
      await db.put([`${MARKER_START}some-mark`, 'alice', 'x'], 1);
      await db.put(['alice2', 'probe'], 1); // another user whose id starts with this one's
    }
    await fx.recall.eraseUser('alice');
    for (const name of [...Object.values(DB_NAMES), ...Object.values(EMBED_DB_NAMES)]) {
      const db = root.openDB(name, { encoding: 'json' });
      expect([...db.getKeys({ start: ['alice'], end: ['alice', HIGH] })], name).toEqual([]);
      expect([...db.getKeys({ start: [`${MARKER_START}some-mark`, 'alice'], end: [`${MARKER_START}some-mark`, 'alice', HIGH] })], name).toEqual([]);
      expect(db.get(['alice2', 'probe']), name).toBe(1);
    }
  });

  itLmdb('erases the user’s conversations from every db keyed by conversation (CONVERSATION_DBS)', async () => {
    fx = openRecall();
    await fx.recall.chat({ userId: 'alice', sessionId: 's', message: 'hi' });
    const c = sessionConversationId('alice', 's');
    for (const name of CONVERSATION_DBS) await fx.env.root.openDB(name, { encoding: 'json' }).put([c, 99], 1);
    await fx.recall.eraseUser('alice');
    for (const name of CONVERSATION_DBS) {
      expect([...fx.env.root.openDB(name, { encoding: 'json' }).getKeys({ start: [c], end: [c, HIGH] })], name).toEqual([]);
    }
  });

  it('does not resurrect ids: after the erasure the user’s next turn in the same session starts at message 1', async () => {
    runtime = await startWithRecall();
    const rt = runtime;
    await writeUser(rt, 'alice');
    await rt.recall.eraseUser('alice');
    await rt.recall.chat({ userId: 'alice', sessionId: 'alice-s1', message: 'ALICE_MSG_MARKER again' });
    expect((await rt.recall.getSessionMessages('alice', 'alice-s1')).map((r) => r.messageId)).toEqual([1, 2]);
    const s = summaryConversationId(sessionConversationId('alice', 'alice-s1'));
    expect(await rt.memory.lastId(s)).toBe(0);
  }, 60_000);

  it('waits for the user’s running turn, refuses new calls of that user meanwhile, and lets other users through', async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((r) => (release = r));
    let entered: () => void = () => {};
    const inTurn = new Promise<void>((r) => (entered = r));
    const llm: LlmService = {
      async chat(messages) {
        if (JSON.stringify(messages).includes('slow turn')) {
          entered();
          await held;
        }
        return says('ok');
      },
    };
    fx = openRecall({ llm });
    const turn = fx.recall.chat({ userId: 'alice', sessionId: 's', message: 'slow turn' });
    await inTurn;
    const erasure = fx.recall.eraseUser('alice');
    await expect(fx.recall.chat({ userId: 'alice', sessionId: 's2', message: 'hi' })).rejects.toMatchObject({ code: 'user_erasing' });
    await expect(fx.recall.getLongTerm('alice')).rejects.toMatchObject({ code: 'user_erasing' });
    await expect(fx.recall.eraseUser('alice')).rejects.toMatchObject({ code: 'user_erasing' });
    expect((await fx.recall.chat({ userId: 'bob', sessionId: 's', message: 'hi' })).reply).toBe('ok');
    release();
    expect((await turn).reply).toBe('ok');
    await erasure;
    // The turn that was running finished first, and its rows went with the rest.
    expect(await fx.recall.getSessionMessages('alice', 's')).toEqual([]);
    expect(await fx.recall.listSessions('alice')).toEqual([]);
    expect(await fx.recall.getLongTerm('alice')).toBe('');
    expect((await fx.recall.listSessions('bob')).length).toBe(1);
  });

  it('a fact extraction running when the erasure starts is aborted and, finishing later, writes nothing; the other user’s is kept', async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((r) => (release = r));
    let entered: () => void = () => {};
    const inCall = new Promise<void>((r) => (entered = r));
    let aliceSignal: AbortSignal | undefined;
    const factsLlm: LlmService = {
      async chat(messages, options) {
        const who = JSON.stringify(messages).includes('ALICE_') ? 'alice' : 'bob';
        if (who === 'alice') {
          aliceSignal = options?.signal;
          entered();
          // Answers after the erasure whatever the signal says (a model client that ignores it).
          await held;
        }
        return says(JSON.stringify({ facts: [{ text: `${who.toUpperCase()}_FACT_MARKER drinks tea`, key: 'drink' }] }));
      },
    };
    fx = openRecall({ llm: scriptedLlm([], says('ok')), factsLlm });
    await fx.recall.chat({ userId: 'alice', sessionId: 's', message: 'ALICE_MSG I drink tea' });
    await inCall;
    await fx.recall.chat({ userId: 'bob', sessionId: 's', message: 'BOB_MSG I drink tea' });
    // A turn queued behind the running one: cancelled with the rest of the user's data.
    await fx.recall.chat({ userId: 'alice', sessionId: 's2', message: 'ALICE_MSG again' });
    await fx.recall.eraseUser('alice').finally(() => setImmediate(release));
    const abortedByErasure = aliceSignal?.aborted;
    await fx.recall.extractionIdle();
    expect(abortedByErasure).toBe(true);
    expect(await fx.recall.listMemory('alice')).toEqual([]);
    expect(await fx.recall.memoryHistory('alice')).toEqual([]);
    if (!onPostgres) for (const [name, users] of recallKeyUsers(fx.env.root)) expect([...users].filter((u) => u !== 'bob'), name).toEqual([]);
    expect(await fx.store.hasData('alice')).toBe(false);
    expect((await fx.recall.listMemory('bob')).map((e) => e.text)).toEqual(['BOB_FACT_MARKER drinks tea']);
    expect(await fx.recall.extractionStatus()).toMatchObject({ pending: 0, dead: 0 });
    // The user's next turn after the erasure is extracted as usual.
    await fx.recall.chat({ userId: 'alice', sessionId: 's', message: 'ALICE_MSG back' });
    await fx.recall.extractionIdle();
    expect((await fx.recall.listMemory('alice')).map((e) => e.text)).toEqual(['ALICE_FACT_MARKER drinks tea']);
  });

  it('a fork racing the erasure is refused or erased: no listed session, no transcript, no fork link is left', async () => {
    fx = openRecall();
    await fx.recall.chat({ userId: 'alice', sessionId: 's', message: 'hi' });
    // Issued first, so it starts before the erasure claims the user.
    const fork = fx.recall.forkSession('alice', 's', 1, 'branch');
    const erasure = fx.recall.eraseUser('alice');
    await Promise.allSettled([fork]);
    await erasure;
    await fork.catch((error: unknown) => expect(error).toMatchObject({ code: 'user_erasing' }));
    expect(await fx.recall.listSessions('alice')).toEqual([]);
    expect(await fx.recall.getSessionMessages('alice', 'branch')).toEqual([]);
    expect(await fx.memory.lastId(sessionConversationId('alice', 'branch'))).toBe(0);
    if (!onPostgres) expect(forkLinksOf(fx.env.root, 'alice')).toEqual([]);
  });

  itLmdb('erases the fork link of a fork with no rows of its own, made by forkSession or on the memory directly', async () => {
    fx = openRecall();
    await fx.recall.chat({ userId: 'alice', sessionId: 's', message: 'hi' });
    await fx.recall.chat({ userId: 'bob', sessionId: 's', message: 'hi' });
    await fx.recall.forkSession('alice', 's', 1, 'branch');
    // A fork the sessions index never heard of (the registration after the fork failed, say).
    await fx.memory.fork(sessionConversationId('alice', 's'), 1, sessionConversationId('alice', 'unlisted'));
    await fx.recall.forkSession('bob', 's', 1, 'branch');
    expect(forkLinksOf(fx.env.root, 'alice').length).toBe(4);
    await fx.recall.eraseUser('alice');
    expect(forkLinksOf(fx.env.root, 'alice')).toEqual([]);
    expect(forkLinksOf(fx.env.root, 'bob').length).toBe(2);
    expect((await fx.recall.getSessionMessages('bob', 'branch')).map((r) => r.content)).toEqual(['hi']);
  });

  it('refuses a bad user id with invalid_id and erases nothing', async () => {
    fx = openRecall();
    await expect(fx.recall.eraseUser('')).rejects.toMatchObject({ code: 'invalid_id' });
  });
});
