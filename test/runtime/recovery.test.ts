import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createLmdbStore, StorageError, type StoredMessage } from '../../src/memory/index.ts';
import { exit, whereis } from '../../src/otp/index.ts';
import { startRuntime, type Runtime, type RuntimeOptions } from '../../src/runtime.ts';
import { createFaultInjector } from '../../src/testing.ts';
import { checkLog, nameOf, nextEvent, sleep, tempDir, user, type Outcome } from '../support/runtime-fixtures.ts';

let cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

async function runtimeFor(options: RuntimeOptions = {}): Promise<{ runtime: Runtime; dir: string }> {
  const dir = tempDir();
  const runtime = await startRuntime({ dataDir: dir.path, ...options });
  cleanup.push(dir.remove, () => runtime.stop());
  return { runtime, dir: dir.path };
}

const code = (e: unknown) => (e instanceof StorageError ? e.code : String(e));
const conversationName = (c: string) => `mnemo/conversation/${c}`;

describe('conversation actor crash', () => {
  it('rejects the batch being committed with write_aborted and stores none of it', async () => {
    const faults = createFaultInjector();
    const { runtime } = await runtimeFor({ faults });
    await runtime.memory.add('c', [user('kept')]);
    faults.failCommits('c', 1);
    const error = await runtime.memory.add('c', [user('lost 1'), user('lost 2')]).catch((e: unknown) => e);
    expect(code(error)).toBe('write_aborted');
    expect(await runtime.memory.get('c')).toEqual([user('kept')]);
  });

  it('is restarted by the conversation supervisor, and numbering continues without a gap', async () => {
    const faults = createFaultInjector();
    const { runtime } = await runtimeFor({ faults });
    await runtime.memory.add('c', [user('1'), user('2')]);
    const restarted = nextEvent(runtime, (e) => e.type === 'restart' && nameOf(e.pid) === conversationName('c'));
    faults.failCommits('c', 1);
    await runtime.memory.add('c', [user('x')]).catch(() => undefined);
    await restarted;
    const [record] = await runtime.memory.append('c', [{ message: user('3') }]);
    expect(record!.message_id).toBe(3);
    expect(await runtime.memory.get('c')).toEqual([user('1'), user('2'), user('3')]);
  });

  it('sends a write that arrives while the actor restarts to the next incarnation', async () => {
    const faults = createFaultInjector();
    const { runtime } = await runtimeFor({ faults });
    await runtime.memory.add('c', [user('1')]);
    let duringRestart: Promise<unknown> | undefined;
    let actorAtSend: unknown = 'not sent';
    const off = runtime.events.subscribe((e) => {
      if (e.type === 'exit' && duringRestart === undefined && typeof e.reason === 'object' && 'crashed' in e.reason) {
        actorAtSend = whereis(conversationName('c'));
        duringRestart = runtime.memory.append('c', [{ message: user('2') }]);
      }
    });
    faults.failCommits('c', 1);
    await runtime.memory.add('c', [user('aborted')]).catch(() => undefined);
    await sleep(0);
    off();
    expect(actorAtSend).toBeUndefined();
    const records = (await duringRestart) as Array<{ message_id: number }>;
    expect(records.map((r) => r.message_id)).toEqual([2]);
    expect(await runtime.memory.get('c')).toEqual([user('1'), user('2')]);
  });

  it('killed in the middle of a load loses no acknowledged write and leaves no gap', async () => {
    const { runtime } = await runtimeFor();
    const outcomes: Outcome[] = [];
    const conversations = Array.from({ length: 8 }, (_, i) => `k${i}`);
    let running = true;
    const writers = conversations.map(async (c) => {
      for (let n = 0; running; n++) {
        await new Promise((r) => setImmediate(r)); // let the timers of the kill loop run
        const record = (tag: string) => (p: Promise<StoredMessage[]>) =>
          p.then(
            (records) => void outcomes.push({ conversation: c, tag, ok: true, records }),
            (e: unknown) => void outcomes.push({ conversation: c, tag, ok: false, code: code(e) }),
          );
        const tags = [`${c}:${n}:a`, `${c}:${n}:b`];
        const batch = record(tags[0]!)(runtime.memory.append(c, tags.map((t) => ({ message: user(t) }))));
        // a second write queued behind the first one: group commit, and a crash may hit it
        const next = record(`${c}:${n}:c`)(runtime.memory.append(c, [{ message: user(`${c}:${n}:c`) }]));
        await Promise.all([batch, next]);
      }
    });
    for (let round = 0; round < 15; round++) {
      await sleep(5);
      const victim = whereis(conversationName(conversations[round % conversations.length]!));
      if (victim !== undefined) exit(victim, 'kill');
    }
    running = false;
    await Promise.all(writers);
    expect(outcomes.some((o) => !o.ok)).toBe(true);
    for (const c of conversations) {
      const mine = outcomes.filter((o) => o.conversation === c);
      const stored = await runtime.memory.range(c);
      checkLog(stored, mine);
      // A batch is all or nothing: each stored ':a' is followed by its ':b'.
      for (const r of stored.filter((x) => (x.message.content as string).endsWith(':a'))) {
        const b = stored.find((x) => x.message.content === (r.message.content as string).replace(/:a$/, ':b'));
        expect(b?.message_id).toBe(r.message_id + 1);
      }
    }
  });
});

