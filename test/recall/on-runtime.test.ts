import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { createLmdbRecallStore, createRecall, createSearchPool } from '../../src/recall/index.ts';
import { startRuntime } from '../../src/runtime.ts';
import { manualClock, ZONE } from '../support/recall-fixture.ts';

it('on a running runtime: transcripts through its conversation actors, recall in its environment, scans on the pool', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mnemo-recall-runtime-'));
  const runtime = await startRuntime({ name: 'recall_rt', dataDir: dir, storage: 'lmdb', lmdb: { noSync: true } });
  const pool = createSearchPool({ maxThreads: 1 });
  try {
    const storage = runtime.storage;
    if (storage.kind !== 'lmdb') throw new Error('expected LMDB storage');
    const clock = manualClock();
    const store = createLmdbRecallStore({ env: { root: storage.root, path: storage.path }, transcripts: runtime.memory, pool, poolThreshold: 0, clock });
    const recall = createRecall({ store, clock, timeZone: ZONE });
    await Promise.all(['a', 'b', 'c'].map((m) => recall.chat({ userId: 'u', sessionId: 's', message: `hello ${m}` })));
    expect((await recall.getSessionMessages('u', 's')).map((r) => r.messageId)).toEqual([1, 2, 3, 4, 5, 6]);
    expect((await recall.searchSession({ userId: 'u', sessionId: 's', keyword: 'HELLO B' })).map((r) => r.content)).toEqual([
      'hello b',
      '收到：hello b。我已经记录到记忆中。',
    ]);
    expect(await recall.searchDaily({ userId: 'u', keyword: 'hello', limit: 200 })).toHaveLength(6);
    expect((await recall.listSessions('u')).map((c) => c.sessionId)).toEqual(['s']);
    await recall.close();
  } finally {
    await pool.close();
    await runtime.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
