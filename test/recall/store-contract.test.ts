import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acquireEnvironment } from '../../src/memory/lmdb/lmdb-environment.ts';
import { createLmdbStore } from '../../src/memory/lmdb/lmdb-store.ts';
import { createLmdbRecallStore } from '../../src/recall/index.ts';
import { describeRecallStoreContract } from '../../src/testing.ts';

/**
 * The storage port's conformance suite (`describeRecallStoreContract`, mnemo/testing) on the
 * LMDB adapter, as the runtime opens it: the recall databases and the LMDB message store (the
 * session transcripts) in one environment of a temp directory. `noSync`: the suite tests
 * behaviour, not durability (the kill tests do that).
 */
describeRecallStoreContract('lmdb', async ({ clock, embeddings }) => {
  const dir = mkdtempSync(join(tmpdir(), 'mnemo-store-contract-'));
  const env = acquireEnvironment(dir, { noSync: true });
  const transcripts = createLmdbStore({ path: dir, clock });
  const store = createLmdbRecallStore({ env, transcripts, clock, embeddings });
  return {
    store,
    async close() {
      await store.close();
      await transcripts.close();
      await env.release();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
