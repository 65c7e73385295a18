import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createInMemoryStore, createLmdbStore, StorageError, type LmdbStore } from '../../src/memory/index.ts';
import { describeMessageLogContract } from '../../src/testing.ts';

/** Two stores on one fresh LMDB environment (each believes it is the only writer), closed and removed after `fn`. */
async function withTwoWriters(options: { noSync?: boolean }, fn: (first: LmdbStore, second: LmdbStore) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'mnemo-lmdb-'));
  const first = createLmdbStore({ path: dir, ...options });
  const second = createLmdbStore({ path: dir, ...options });
  try {
    await fn(first, second);
  } finally {
    await first.close();
    await second.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

describeMessageLogContract('createInMemoryStore', async ({ clock }) => {
  const store = createInMemoryStore({ clock });
  return { log: store, close: () => store.close() };
});

describeMessageLogContract('createLmdbStore', async ({ clock }) => {
  const dir = mkdtempSync(join(tmpdir(), 'mnemo-lmdb-'));
  const store = createLmdbStore({ path: dir, clock });
  return {
    log: store,
    close: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

describe('two writers on one LMDB environment', () => {
  const user = (content: string) => ({ role: 'user' as const, content });

  it('refuses a batch numbered onto a stored id with write_conflict, stores none of it, and numbers on after', () =>
    withTwoWriters({}, async (first, second) => {
      await first.add('c', [user('1')]);
      await second.add('c', [user('2')]);
      const conflict = await first.append('c', [{ message: user('lost a') }, { message: user('lost b') }]).catch((e: unknown) => e);
      expect(conflict).toBeInstanceOf(StorageError);
      expect((conflict as StorageError).code).toBe('write_conflict');
      expect(await second.get('c')).toEqual([user('1'), user('2')]);
      const [record] = await first.append('c', [{ message: user('3') }]);
      expect(record!.message_id).toBe(3);
      expect((await second.range('c')).map((r) => r.message_id)).toEqual([1, 2, 3]);
    }));
});

describe('two writers on one LMDB environment, committing straight to LMDB (no journal)', () => {
  const user = (content: string) => ({ role: 'user' as const, content });
  const system = (content: string) => ({ role: 'system' as const, content });

  it('refuses a one-message batch numbered onto a stored id with write_conflict (one put with no-overwrite), and numbers on after', () =>
    withTwoWriters({ noSync: true }, async (first, second) => {
      await first.add('c', [user('1')]);
      await second.add('c', [user('2')]);
      const conflict = await first.add('c', [user('lost')]).catch((e: unknown) => e);
      expect((conflict as StorageError).code).toBe('write_conflict');
      expect(await second.get('c')).toEqual([user('1'), user('2')]);
      await first.add('c', [user('3')]);
      expect((await second.range('c')).map((r) => [r.message_id, r.message.content])).toEqual([
        [1, '1'],
        [2, '2'],
        [3, '3'],
      ]);
    }));

  it('refuses a one-system-message batch the same way, and its index row with it', () =>
    withTwoWriters({ noSync: true }, async (first, second) => {
      await first.add('c', [user('1')]);
      await second.add('c', [user('2')]);
      const conflict = await first.add('c', [system('lost')]).catch((e: unknown) => e);
      expect((conflict as StorageError).code).toBe('write_conflict');
      expect(await second.systemMessages('c')).toEqual([]);
      expect(await second.get('c')).toEqual([user('1'), user('2')]);
    }));
});

describe('two writers on one LMDB environment, one idempotency key', () => {
  const user = (content: string) => ({ role: 'user' as const, content });

  it('stores a keyed batch once however the two writers interleave: a retry finds the key or conflicts, never stores twice', () =>
    withTwoWriters({}, async (first, second) => {
      // Both have read the conversation (last id 1), so both number the keyed batch as id 2.
      await first.add('c', [user('1')]);
      expect(await second.lastId('c')).toBe(1);
      await second.add('c', [user('x')], { idempotencyKey: 'k' }).catch(() => undefined);
      const outcomes = await Promise.allSettled([
        first.add('c', [user('k again')], { idempotencyKey: 'k' }),
        second.add('c', [user('k again')], { idempotencyKey: 'k' }),
        first.append('c', [{ message: user('k once more') }], { idempotencyKey: 'k' }),
      ]);
      for (const o of outcomes) if (o.status === 'rejected') expect((o.reason as StorageError).code).toBe('write_conflict');
      // After the conflicts, each writer has re-read the last id; a retry finds the key.
      const [retry] = await first.append('c', [{ message: user('k last') }], { idempotencyKey: 'k' });
      expect(retry!.message).toEqual(user('x'));
      const contents = (await second.get('c')).map((m) => m.content);
      expect(contents.filter((t) => t !== '1')).toEqual(['x']);
    }));
});

describe('closing a standalone LMDB store', () => {
  const user = (content: string) => ({ role: 'user' as const, content });

  it('lets every pending write of every conversation commit before it closes, and refuses new ones', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mnemo-lmdb-'));
    const store = createLmdbStore({ path: dir });
    const pending: Array<Promise<void>> = [];
    for (let c = 0; c < 20; c++) for (let i = 0; i < 3; i++) pending.push(store.add(`c${c}`, [user(`${c}.${i}`)]));
    const closed = store.close();
    const refused = await store.add('late', [user('late')]).catch((e: unknown) => e);
    expect((refused as StorageError).code).toBe('store_closed');
    await closed;
    await Promise.all(pending);
    const reopened = createLmdbStore({ path: dir });
    try {
      for (let c = 0; c < 20; c++) expect(await reopened.get(`c${c}`)).toEqual([user(`${c}.0`), user(`${c}.1`), user(`${c}.2`)]);
      expect(await reopened.lastId('late')).toBe(0);
    } finally {
      await reopened.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('clearIfLastId (the retention sweep\'s compare-and-clear)', () => {
  const user = (content: string) => ({ role: 'user' as const, content });

  it('clears only while the last id is the one given, after the writes queued before it', async () => {
    const store = createInMemoryStore();
    try {
      await store.add('c', [user('a')]);
      // Queued behind an append: the append lands first, so id 1 is no longer the last.
      const [, kept] = await Promise.all([store.add('c', [user('b')]), store.clearIfLastId('c', 1)]);
      expect(kept).toBe(false);
      expect(await store.get('c')).toEqual([user('a'), user('b')]);
      expect(await store.clearIfLastId('c', 2)).toBe(true);
      expect(await store.lastId('c')).toBe(0);
    } finally {
      await store.close();
    }
  });

  it('refuses a lastId that is not an id with invalid_option, clearing nothing', async () => {
    const store = createInMemoryStore();
    try {
      await store.add('c', [user('a')]);
      for (const bad of [-1, 1.5, Number.NaN]) await expect(store.clearIfLastId('c', bad)).rejects.toMatchObject({ code: 'invalid_option' });
      expect(await store.lastId('c')).toBe(1);
    } finally {
      await store.close();
    }
  });
});
