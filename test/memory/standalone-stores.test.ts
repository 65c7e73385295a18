import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createInMemoryStore, createLmdbStore, StorageError } from '../../src/memory/index.ts';
import { describeMessageLogContract } from '../../src/testing.ts';

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

  it('refuses a batch numbered onto a stored id with write_conflict, stores none of it, and numbers on after', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mnemo-lmdb-'));
    // Each store remembers the last ids it wrote, so each believes it is the only writer.
    const first = createLmdbStore({ path: dir });
    const second = createLmdbStore({ path: dir });
    try {
      await first.add('c', [user('1')]);
      await second.add('c', [user('2')]);
      const conflict = await first.append('c', [{ message: user('lost a') }, { message: user('lost b') }]).catch((e: unknown) => e);
      expect(conflict).toBeInstanceOf(StorageError);
      expect((conflict as StorageError).code).toBe('write_conflict');
      expect(await second.get('c')).toEqual([user('1'), user('2')]);
      const [record] = await first.append('c', [{ message: user('3') }]);
      expect(record!.message_id).toBe(3);
      expect((await second.range('c')).map((r) => r.message_id)).toEqual([1, 2, 3]);
    } finally {
      await first.close();
      await second.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
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
