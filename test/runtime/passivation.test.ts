import { afterEach, describe, expect, it } from 'vitest';
import { whereis } from '../../src/otp/index.ts';
import { defaultMemory } from '../../src/memory/index.ts';
import { startRuntime, type Runtime } from '../../src/runtime.ts';
import { nameOf, nextEvent, sleep, tempDir, user } from '../support/runtime-fixtures.ts';

let cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

async function runtimeFor(idleMs: number): Promise<Runtime> {
  const dir = tempDir();
  const runtime = await startRuntime({ dataDir: dir.path, idleMs });
  cleanup.push(dir.remove, () => runtime.stop());
  return runtime;
}

const actor = (c: string) => `mnemo/conversation/${c}`;
const conversations = (runtime: Runtime) => runtime.inspect().children.find((c) => c.id === 'conversations')!.children;

describe('activation and passivation', () => {
  it('starts one actor per conversation on first use, registered under its name', async () => {
    const runtime = await runtimeFor(60_000);
    expect(whereis(actor('a'))).toBeUndefined();
    await runtime.memory.add('a', [user('1')]);
    await runtime.memory.add('b', [user('1')]);
    expect(conversations(runtime).map((c) => c.name).sort()).toEqual([actor('a'), actor('b')]);
    expect(conversations(runtime).every((c) => c.state === 'ready')).toBe(true);
  });

  it('reads never start an actor', async () => {
    const runtime = await runtimeFor(60_000);
    await runtime.memory.get('a');
    await runtime.memory.tail('a', 5);
    expect(conversations(runtime)).toEqual([]);
  });

  // Waits on the tree's events, subscribed before the write: never on elapsed time.
  const passivated = (runtime: Runtime, c: string, pid: unknown = undefined) =>
    nextEvent(runtime, (e) => {
      if (e.type === 'start' && nameOf(e.pid) === actor(c)) pid = e.pid;
      return e.type === 'exit' && e.reason === 'normal' && e.pid === pid;
    });

  it('passivates an idle actor with a normal exit that is not restarted', async () => {
    const runtime = await runtimeFor(10);
    const exited = passivated(runtime, 'a');
    await runtime.memory.add('a', [user('1')]);
    expect((await exited).type).toBe('exit');
    const restartedOrNot = await Promise.race([
      nextEvent(runtime, (e) => e.type === 'restart' || (e.type === 'start' && nameOf(e.pid) === actor('a'))).then(() => 'restarted'),
      sleep(50).then(() => 'not restarted'),
    ]);
    expect(restartedOrNot).toBe('not restarted');
    expect(conversations(runtime)).toEqual([]);
    expect(whereis(actor('a'))).toBeUndefined();
  });

  it('continues the numbering in the next incarnation', async () => {
    const runtime = await runtimeFor(5);
    const exited = passivated(runtime, 'a');
    await runtime.memory.add('a', [user('1'), user('2')]);
    await exited;
    expect(whereis(actor('a'))).toBeUndefined();
    const [record] = await runtime.memory.append('a', [{ message: user('3') }]);
    expect(record!.message_id).toBe(3);
  });

  it('sends a write that arrives while the actor passivates to the next incarnation', async () => {
    const runtime = await runtimeFor(10);
    await runtime.memory.add('a', [user('1')]);
    let duringPassivation: Promise<Array<{ message_id: number }>> | undefined;
    let liveAtSend: unknown = 'not sent';
    // The supervisor reports the normal exit before the router has heard of it: a write sent
    // now finds no live actor and is held for the next incarnation.
    const off = runtime.events.subscribe((e) => {
      if (e.type === 'exit' && e.reason === 'normal' && duringPassivation === undefined) {
        liveAtSend = whereis(actor('a'));
        duringPassivation = runtime.memory.append('a', [{ message: user('2') }]);
      }
    });
    const restarted = nextEvent(runtime, (e) => e.type === 'start' && nameOf(e.pid) === actor('a'));
    await passivated(runtime, 'a', whereis(actor('a')));
    off();
    expect(liveAtSend).toBeUndefined();
    expect((await duringPassivation!).map((r) => r.message_id)).toEqual([2]);
    await restarted;
    expect(await runtime.memory.get('a')).toEqual([user('1'), user('2')]);
  });

  it('keeps at most maxLiveConversations actors, passivating the least recently written first', async () => {
    const dir = tempDir();
    const runtime = await startRuntime({ dataDir: dir.path, idleMs: 60_000, maxLiveConversations: 10 });
    cleanup.push(dir.remove, () => runtime.stop());
    for (let i = 0; i < 30; i++) await runtime.memory.add(`c${i}`, [user(`${i}`)]);
    while (conversations(runtime).length > 10) await nextEvent(runtime, (e) => e.type === 'exit');
    const live = conversations(runtime).map((c) => c.name);
    // idleMs is a minute: only the cap can have passivated them, oldest first.
    expect(live).toContain(actor('c29'));
    expect(live).not.toContain(actor('c0'));
    const [record] = await runtime.memory.append('c0', [{ message: user('again') }]);
    expect(record!.message_id).toBe(2);
    expect(await runtime.memory.get('c0')).toEqual([user('0'), user('again')]);
  });

  it('keeps the cap under a loop that never yields to the event loop (in-memory storage)', async () => {
    const runtime = await startRuntime({ name: 'capped_memory', storage: 'memory', idleMs: 60_000, maxLiveConversations: 10 });
    cleanup.push(() => runtime.stop());
    // In-memory writes settle in microtasks only: no timer or setImmediate runs until the loop ends.
    let most = 0;
    for (let i = 0; i < 200; i++) {
      await runtime.memory.add(`m${i}`, [user(`${i}`)]);
      most = Math.max(most, conversations(runtime).length);
    }
    expect(most).toBeLessThanOrEqual(11); // the cap, plus the actor that just started
    expect(await runtime.memory.get('m0')).toEqual([user('0')]);
  });

  it('refuses a maxLiveConversations that is not a positive integer', async () => {
    await expect(startRuntime({ maxLiveConversations: 0 })).rejects.toMatchObject({ code: 'invalid_option' });
    await expect(startRuntime({ maxLiveConversations: 2.5 })).rejects.toMatchObject({ code: 'invalid_option' });
  });

  it('groups the writes that queue while a commit runs into the next commit', async () => {
    const dir = tempDir();
    let t = Date.UTC(2026, 0, 1);
    const runtime = await startRuntime({ dataDir: dir.path, wallClock: { now: () => (t += 1000) } }); // one reading per commit
    cleanup.push(dir.remove, () => runtime.stop());
    await runtime.memory.add('a', [user('warm-up')]);
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => runtime.memory.append('a', [{ message: user(`${i}`) }])));
    expect(results.flat().map((r) => r.message_id)).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    // the first write finds the actor ready and commits alone; the nine behind it share one commit
    const stamps = results.map((r) => r[0]!.ts);
    expect(new Set(stamps.slice(1)).size).toBe(1);
    expect(stamps[0]).not.toBe(stamps[1]);
  });
});

