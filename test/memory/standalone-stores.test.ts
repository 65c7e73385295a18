import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInMemoryStore, createLmdbStore } from '../../src/memory/index.ts';
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
