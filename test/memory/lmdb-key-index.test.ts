import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'lmdb';
import { afterEach, describe, expect, it } from 'vitest';
import { createLmdbStore, type LmdbStore } from '../../src/memory/index.ts';
import { IDEMPOTENCY_WINDOW_MS } from '../../src/memory/contract/idempotency.ts';
import { FORKS_DB, MESSAGES_DB } from '../../src/memory/lmdb/lmdb-table.ts';
import { KEY_INDEX_CONVERSATIONS } from '../../src/memory/lmdb/key-index.ts';

// LMDB keeps idempotency keys in the message rows and indexes them in memory (key-index.ts):
// what a retry finds must not depend on whether the index was read from the rows or kept up.

const user = (content: string) => ({ role: 'user' as const, content });
const dirs: string[] = [];
const freshDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'mnemo-keys-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function reopened<T>(dir: string, clock: { now(): number }, body: (store: LmdbStore) => Promise<T>): Promise<T> {
  const store = createLmdbStore({ path: dir, clock });
  try {
    return await body(store);
  } finally {
    await store.close();
  }
}

describe('LMDB idempotency keys after a reopen (the index read back from the rows)', () => {
  it('answers a retry from the rows for the window, and stores it again after the window', async () => {
    const dir = freshDir();
    let now = Date.UTC(2026, 5, 1, 12);
    const clock = { now: () => now };
    const first = await reopened(dir, clock, async (store) => {
      await store.add('c', [user('before')]);
      const stored = await store.append('c', [{ message: user('a') }, { message: user('b') }], { idempotencyKey: 'k' });
      for (let i = 0; i < 10; i++) await store.add('c', [user(`after ${i}`)]);
      return stored;
    });
    now += IDEMPOTENCY_WINDOW_MS - 1000;
    await reopened(dir, clock, async (store) => {
      const retry = await store.append('c', [{ message: user('a') }, { message: user('b') }], { idempotencyKey: 'k' });
      expect(retry).toEqual(first);
      expect(await store.lastId('c')).toBe(13);
    });
    now += 2000;
    await reopened(dir, clock, async (store) => {
      const again = await store.append('c', [{ message: user('a') }], { idempotencyKey: 'k' });
      expect(again.map((r) => r.message_id)).toEqual([14]);
      expect(await store.append('c', [{ message: user('a') }], { idempotencyKey: 'k' })).toEqual(again);
    });
  });

  it('takes a key only from the row field it writes, not from a message\'s meta or content', async () => {
    const dir = freshDir();
    const clock = { now: () => Date.UTC(2026, 5, 1) };
    await reopened(dir, clock, async (store) => {
      await store.append('c', [{ message: user(',"key":["k",1]'), meta: { key: ['k', 1] } }]);
    });
    await reopened(dir, clock, async (store) => {
      const [record] = await store.append('c', [{ message: user('keyed') }], { idempotencyKey: 'k' });
      expect(record!.message_id).toBe(2);
      expect(await store.append('c', [{ message: user('retry') }], { idempotencyKey: 'k' })).toEqual([record]);
    });
  });

  it('answers a retry on a fork from the fork\'s own rows', async () => {
    const dir = freshDir();
    const clock = { now: () => Date.UTC(2026, 5, 1) };
    const onFork = await reopened(dir, clock, async (store) => {
      await store.add('c', [user('a'), user('b')], { idempotencyKey: 'k' });
      await store.fork('c', 2, 'f');
      return store.append('f', [{ message: user('c') }], { idempotencyKey: 'k2' });
    });
    await reopened(dir, clock, async (store) => {
      expect(await store.append('f', [{ message: user('c') }], { idempotencyKey: 'k2' })).toEqual(onFork);
      const [own] = await store.append('f', [{ message: user('d') }], { idempotencyKey: 'k' });
      expect(own!.message_id).toBe(4);
    });
  });

  it('still answers a conversation whose index was dropped (more conversations than it holds)', async () => {
    const dir = freshDir();
    const clock = { now: () => Date.UTC(2026, 5, 1) };
    await reopened(dir, clock, async (store) => {
      const [first] = await store.append('c', [{ message: user('a') }], { idempotencyKey: 'k' });
      const others = Array.from({ length: KEY_INDEX_CONVERSATIONS + 10 }, (_, i) => `o${i}`);
      for (let i = 0; i < others.length; i += 500) {
        await Promise.all(others.slice(i, i + 500).map((id) => store.add(id, [user(id)], { idempotencyKey: 'k' })));
      }
      expect(await store.append('c', [{ message: user('retry') }], { idempotencyKey: 'k' })).toEqual([first]);
      expect(await store.lastId('c')).toBe(1);
    });
  });
});

describe('LMDB idempotency keys stored by the earlier layout (a key row beside the messages)', () => {
  /** What the earlier version wrote for a keyed batch: its row, and `[c, '\u0001' + key]` → firstId, count, at. */
  function writeEarlierLayout(dir: string, at: number) {
    const env = open({ path: dir, maxDbs: 32 });
    const messages = env.openDB<unknown, [string, number]>(MESSAGES_DB, { encoding: 'json' });
    const keys = env.openDB<Buffer, [string, string]>(MESSAGES_DB, { encoding: 'binary' });
    const ts = new Date(at).toISOString().replace('Z', '+00:00');
    const row = Buffer.allocUnsafe(20);
    row.writeDoubleLE(1, 0);
    row.writeUInt32LE(1, 8);
    row.writeDoubleLE(at, 12);
    env.transactionSync(() => {
      messages.put(['c', 1], { ts, meta: {}, message: user('stored before the upgrade') });
      keys.put(['c', '\u0001old'], row);
    });
    expect(env.openDB(FORKS_DB, { encoding: 'json' }).get(['layout', 'keys in rows'])).toBeUndefined();
    return env.close();
  }

  it('honours them for their window after the upgrade, and clear removes them', async () => {
    const dir = freshDir();
    const at = Date.now() - 60_000;
    await writeEarlierLayout(dir, at);
    let now = at + 1000;
    const clock = { now: () => now };
    await reopened(dir, clock, async (store) => {
      const retry = await store.append('c', [{ message: user('the retry') }], { idempotencyKey: 'old' });
      expect(retry.map((r) => [r.message_id, r.message.content])).toEqual([[1, 'stored before the upgrade']]);
      expect(await store.lastId('c')).toBe(1);
    });
    now = at + IDEMPOTENCY_WINDOW_MS + 1000;
    await reopened(dir, clock, async (store) => {
      const [again] = await store.append('c', [{ message: user('after its window') }], { idempotencyKey: 'old' });
      expect(again!.message_id).toBe(2);
      await store.clear('c');
    });
    const env = open({ path: dir, maxDbs: 32 });
    try {
      expect([...env.openDB(MESSAGES_DB, { encoding: 'binary' }).getKeys()]).toEqual([]);
    } finally {
      await env.close();
    }
  });
});