describe('the runtime', () => {
  it('makes its memory the default while it runs', async () => {
    const runtime = await runtimeFor(60_000);
    expect(defaultMemory()).toBe(runtime.memory);
  });

  it('shows its tree: environment holder, store singleton, conversation supervisor, search pool, recall', async () => {
    const runtime = await runtimeFor(60_000);
    const tree = runtime.inspect();
    expect(tree.name).toBe('mnemo_root');
    expect(tree.children.map((c) => [c.id, c.name, c.type])).toEqual([
      ['lmdb_environment', 'mnemo_lmdb_environment', 'worker'],
      ['default_memory', 'mnemo_default_memory', 'worker'],
      ['conversations', 'mnemo_conversation_sup', 'supervisor'],
      ['search_pool', 'mnemo_search_pool', 'worker'],
      ['recall', 'mnemo_recall', 'worker'],
    ]);
  });

  it('refuses a second runtime with the same name', async () => {
    await runtimeFor(60_000);
    const dir = tempDir();
    cleanup.push(dir.remove);
    await expect(startRuntime({ dataDir: dir.path })).rejects.toThrow();
    const other = await startRuntime({ dataDir: dir.path, name: 'other' });
    cleanup.push(() => other.stop());
    expect(other.inspect().name).toBe('other_root');
  });

  it('lets other layers open their own databases in its LMDB environment', async () => {
    const dir = tempDir();
    cleanup.push(dir.remove);
    const first = await startRuntime({ dataDir: dir.path });
    if (first.storage.kind !== 'lmdb') throw new Error('expected LMDB storage');
    expect(() => (first.storage as { openDB(n: string): unknown }).openDB('messages')).toThrow(/message store/);
    const sessions = first.storage.openDB<{ title: string }, string>('sessions', { encoding: 'json' });
    await sessions.put('s1', { title: 'hello' });
    await first.stop();
    const second = await startRuntime({ dataDir: dir.path });
    cleanup.push(() => second.stop());
    if (second.storage.kind !== 'lmdb') throw new Error('expected LMDB storage');
    expect(second.storage.openDB<{ title: string }, string>('sessions', { encoding: 'json' }).get('s1')).toEqual({ title: 'hello' });
  });
});
