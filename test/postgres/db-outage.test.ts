import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MnemoError } from '../../src/errors.ts';
import { createPostgresStore, StorageUnavailableError, type PostgresStore } from '../../src/memory/postgres/index.ts';
import { freshSchema, SERVER_START_TIMEOUT, sql, startPrivateServer, within, type PrivateServer } from '../support/postgres-server.ts';
import { startRuntime } from '../../src/runtime.ts';
import { startServer } from '../../src/server/index.ts';
import { http } from '../support/http.ts';

/**
 * The database goes away under a running store: a server of this file's own (restarting the
 * shared one would break the other suites), stopped or restarted with pg_ctl via the script.
 */
let server: PrivateServer;

beforeAll(async () => {
  server = await startPrivateServer();
}, SERVER_START_TIMEOUT);

afterAll(async () => {
  await server?.destroy();
}, SERVER_START_TIMEOUT);

const user = (content: string) => ({ role: 'user' as const, content });

async function contentsOf(schema: string, conversation: string): Promise<Array<[number, string]>> {
  const rows = await sql<{ message_id: string; content: string }>(
    server.url,
    `SELECT message_id, message->>'content' AS content FROM ${pg.escapeIdentifier(schema)}.messages
     WHERE conversation_id = $1 ORDER BY message_id`,
    [conversation],
  );
  return rows.map((r) => [Number(r.message_id), r.content]);
}

describe('PostgreSQL going away', () => {
  it('while the server is down every operation fails with storage_unavailable, nothing stored, and the same store works again once it is back', async () => {
    const schema = freshSchema('outage');
    const store = createPostgresStore({ connectionString: server.url, schema });
    try {
      await store.add('c', [user('before')]);
      await server.stop();

      const failures = await Promise.all([
        store.add('c', [user('during')]).catch((e: unknown) => e),
        store.append('c', [{ message: user('during 2') }]).catch((e: unknown) => e),
        store.clear('c').catch((e: unknown) => e),
        store.get('c').catch((e: unknown) => e),
        store.range('c').catch((e: unknown) => e),
        store.tail('c', 1).catch((e: unknown) => e),
        store.lastId('c').catch((e: unknown) => e),
      ]);
      for (const failure of failures) {
        expect(failure).toBeInstanceOf(StorageUnavailableError);
        expect((failure as MnemoError).code).toBe('storage_unavailable');
        // The server was unreachable: nothing was sent, so nothing can have been stored.
        expect((failure as StorageUnavailableError).details.maybeStored).toBe(false);
      }

      await server.start();
      await within('the first append after the restart', () => store.add('c', [user('after')]));
      expect(await store.get('c')).toEqual([user('before'), user('after')]);
      expect(await store.lastId('c')).toBe(2);
    } finally {
      await store.close();
    }
  }, 120_000);

  it('a restart mid-run (pg_ctl restart -m fast) gives typed errors during the outage, then recovery, with no gap, duplicate or lost ack', async () => {
    const schema = freshSchema('restart');
    const store = createPostgresStore({ connectionString: server.url, schema });
    const conversations = ['r-a', 'r-b', 'r-c'];
    const acked = new Map<string, string[]>(conversations.map((c) => [c, []]));
    const notStored: string[] = [];
    const errors: unknown[] = [];
    let restarted = false;
    let okAfterRestart = 0;
    let stop = false;

    const writer = async (c: string, w: number) => {
      for (let i = 0; !stop; i++) {
        const content = `${c}.${w}.${i}`;
        try {
          const [record] = await store.append(c, [{ message: user(content) }]);
          acked.get(c)!.push(`${record!.message_id}:${content}`);
          if (restarted) okAfterRestart++;
        } catch (error) {
          errors.push(error);
          if (error instanceof StorageUnavailableError && !error.details.maybeStored) notStored.push(content);
          await new Promise((r) => setTimeout(r, 20));
        }
      }
    };
    try {
      await store.migrate();
      const writers = conversations.flatMap((c) => [0, 1].map((w) => writer(c, w)));
      await within('some appends before the restart', async () => {
        if ([...acked.values()].flat().length < 30) throw new Error('not yet');
      });
      await server.restart();
      restarted = true;
      await within('30 appends after the restart', async () => {
        if (okAfterRestart < 30) throw new Error('not yet');
      }, 60_000);
      stop = true;
      await Promise.all(writers);
    } finally {
      stop = true;
      await store.close();
    }

    expect(errors.length).toBeGreaterThan(0);
    for (const error of errors) expect((error as MnemoError).code).toBe('storage_unavailable');
    for (const c of conversations) {
      const rows = await contentsOf(schema, c);
      expect(rows.map(([id]) => id)).toEqual(rows.map((_, i) => i + 1));
      const stored = new Set(rows.map(([id, content]) => `${id}:${content}`));
      for (const ack of acked.get(c)!) expect(stored.has(ack), ack).toBe(true);
      const contents = new Set(rows.map(([, content]) => content));
      for (const content of notStored.filter((n) => n.startsWith(`${c}.`))) expect(contents.has(content), content).toBe(false);
    }
  }, 120_000);
});

