import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { InvalidInputError, type MnemoError } from '../../src/errors.ts';
import type { Message } from '../../src/memory/index.ts';
import { createPostgresStore, type PostgresStore, type PostgresStoreOptions } from '../../src/memory/postgres/index.ts';
import { sql, usePostgres } from '../support/postgres-server.ts';

/** What only the PostgreSQL store has to show; the shared behaviour is in contract.test.ts. */
const db = usePostgres();

function useSchema(label: string): string {
  const schema = db.schema(label);
  return schema;
}

function open(schema: string, options: Partial<PostgresStoreOptions> = {}): PostgresStore {
  const store = createPostgresStore({ connectionString: db.url, schema, ...options } as PostgresStoreOptions);
  db.cleanup(() => store.close());
  return store;
}

const user = (content: string): Message => ({ role: 'user', content });
const q = (schema: string) => pg.escapeIdentifier(schema);

describe('createPostgresStore', () => {
  it('keeps key order, nested values and number spellings exactly (json, not jsonb)', async () => {
    const schema = useSchema('exact');
    const store = open(schema);
    const message = {
      role: 'assistant',
      content: null,
      zeta: 1,
      alpha: { b: 2, a: [{ d: 1, c: 2.5e-7 }, [], {}] },
      tool_calls: [{ id: 'x', type: 'function', function: { name: 'f', arguments: '{"z":1,"a":2}' } }],
      text: 'quote " backslash \\ nul \u0000 lone \uD800 emoji 😀',
    } as unknown as Message;
    const meta = { z: true, a: { y: null, b: [3, 2, 1] } };
    await store.append('c', [{ message, meta }]);

    const [row] = await sql<{ message: string; meta: string; kind: string }>(
      db.url,
      `SELECT message::text AS message, meta::text AS meta, pg_typeof(message)::text AS kind FROM ${q(schema)}.messages`,
    );
    expect(row).toEqual({ message: JSON.stringify(message), meta: JSON.stringify(meta), kind: 'json' });
    const [back] = await store.range('c');
    expect(JSON.stringify(back!.message)).toBe(JSON.stringify(message));
    expect(JSON.stringify(back!.meta)).toBe(JSON.stringify(meta));
    expect(JSON.stringify(await store.get('c'))).toBe(JSON.stringify([message]));
  });

  it('shows a resolved write to a second store on its own pool at once (read-your-writes across pools)', async () => {
    const schema = useSchema('ryw');
    const writer = open(schema);
    const reader = open(schema);
    for (let i = 1; i <= 20; i++) {
      await writer.add('c', [user(`m${i}`)]);
      expect(await reader.lastId('c')).toBe(i);
      expect((await reader.tail('c', 1))[0]).toMatchObject({ message_id: i, message: user(`m${i}`) });
    }
  });

  it('continues the numbering when a new store opens an existing schema', async () => {
    const schema = useSchema('reopen');
    const first = open(schema);
    await first.add('c', [user('a'), user('b')]);
    await first.close();
    const second = open(schema);
    const [record] = await second.append('c', [{ message: user('c') }]);
    expect(record!.message_id).toBe(3);
    expect(await second.get('c')).toEqual([user('a'), user('b'), user('c')]);
  });

  it('commits the appends of one event turn as one statement, across conversations, each in issue order (group commit)', async () => {
    const schema = useSchema('group');
    let readings = 0;
    const store = open(schema, { clock: { now: () => (readings++, Date.now()) } });
    await store.migrate();
    const conversations = ['a', 'b', 'c', 'd', 'e'];
    const batches = await Promise.all(
      Array.from({ length: 50 }, (_, i) => store.append(conversations[i % 5]!, [{ message: user(`m${i}`) }, { message: user(`m${i}'`) }])),
    );
    // One clock reading per statement.
    expect(readings).toBe(1);
    for (const [k, c] of conversations.entries()) {
      const own = batches.filter((_, i) => i % 5 === k);
      expect(own.flat().map((r) => r.message_id)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      expect((await store.get(c)).map((m) => m.content)).toEqual(own.flat().map((r) => r.message.content));
    }
  });

  it('keeps the numbering contiguous from 1 when another store clears the conversation between appends', async () => {
    const schema = useSchema('clearrace');
    const appender = open(schema);
    const clearer = open(schema);
    await appender.migrate();
    let stop = false;
    const failures: unknown[] = [];
    const appending = Promise.all(
      [0, 1, 2].map(async (w) => {
        for (let i = 0; !stop; i++) await appender.add('c', [user(`${w}.${i}`), user(`${w}.${i}'`)]).catch((e) => failures.push(e));
      }),
    );
    for (let k = 0; k < 10; k++) {
      await new Promise((r) => setTimeout(r, 15));
      await clearer.clear('c');
    }
    stop = true;
    await appending;
    expect(failures).toEqual([]);
    const ids = (await sql<{ id: string }>(db.url, `SELECT message_id AS id FROM ${q(schema)}.messages ORDER BY 1`)).map((r) => Number(r.id));
    expect(ids).toEqual(ids.map((_, i) => i + 1));
    expect(await clearer.lastId('c')).toBe(ids.length);
    // A batch is never split by a clear: the pairs stay together.
    const contents = (await clearer.get('c')).map((m) => m.content as string);
    for (let i = 0; i < contents.length; i += 2) expect(contents[i + 1]).toBe(`${contents[i]}'`);
  });

  it('creates its tables once, even when many stores migrate a fresh schema at the same moment', async () => {
    const schema = useSchema('migrate');
    const stores = Array.from({ length: 6 }, () => open(schema));
    await Promise.all(stores.map((s) => s.migrate()));
    await stores[0]!.migrate();
    const tables = await sql<{ name: string }>(db.url, 'SELECT tablename AS name FROM pg_tables WHERE schemaname = $1 ORDER BY 1', [schema]);
    expect(tables.map((t) => t.name)).toEqual(['conversation_ttl', 'conversations', 'forks', 'idempotency', 'messages', 'system_messages']);
    await Promise.all(stores.map((s, i) => s.add('c', [user(`from ${i}`)])));
    expect(await stores[5]!.lastId('c')).toBe(6);
  });

  it('needs no CREATE privilege once the tables exist', async () => {
    const schema = useSchema('grants');
    await open(schema).migrate();
    const role = `mnemo_rw_${schema}`;
    await sql(db.url, `CREATE ROLE ${q(role)} LOGIN`);
    db.cleanup(async () => {
      await sql(db.url, `DROP OWNED BY ${q(role)}`);
      await sql(db.url, `DROP ROLE ${q(role)}`);
    });
    await sql(db.url, `GRANT USAGE ON SCHEMA ${q(schema)} TO ${q(role)}`);
    await sql(db.url, `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${q(schema)} TO ${q(role)}`);
    const limited = open(schema, { connectionString: db.url.replace('postgres://postgres@', `postgres://${role}@`) });
    await limited.add('c', [user('as a role without CREATE')]);
    await limited.clear('c');
    expect(await limited.lastId('c')).toBe(0);
  });

  it('indexes the system messages of an older schema (two tables) when a store of this version opens it', async () => {
    const schema = useSchema('older');
    const old = open(schema);
    await old.add('c', [user('a'), { role: 'system', content: 's1' }, user('nul \u0000 inside'), { role: 'system', content: 'nul \u0000 too' }]);
    await old.close();
    await sql(db.url, `DROP TABLE ${q(schema)}.system_messages`);
    const store = open(schema);
    expect((await store.systemMessages('c')).map((r) => r.message_id)).toEqual([2, 4]);
    await store.add('c', [{ role: 'system', content: 's3' }, user('b')]);
    expect((await store.systemMessages('c')).map((r) => r.message_id)).toEqual([2, 4, 5]);
  });

  it('reports a statement the server refuses as storage_failed, and changes nothing', async () => {
    const schema = useSchema('refused');
    await sql(db.url, `CREATE SCHEMA ${q(schema)}`);
    await sql(db.url, `CREATE TABLE ${q(schema)}.conversations (conversation_id text PRIMARY KEY, last_id bigint NOT NULL)`);
    await sql(db.url, `CREATE TABLE ${q(schema)}.messages (not_what_mnemo_expects int)`);
    await sql(db.url, `CREATE TABLE ${q(schema)}.system_messages (conversation_id text, message_id bigint)`);
    const store = open(schema);
    const error = (await store.add('c', [user('x')]).catch((e: unknown) => e)) as MnemoError & { details: { sqlstate: string } };
    expect(error.code).toBe('storage_failed');
    expect(error.details.sqlstate).toBe('42703'); // undefined_column
    expect(await store.lastId('c')).toBe(0); // the counter's bump rolled back with the insert
  });

  it('rejects further calls with store_closed after close, and leaves a pool it was given open', async () => {
    const schema = useSchema('close');
    const pool = new pg.Pool({ connectionString: db.url, max: 2 });
    db.cleanup(() => pool.end());
    const store = createPostgresStore({ pool, schema });
    const pending = store.add('c', [user('in flight at close')]);
    await store.close();
    await pending;
    const codes = await Promise.all([
      store.add('c', [user('late')]).catch((e: MnemoError) => e.code),
      store.get('c').catch((e: MnemoError) => e.code),
      store.lastId('c').catch((e: MnemoError) => e.code),
    ]);
    expect(codes).toEqual(['store_closed', 'store_closed', 'store_closed']);
    const rows = await pool.query(`SELECT message->>'content' AS content FROM ${q(schema)}.messages`);
    expect(rows.rows).toEqual([{ content: 'in flight at close' }]);
  });

  it('rejects a schema that is not an identifier, and a missing connection, with invalid_option', () => {
    for (const options of [
      { connectionString: db.url, schema: 'bad-name' },
      { connectionString: db.url, schema: 'x; DROP TABLE y' },
      { connectionString: db.url, schema: 'a'.repeat(64) },
      { connectionString: '' },
      {},
    ]) {
      let error: unknown;
      try {
        createPostgresStore(options as PostgresStoreOptions);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(InvalidInputError);
      expect((error as InvalidInputError).code).toBe('invalid_option');
    }
  });
});
