import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresStore } from '../../src/memory/postgres/index.ts';
import { createPostgresRecallStore } from '../../src/postgres.ts';
import type { RecallStore } from '../../src/recall/index.ts';
import { freshSchema, SERVER_START_TIMEOUT, startPrivateServer, within, type PrivateServer } from '../support/postgres-server.ts';

/**
 * The database goes away under a running recall store: a server of this file's own, stopped and
 * restarted with pg_ctl via the script. Failures are typed (`storage_unavailable`), nothing is
 * half-written, held session locks are let go without a throw, and the same store works again.
 */
let server: PrivateServer;

beforeAll(async () => {
  server = await startPrivateServer();
}, SERVER_START_TIMEOUT);

afterAll(async () => {
  await server?.destroy();
}, SERVER_START_TIMEOUT);

const turn = (store: RecallStore, sessionId: string, content: string) =>
  store.appendTurn({
    userId: 'u1',
    sessionId,
    entries: [{ message: { role: 'user', content } }],
    opens: { now: '2026-04-08T10:00:00' },
    with: (records) => ({ daily: records.map((r) => ({ day: '2026-04-08', ts: '2026-04-08T10:00:00', role: 'user', content, sessionId, sessionMessageId: r.message_id })) }),
  });

describe('PostgreSQL going away under the recall store', () => {
  it('fails typed while down, stores nothing of a failed turn, lets held locks go, and works again', async () => {
    const schema = freshSchema('recall_outage');
    const transcripts = createPostgresStore({ connectionString: server.url, schema });
    const store = createPostgresRecallStore({ transcripts });
    try {
      await turn(store, 's1', 'before');
      const held = await store.lockSession('u1', 's1');
      await server.stop();
      await expect(turn(store, 's1', 'during')).rejects.toMatchObject({ code: 'storage_unavailable' });
      await expect(store.sessions('u1')).rejects.toMatchObject({ code: 'storage_unavailable' });
      await expect(store.lockSession('u1', 's2')).rejects.toMatchObject({ code: 'storage_unavailable' });
      await held(); // its connection is gone, and its lock with it: no throw
      await server.start();

      await within('a turn after the restart', () => turn(store, 's1', 'after'));
      expect((await store.dailyDay('u1', '2026-04-08')).map((r) => r.content)).toEqual(['before', 'after']);
      expect((await transcripts.range('session/u1/s1')).map((r) => r.message.content)).toEqual(['before', 'after']);
      const again = await store.lockSession('u1', 's1');
      await again();
    } finally {
      await store.close();
      await transcripts.close();
    }
  }, 120_000);
});
