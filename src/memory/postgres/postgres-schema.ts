import { createHash } from 'node:crypto';
import { escapeIdentifier } from 'pg';
import { InvalidInputError } from '../../errors.ts';

/**
 * The tables of one Mnemo store inside a PostgreSQL schema, and every statement the store runs.
 *
 * - `conversations(conversation_id, last_id)`: the per-conversation counter. An append bumps
 *   it with `INSERT ... ON CONFLICT DO UPDATE ... RETURNING` in the same statement that inserts
 *   the messages. The upsert takes the counter row's lock until commit, so appenders to one
 *   conversation (from any process) queue on that row and number from the committed value; a
 *   rolled-back append rolls its increment back with it. Hence no gap and no duplicate, and
 *   appenders to different conversations never wait for each other. (A transaction-scoped
 *   advisory lock would also serialize, but on a 64-bit hash of the id, so unrelated
 *   conversations could collide, and it would still need a `max(message_id)` read.)
 * - `messages(conversation_id, message_id, ts, meta, message)`: one row per message, primary
 *   key `(conversation_id, message_id)`, so `get`/`range`/`tail` are index range scans.
 *   `message` and `meta` are `json`, not `jsonb`: `json` keeps the text exactly as written, so
 *   key order and number spellings come back as given (`jsonb` would
 *   reorder keys). `ts` is text, the exact string the store stamped.
 * - `system_messages(conversation_id, message_id)`: the keys of the system messages alone,
 *   inserted by the same append statement (the store tells it which entries are system
 *   messages, so PostgreSQL parses no JSON; a batch without one inserts nothing), so
 *   `systemMessages` reads them without scanning the history. Created, and filled from the
 *   existing messages, the first time a store of this version opens an older schema.
 *
 * Ids are `text COLLATE "C"`: byte-wise equality, no locale in the key.
 */
export interface PostgresStatements {
  /** The schema, as given. */
  readonly schema: string;
  /** Idempotent DDL, run under a transaction-scoped advisory lock. */
  readonly ddl: string;
  /** Every table exists (parameters: `tables`): the store needs no DDL, nor CREATE privilege. */
  readonly tablesExist: Statement;
  readonly tables: readonly [string, string, string];
  readonly append: Statement;
  readonly clearCounter: Statement;
  readonly clearMessages: Statement;
  readonly messages: Statement;
  readonly range: Statement;
  readonly tail: Statement;
  readonly systemMessages: Statement;
  readonly lastId: Statement;
  /** Erasure (parameters: ids, prefixes): lock, then delete, the selected conversations. */
  readonly eraseLock: Statement;
  readonly eraseRows: Statement;
  /** Advisory lock key that serializes concurrent migrations of this schema. */
  readonly migrationLock: string;
}

/** A named statement: `pg` prepares it once per connection. */
export interface Statement {
  readonly name: string;
  readonly text: string;
}

export const DEFAULT_SCHEMA = 'mnemo';

const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