describe('store actor crash', () => {
  it('is restarted from LMDB: history complete, numbering continues', async () => {
    const faults = createFaultInjector();
    const { runtime } = await runtimeFor({ faults });
    await runtime.memory.add('a', [user('a1'), user('a2')]);
    await runtime.memory.add('b', [user('b1')]);
    const restarted = nextEvent(runtime, (e) => e.type === 'restart' && e.id === 'default_memory');
    faults.failStore(1);
    const error = await runtime.memory.add('a', [user('lost')]).catch((e: unknown) => e);
    expect(code(error)).toBe('write_aborted');
    await restarted;
    const [record] = await runtime.memory.append('a', [{ message: user('a3') }]);
    expect(record!.message_id).toBe(3);
    expect(await runtime.memory.get('a')).toEqual([user('a1'), user('a2'), user('a3')]);
    expect(await runtime.memory.get('b')).toEqual([user('b1')]);
  });

  it('comes back empty with in-memory storage, as an ETS table does', async () => {
    const faults = createFaultInjector();
    const { runtime } = await runtimeFor({ storage: 'memory', faults });
    await runtime.memory.add('a', [user('a1')]);
    const restarted = nextEvent(runtime, (e) => e.type === 'restart' && e.id === 'default_memory');
    faults.failStore(1);
    await runtime.memory.add('a', [user('lost')]).catch(() => undefined);
    await restarted;
    expect(await runtime.memory.get('a')).toEqual([]);
    const [record] = await runtime.memory.append('a', [{ message: user('fresh') }]);
    expect(record!.message_id).toBe(1);
  });
});

describe('faults under load', () => {
  it('stores every resolved write, no aborted one, with contiguous ids per conversation', async () => {
    const faults = createFaultInjector();
    const { runtime } = await runtimeFor({ faults, idleMs: 20 });
    const conversations = Array.from({ length: 20 }, (_, i) => `load-${i}`);
    const outcomes: Outcome[] = [];
    const writes: Promise<void>[] = [];
    for (let n = 0; n < 30; n++) {
      for (const c of conversations) {
        if ((n * 7 + c.length) % 11 === 0) faults.failCommits(c, 1);
        const tag = `${c}#${n}`;
        writes.push(
          runtime.memory.append(c, [{ message: user(tag) }]).then(
            (records) => void outcomes.push({ conversation: c, tag, ok: true, records }),
            (e: unknown) => void outcomes.push({ conversation: c, tag, ok: false, code: code(e) }),
          ),
        );
      }
      if (n % 5 === 0) await sleep(1);
    }
    await Promise.all(writes);
    expect(new Set(outcomes.filter((o) => !o.ok).map((o) => (o as { code: string }).code))).toEqual(new Set(['write_aborted']));
    for (const c of conversations) {
      checkLog(await runtime.memory.range(c), outcomes.filter((o) => o.conversation === c));
    }
  });
});

