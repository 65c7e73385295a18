import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startRuntime, type Runtime } from '../../src/runtime.ts';
import { createLmdbStore } from '../../src/memory/index.ts';
import type { CompactionStep } from '../../src/memory/lmdb/lmdb-environment.ts';
import { createFaultInjector, type FaultInjector } from '../../src/memory/runtime/fault-injector.ts';
import { sessionConversationId } from '../../src/recall/recall-ids.ts';
import { MESSAGES_DB } from '../../src/memory/lmdb/lmdb-table.ts';
import { tempDir } from '../support/runtime-fixtures.ts';
import { branchSeparators } from '../support/lmdb-pages.ts';
import { openRecall } from '../support/recall-fixture.ts';

// runtime.compact(): a compacted copy (LMDB's page copy, or a rebuild) swapped in for data.mdb
// while the runtime runs.

const dirs: Array<{ remove(): void }> = [];
let runtime: Runtime | undefined;
afterEach(async () => {
  await runtime?.stop();
  runtime = undefined;
  for (const d of dirs.splice(0)) d.remove();
});

function newDir(): string {
  const d = tempDir('mnemo-compact-');
  dirs.push(d);
  return join(d.path, 'data');
}

/** Every file under `dir`, read whole. */
function filesOf(dir: string): Array<{ path: string; bytes: Buffer }> {
  const out: Array<{ path: string; bytes: Buffer }> = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...filesOf(path));
    else out.push({ path, bytes: readFileSync(path) });
  }
  return out;
}

/** The files under `dir` that hold `text`. */
function filesHolding(dir: string, text: string): string[] {
  return filesOf(dir)
    .filter((f) => f.bytes.includes(text))
    .map((f) => f.path.slice(dir.length + 1));
}

const ALICE = 'alicezq';
const BOB = 'bobyx';
const ALICE_TEXT = 'ALICE_SECRET_TEXT';