export function postgresStatements(schema: string = DEFAULT_SCHEMA): PostgresStatements {
  if (typeof schema !== 'string' || !SCHEMA_NAME.test(schema)) {
    throw new InvalidInputError('invalid_option', 'schema must be an SQL identifier: a letter or _, then letters, digits or _, at most 63', {
      option: 'schema',
    });
  }
  const s = escapeIdentifier(schema);
  // Statement names are per connection; a pool may serve stores of several schemas.
  const tag = createHash('sha256').update(schema).digest('hex').slice(0, 16);
  const named = (name: string, text: string): Statement => ({ name: `mnemo_${name}_${tag}`, text });
  // json comes back as text and is parsed by the store, whatever type parsers a pool has.
  const columns = 'message_id, ts, meta::text AS meta, message::text AS message';
  const selected = `(conversation_id = ANY($1::text[]) OR EXISTS (
    SELECT 1 FROM unnest($2::text[]) AS p(prefix)
    WHERE conversation_id >= p.prefix AND conversation_id < p.prefix || chr(1114111)))`;

  return {
    schema,
    migrationLock: `mnemo.migrate.${schema}`,
    tables: [`${s}.conversations`, `${s}.messages`, `${s}.system_messages`],
    ddl: `
      CREATE SCHEMA IF NOT EXISTS ${s};
      CREATE TABLE IF NOT EXISTS ${s}.conversations (
        conversation_id text COLLATE "C" PRIMARY KEY,
        last_id bigint NOT NULL CHECK (last_id >= 0)
      );
      CREATE TABLE IF NOT EXISTS ${s}.messages (
        conversation_id text COLLATE "C" NOT NULL,
        message_id bigint NOT NULL CHECK (message_id >= 1),
        ts text NOT NULL,
        meta json NOT NULL,
        message json NOT NULL,
        PRIMARY KEY (conversation_id, message_id)
      );
      DO $$ BEGIN
        IF to_regclass('${s}.system_messages') IS NULL THEN
          CREATE TABLE ${s}.system_messages (
            conversation_id text COLLATE "C" NOT NULL,
            message_id bigint NOT NULL,
            PRIMARY KEY (conversation_id, message_id)
          );
          -- Older schemas: index the system messages already stored. json's ->> refuses a
          -- \\u0000 escape anywhere in the value, so those rows are matched on their text.
          INSERT INTO ${s}.system_messages (conversation_id, message_id)
          SELECT conversation_id, message_id FROM ${s}.messages
          WHERE CASE WHEN strpos(message::text, '\\u0000') > 0 THEN message::text ~ '^\\s*\\{.*"role"\\s*:\\s*"system"'
                     ELSE (message->>'role') = 'system' END;
        END IF;
      END $$;`,
    tablesExist: named(
      'tables_exist',
      `SELECT to_regclass($1) IS NOT NULL AND to_regclass($2) IS NOT NULL AND to_regclass($3) IS NOT NULL AS ok`,
    ),
    // One statement appends a batch spanning any number of conversations. Per entry:
    // $1 conversation, $2 message (json text), $3 meta (json text), $5 is it a system
    // message; $4 the batch's ts.
    // Counter rows are locked in conversation order, so two processes whose batches share
    // conversations queue on each other instead of deadlocking. Within a conversation the
    // entries are numbered in array order. Returns each conversation's id base (first id - 1).
    append: named(
      'append',
      `WITH batch AS (
         SELECT b.conversation_id COLLATE "C" AS conversation_id, b.message, b.meta, b.is_system, b.ord
         FROM unnest($1::text[], $2::text[], $3::text[], $5::boolean[]) WITH ORDINALITY AS b(conversation_id, message, meta, is_system, ord)
       ), sizes AS (
         SELECT conversation_id, count(*) AS n FROM batch GROUP BY conversation_id
       ), counter AS (
         INSERT INTO ${s}.conversations AS c (conversation_id, last_id)
         SELECT conversation_id, n FROM sizes ORDER BY conversation_id
         ON CONFLICT (conversation_id) DO UPDATE SET last_id = c.last_id + EXCLUDED.last_id
         RETURNING c.conversation_id, c.last_id
       ), bases AS (
         SELECT conversation_id, counter.last_id - sizes.n AS base FROM counter JOIN sizes USING (conversation_id)
       ), numbered AS (
         SELECT b.conversation_id, bases.base + row_number() OVER (PARTITION BY b.conversation_id ORDER BY b.ord) AS message_id,
                b.meta, b.message, b.is_system
         FROM batch b JOIN bases USING (conversation_id)
       ), inserted AS (
         INSERT INTO ${s}.messages (conversation_id, message_id, ts, meta, message)
         SELECT conversation_id, message_id, $4, meta::json, message::json FROM numbered
       ), indexed AS (
         INSERT INTO ${s}.system_messages (conversation_id, message_id)
         SELECT conversation_id, message_id FROM numbered WHERE is_system
       )
       SELECT conversation_id, base FROM bases`,
    ),
    clearCounter: named('clear_counter', `DELETE FROM ${s}.conversations WHERE conversation_id = $1`),
    clearMessages: named(
      'clear_messages',
      `WITH unindexed AS (DELETE FROM ${s}.system_messages WHERE conversation_id = $1)
       DELETE FROM ${s}.messages WHERE conversation_id = $1`,
    ),
    messages: named('messages', `SELECT message::text AS message FROM ${s}.messages WHERE conversation_id = $1 ORDER BY message_id`),
    range: named(
      'range',
      `SELECT ${columns} FROM ${s}.messages
       WHERE conversation_id = $1 AND message_id BETWEEN $2 AND $3
       ORDER BY message_id LIMIT $4`,
    ),
    tail: named(
      'tail',
      `SELECT * FROM (
         SELECT ${columns} FROM ${s}.messages WHERE conversation_id = $1 ORDER BY message_id DESC LIMIT $2
       ) last ORDER BY message_id`,
    ),
    systemMessages: named(
      'system_messages',
      `SELECT ${columns} FROM ${s}.system_messages JOIN ${s}.messages USING (conversation_id, message_id)
       WHERE conversation_id = $1
       ORDER BY message_id`,
    ),
    lastId: named('last_id', `SELECT last_id FROM ${s}.conversations WHERE conversation_id = $1`),
    // Counter rows locked in conversation order, as appends lock them, so the two never
    // deadlock; an append in flight holds its row, and the erasure waits for it. A prefix is
    // an index range: under COLLATE "C", U+10FFFF (chr(1114111)) sorts after every id.
    eraseLock: named(
      'erase_lock',
      `SELECT conversation_id FROM ${s}.conversations WHERE ${selected}
       ORDER BY conversation_id FOR UPDATE`,
    ),
    eraseRows: named(
      'erase_rows',
      `WITH counters AS (DELETE FROM ${s}.conversations WHERE ${selected}),
            indexed AS (DELETE FROM ${s}.system_messages WHERE ${selected})
       DELETE FROM ${s}.messages WHERE ${selected}`,
    ),
  };
}