describe('escalation', () => {
  it('past the root intensity the tree stops itself: fatal event, LMDB closed cleanly, writes rejected', async () => {
    const faults = createFaultInjector();
    const clock = { now: () => 0 }; // every restart in the same instant: within any period
    const { runtime, dir } = await runtimeFor({ faults, clock });
    await runtime.memory.add('c', [user('before')]);
    const fatal = nextEvent(runtime, (e) => e.type === 'fatal');
    faults.failStore(100);
    for (let i = 0; i < 6; i++) {
      await runtime.memory.add('c', [user(`crash ${i}`)]).catch(() => undefined);
      await sleep(5);
    }
    await fatal;
    await runtime.exited;
    const late = await runtime.memory.add('c', [user('late')]).catch((e: unknown) => e);
    expect(code(late)).toBe('store_closed');
    // Closed cleanly: the directory opens again and holds what was acknowledged.
    const store = createLmdbStore({ path: dir });
    expect(await store.get('c')).toEqual([user('before')]);
    await store.close();
  });
});

describe('whole runtime restart', () => {
  it('a runtime started again on the same data directory sees everything and continues numbering', async () => {
    const dir = tempDir();
    cleanup.push(dir.remove);
    const first = await startRuntime({ dataDir: dir.path });
    await Promise.all(['a', 'b', 'c'].map((c) => first.memory.add(c, [user(`${c}1`), user(`${c}2`)])));
    await first.stop();
    const second = await startRuntime({ dataDir: dir.path });
    cleanup.push(() => second.stop());
    for (const c of ['a', 'b', 'c']) expect(await second.memory.get(c)).toEqual([user(`${c}1`), user(`${c}2`)]);
    const [record] = await second.memory.append('b', [{ message: user('b3') }]);
    expect(record!.message_id).toBe(3);
  });

  it('takes a data directory whose name has a dot as a directory, with search on the pool', async () => {
    const dir = tempDir();
    cleanup.push(dir.remove);
    const dataDir = join(dir.path, 'chat.data');
    const runtime = await startRuntime({ dataDir, recall: { poolThreshold: 0 } });
    cleanup.push(() => runtime.stop());
    const sessionId = 's1';
    await runtime.recall.chat({ userId: 'u', sessionId, message: 'remember the dotted directory' });
    expect(statSync(dataDir).isDirectory()).toBe(true);
    expect(readdirSync(dataDir).sort()).toEqual(['data.mdb', 'journal.mnemo', 'lock.mdb', 'owner.json']);
    expect((await runtime.recall.searchSession({ userId: 'u', sessionId, keyword: 'dotted' })).map((r) => r.messageId)).toEqual([1, 2]);
  });

  it('stop() commits what the actors hold; writes after it reject with store_closed', async () => {
    const dir = tempDir();
    cleanup.push(dir.remove);
    const runtime = await startRuntime({ dataDir: dir.path });
    await runtime.memory.add('c', [user('warm')]); // the actor is live, so the next writes are held by it
    const held = Array.from({ length: 20 }, (_, i) => runtime.memory.add('c', [user(`held ${i}`)]));
    const stopped = runtime.stop();
    const late = await runtime.memory.add('c', [user('late')]).catch((e: unknown) => e);
    await stopped;
    await Promise.all(held);
    expect(code(late)).toBe('store_closed');
    const store = createLmdbStore({ path: dir.path });
    expect((await store.get('c')).map((m) => m.content)).toEqual(['warm', ...Array.from({ length: 20 }, (_, i) => `held ${i}`)]);
    await store.close();
  });
});