describe('a server on PostgreSQL while the database is down', () => {
  it('is not ready and answers 503 storage_unavailable, with nothing half-written, then serves again once the database is back', async () => {
    const schema = freshSchema('outage_http');
    const runtime = await startRuntime({ name: 'mnemo_outage_http', storage: { postgres: server.url, schema }, recall: { language: 'en' } });
    const app = await startServer({ recall: runtime.recall, runtime, host: '127.0.0.1', port: 0 });
    const chat = (message: string) => http(app.url, 'POST', '/api/chat', { body: { user_id: 'u', session_id: 's', message } });
    try {
      expect((await chat('before the outage')).status).toBe(200);
      expect((await http(app.url, 'GET', '/readyz')).status).toBe(200);
      await server.stop();

      const ready = await http(app.url, 'GET', '/readyz');
      expect(ready.status).toBe(503);
      expect(ready.json).toEqual({ status: 'not_ready', checks: { tree: 'running', storage: 'open', writable: false, error: 'storage_unavailable' } });
      const refused = await chat('during the outage');
      expect(refused.status).toBe(503);
      expect(refused.json).toEqual({ detail: 'the storage is unreachable; retry shortly', code: 'storage_unavailable' });
      expect((await http(app.url, 'GET', '/healthz')).status).toBe(200);

      await server.start();
      await within('readiness after the restart', async () => {
        const r = await http(app.url, 'GET', '/readyz');
        if (r.status !== 200) throw new Error(r.text);
      });
      expect((await chat('after the outage')).status).toBe(200);
      const rows = await http(app.url, 'GET', '/api/conversations/s/messages?user_id=u');
      // The refused turn left nothing: not its user row, not half a turn.
      expect((rows.json as { items: { content: string }[] }).items.map((r) => r.content)).toEqual([
        'before the outage',
        expect.stringContaining('before the outage'),
        'after the outage',
        expect.stringContaining('after the outage'),
      ]);
    } finally {
      await app.close();
      await runtime.stop();
    }
  }, 120_000);
});

describe('a store the server cannot be reached for', () => {
  let store: PostgresStore;
  afterAll(async () => store?.close());

  it('rejects bad input with InvalidInputError before touching the database', async () => {
    // Nothing listens on port 1: any SQL would fail with storage_unavailable instead.
    store = createPostgresStore({ connectionString: 'postgres://postgres@127.0.0.1:1/none', schema: freshSchema('down') });
    const codes = await Promise.all([
      store.add('', [user('x')]).catch((e: MnemoError) => e.code),
      store.add('c', [{ role: 'robot', content: 'x' } as never]).catch((e: MnemoError) => e.code),
      store.range('c', { from: -1 }).catch((e: MnemoError) => e.code),
      store.add('c', [user('fine')]).catch((e: MnemoError) => e.code),
    ]);
    expect(codes).toEqual(['invalid_id', 'invalid_message', 'invalid_option', 'storage_unavailable']);
  });
});