describe('runtime.compact()', () => {
  it('eraseUser(u, { compact: true }): after more turns of another user, no file of the data directory holds a byte of the user', async () => {
    const dataDir = newDir();
    // Durable (fsyncs): so appends go through the write-ahead journal too.
    runtime = await startRuntime({ name: `cmp_${Math.random().toString(36).slice(2, 8)}`, dataDir, recall: { pool: false } });
    const rt = runtime;
    for (const s of ['alice-s1', 'alice-s2']) {
      for (let i = 0; i < 12; i++) await rt.recall.chat({ userId: ALICE, sessionId: s, message: `${ALICE_TEXT} ${i} ${'lorem ipsum dolor '.repeat(20)}` });
    }
    for (let i = 0; i < 3; i++) await rt.recall.chat({ userId: BOB, sessionId: 'bob-s1', message: `BOB_TEXT ${i}` });
    expect(filesHolding(dataDir, ALICE_TEXT).length).toBeGreaterThan(0);

    const report = await rt.recall.eraseUser(ALICE, { compact: true });
    expect(report.conversations).toBeGreaterThanOrEqual(2);
    // Five more turns of another user, written to the new file (and the journal).
    for (let i = 3; i < 8; i++) await rt.recall.chat({ userId: BOB, sessionId: 'bob-s1', message: `BOB_TEXT ${i}` });

    for (const text of [ALICE_TEXT, ALICE, 'alice-s1', 'alice-s2', sessionConversationId(ALICE, 'alice-s1')]) {
      expect(filesHolding(dataDir, text), text).toEqual([]);
    }
    expect(filesHolding(dataDir, 'BOB_TEXT 0')).toContain('data.mdb');
    expect(report.compaction!.bytesAfter).toBeLessThan(report.compaction!.bytesBefore);
    expect(await rt.recall.listSessions(ALICE)).toEqual([]);
    expect((await rt.recall.getSessionMessages(BOB, 'bob-s1')).length).toBe(16);
    expect(await rt.health()).toMatchObject({ writable: true });
  }, 60_000);

  it('eraseUser(u, { compact: true }) with trees of branch pages under branch pages: no file holds an id, key or message of any user erased before, and every other user is whole', async () => {
    const dataDir = newDir();
    runtime = await startRuntime({ name: `cmp_${Math.random().toString(36).slice(2, 8)}`, dataDir, recall: { pool: false }, lmdb: { noSync: true } });
    const rt = runtime;
    const USERS = 3000;
    const user = (n: number) => `user${String(n).padStart(4, '0')}`;
    const text = (u: string, i: number) => `MSG-${u}-${i} ${'lorem ipsum dolor sit amet '.repeat(10)}`;
    // Appended in rounds across all users, as traffic comes: pages split all over the tree.
    for (let i = 0; i < 4; i++) {
      for (let from = 0; from < USERS; from += 500) {
        await Promise.all(
          Array.from({ length: 500 }, (_, k) => rt.memory.append(sessionConversationId(user(from + k), 's0'), [{ message: { role: 'user', content: text(user(from + k), i) } }])),
        );
      }
    }
    // The users to erase: those whose keys are separators in the messages db's branch pages,
    // above the leaves' parents first (what LMDB's page copy keeps), and the leaves' parents.
    if (rt.storage.kind !== 'lmdb') throw new Error('expected LMDB');
    await rt.storage.root.flushed;
    const { depth, separators } = branchSeparators(rt.storage.root, dataDir, MESSAGES_DB);
    expect(depth).toBeGreaterThanOrEqual(3);
    const separating = (level: (l: number) => boolean) =>
      Array.from({ length: USERS }, (_, n) => user(n)).filter((u) => separators.some((s) => level(s.level) && s.key.includes(sessionConversationId(u, 's0'))));
    const upper = separating((l) => l >= 2);
    expect(upper.length).toBeGreaterThan(0);
    const erased = [...new Set([...upper, ...separating((l) => l === 1)])].slice(0, 40);
    for (const u of erased) await rt.recall.chat({ userId: u, sessionId: 's1', message: `CHAT-${u} oolong` });

    // Most erased plainly, the last ones with the compaction: it leaves none of them.
    for (const u of erased.slice(0, -3)) await rt.recall.eraseUser(u);
    for (const u of erased.slice(-3)) expect((await rt.recall.eraseUser(u, { compact: true })).compaction!.bytesAfter).toBeGreaterThan(0);

    const files = filesOf(dataDir);
    for (const u of erased) {
      for (const needle of [u, sessionConversationId(u, 's0'), `MSG-${u}-`, `CHAT-${u}`]) {
        expect(files.filter((f) => f.bytes.includes(needle)).map((f) => f.path.slice(dataDir.length + 1)), needle).toEqual([]);
      }
    }
    const kept = Array.from({ length: USERS }, (_, n) => user(n)).filter((u) => !erased.includes(u));
    const data = files.find((f) => f.path.endsWith('data.mdb'))!.bytes;
    for (const u of kept) {
      expect((await rt.memory.range(sessionConversationId(u, 's0'))).map((r) => r.message.content)).toEqual([0, 1, 2, 3].map((i) => text(u, i)));
      expect(data.includes(`MSG-${u}-3`), u).toBe(true);
    }
    for (const u of erased) expect(await rt.memory.range(sessionConversationId(u, 's0'))).toEqual([]);
    expect(await rt.health()).toMatchObject({ writable: true });
  }, 120_000);

  it('eraseUser(u, { compact: true }) whose compaction is refused: rejects with that code, saying the erasure committed', async () => {
    const dataDir = newDir();
    runtime = await startRuntime({ dataDir, recall: { pool: false } });
    await runtime.recall.chat({ userId: ALICE, sessionId: 'alice-s1', message: ALICE_TEXT });
    const other = createLmdbStore({ path: dataDir });
    try {
      await expect(runtime.recall.eraseUser(ALICE, { compact: true })).rejects.toMatchObject({ code: 'environment_shared', details: { erased: true } });
    } finally {
      await other.close();
    }
    expect(await runtime.recall.listSessions(ALICE)).toEqual([]);
  }, 60_000);

  it('a standalone recall (createRecall) refuses { compact: true } with invalid_option, and erases nothing', async () => {
    const fx = openRecall();
    try {
      await fx.recall.chat({ userId: ALICE, sessionId: 'alice-s1', message: ALICE_TEXT });
      await expect(fx.recall.eraseUser(ALICE, { compact: true })).rejects.toMatchObject({ code: 'invalid_option' });
      expect((await fx.recall.listSessions(ALICE)).length).toBe(1);
    } finally {
      await fx.close();
    }
  });

  it('holds writes and reads issued during the pause, then runs them: none refused, ids in order, every acknowledged write kept', async () => {
    const dataDir = newDir();
    const steps: CompactionStep[] = [];
    const issued: Array<Promise<unknown>> = [];
    const settledEarly: string[] = [];
    const faults: FaultInjector = {
      ...createFaultInjector(),
      compactStep: (step) => {
        steps.push(step);
        if (step === 'settled') {
          // Every child after the environment holder is stopped now: the store, the
          // conversations, recall. These wait, and must not fail.
          const track = (what: string, p: Promise<unknown>) => {
            issued.push(p);
            void p.then(() => {
              if (steps.at(-1) !== 'reopened') settledEarly.push(what);
            }, () => undefined);
          };
          for (let c = 0; c < 5; c++) track(`append c${c}`, rt.memory.append(`c${c}`, [{ message: { role: 'user', content: `during ${c}` } }]));
          track('append new', rt.memory.append('fresh', [{ message: { role: 'user', content: 'first' } }]));
          track('get', rt.memory.get('c0'));
          track('recall', rt.recall.listSessions('u1'));
        }
        if (step === 'copied') expect(settledEarly).toEqual([]);
      },
    };
    runtime = await startRuntime({ dataDir, faults, recall: { pool: false } });
    const rt = runtime;
    for (let c = 0; c < 5; c++) {
      for (let i = 0; i < 20; i++) await rt.memory.add(`c${c}`, [{ role: 'user', content: `before ${c}.${i} ${'x'.repeat(500)}` }]);
    }
    await rt.recall.chat({ userId: 'u1', sessionId: 's1', message: 'hello' });
    // Free pages for the copy to leave behind.
    for (let c = 5; c < 10; c++) await rt.memory.add(`c${c}`, [{ role: 'user', content: 'y'.repeat(20_000) }]);
    for (let c = 5; c < 10; c++) await rt.memory.clear(`c${c}`);

    const report = await rt.compact();
    expect(steps).toEqual(['settled', 'copied', 'closed', 'swapped', 'reopened']);
    expect(report.bytesAfter).toBeLessThan(report.bytesBefore);
    expect(report.pauseMs).toBeGreaterThan(0);

    const results = await Promise.all(issued);
    for (let c = 0; c < 5; c++) expect((results[c] as Array<{ message_id: number }>)[0]!.message_id).toBe(21);
    expect((results[5] as Array<{ message_id: number }>)[0]!.message_id).toBe(1);
    expect((results[6] as unknown[]).length).toBeGreaterThanOrEqual(20);
    expect((results[7] as unknown[]).length).toBe(1);

    // The runtime goes on over the new file, and another start finds everything.
    await rt.memory.add('c0', [{ role: 'user', content: 'after' }]);
    await rt.stop();
    runtime = await startRuntime({ dataDir, recall: { pool: false } });
    for (let c = 0; c < 5; c++) expect((await runtime.memory.range(`c${c}`)).map((m) => m.message_id)).toEqual(Array.from({ length: c === 0 ? 22 : 21 }, (_, i) => i + 1));
    expect(await runtime.memory.lastId('c7')).toBe(0);
    expect((await runtime.recall.getSessionMessages('u1', 's1')).length).toBe(2);
  }, 60_000);

  it('with the search pool: its threads let go of the old environment, and searches find what the new one holds', async () => {
    const dataDir = newDir();
    runtime = await startRuntime({ dataDir, recall: { pool: { maxThreads: 1 }, poolThreshold: 1 } });
    await runtime.recall.chat({ userId: 'u1', sessionId: 's1', message: 'OOLONG before' });
    expect((await runtime.recall.searchSession({ userId: 'u1', sessionId: 's1', keyword: 'OOLONG' })).length).toBeGreaterThan(0);
    await runtime.compact();
    await runtime.recall.chat({ userId: 'u1', sessionId: 's1', message: 'OOLONG after' });
    const hits = await runtime.recall.searchSession({ userId: 'u1', sessionId: 's1', keyword: 'OOLONG' });
    expect(hits.map((h) => h.content).filter((c) => c.includes('OOLONG')).length).toBeGreaterThanOrEqual(2);
  }, 60_000);

  it('stop() during a compaction waits for it, then stops: the directory opens with everything', async () => {
    const dataDir = newDir();
    let stopped: Promise<void> | undefined;
    const rt = await startRuntime({
      dataDir,
      recall: false,
      faults: { ...createFaultInjector(), compactStep: (step) => void (step === 'copied' && (stopped = rt.stop())) },
    });
    await rt.memory.add('c', [{ role: 'user', content: 'kept' }]);
    const report = await rt.compact();
    expect(report.bytesAfter).toBeGreaterThan(0);
    await stopped;
    await expect(rt.memory.add('c', [{ role: 'user', content: 'late' }])).rejects.toMatchObject({ code: 'store_closed' });
    runtime = await startRuntime({ dataDir, recall: false });
    expect(await runtime.memory.get('c')).toEqual([{ role: 'user', content: 'kept' }]);
  }, 60_000);

  it('runs calls one after another: two at once both compact, and each sees the writes before it', async () => {
    runtime = await startRuntime({ dataDir: newDir(), recall: false });
    await runtime.memory.add('c', [{ role: 'user', content: 'one' }]);
    const [a, b] = await Promise.all([runtime.compact(), runtime.compact()]);
    expect(a.bytesAfter).toBeGreaterThan(0);
    expect(b.bytesAfter).toBeGreaterThan(0);
    expect((await runtime.memory.get('c')).length).toBe(1);
  }, 60_000);

  it('a waiting compaction shared by a page copy and a rebuild rebuilds; an unknown copy method is invalid_option', async () => {
    const steps: CompactionStep[] = [];
    const later: Array<Promise<unknown>> = [];
    const rt: Runtime = await startRuntime({
      dataDir: newDir(),
      recall: false,
      faults: {
        ...createFaultInjector(),
        compactStep: (step) => {
          // While the first (a page copy) runs, two more calls: they share the next one.
          if (steps.length === 0) later.push(rt.compact(), rt.compact({ copy: 'rebuild' }));
          if (steps.at(-1) !== step) steps.push(step);
        },
      },
    });
    runtime = rt;
    await rt.memory.add('c', [{ role: 'user', content: 'one' }]);
    await expect(rt.compact({ copy: 'fast' as never })).rejects.toMatchObject({ code: 'invalid_option' });
    await rt.compact();
    await Promise.all(later);
    const once = ['settled', 'copied', 'closed', 'swapped', 'reopened'];
    expect(steps).toEqual([...once, 'settled', 'rebuilding', ...once.slice(1)]);
    expect(await rt.memory.get('c')).toEqual([{ role: 'user', content: 'one' }]);
  }, 60_000);

  it('is refused, nothing done: other storage (invalid_option), an environment shared in the process (environment_shared), after stop (store_closed)', async () => {
    const memory = await startRuntime({ name: 'cmp_mem', storage: 'memory', recall: false });
    await expect(memory.compact()).rejects.toMatchObject({ code: 'invalid_option' });
    await memory.stop();

    const dataDir = newDir();
    runtime = await startRuntime({ dataDir, recall: false });
    await runtime.memory.add('c', [{ role: 'user', content: 'kept' }]);
    const other = createLmdbStore({ path: dataDir });
    await expect(runtime.compact()).rejects.toMatchObject({ code: 'environment_shared' });
    await other.close();
    await runtime.memory.add('c', [{ role: 'user', content: 'still writable' }]);
    expect((await runtime.memory.get('c')).length).toBe(2);
    await runtime.compact();
    await runtime.stop();
    await expect(runtime.compact()).rejects.toMatchObject({ code: 'store_closed' });
    runtime = undefined;
  }, 60_000);
});
