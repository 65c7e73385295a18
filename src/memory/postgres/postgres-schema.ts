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
 *   `systemMessages` reads them without scanning the history (a fork's through its chain, as
 *   `range` reads). Created, and filled from the existing messages, the first time a store of
 *   this version opens an older schema.
 * - `idempotency(conversation_id, key, first_id, count, at)`: the keys of a batch (all its
 *   conversations at once, in key order) are claimed (inserted, or taken over when expired) at
 *   the start of the batch's transaction: a concurrent claim of the same key, from any process,
 *   waits on the primary key until the first commits, then reads its `first_id`/`count`
 *   instead of appending. The append statement that follows (`appendKeyed`) numbers the
 *   claimed and unkeyed entries and records each claimed key's first id. Swept by `at`.
 * - `forks(conversation_id, source, at)`: a fork's link. A fork's counter row starts at `at`,
 *   so its appends number on from there; reads follow the chain in one statement (a recursive
 *   CTE, then one index range scan per link, each with the read's limit), so a read sees one
 *   snapshot. `clear` of a source copies each referencing fork's prefix into its rows (and its
 *   system-message keys) first.
 *
 * Ids are `text COLLATE "C"`: byte-wise equality, no locale in the key.
 */
export interface PostgresStatements {
  /** The schema, as given. */
  readonly schema: string;
  /** Idempotent DDL, run under a transaction-scoped advisory lock. */
  readonly ddl: string;
  /** Every table exists (parameter: `tables`): the store needs no DDL, nor CREATE privilege. */
  readonly tablesExist: Statement;
  readonly tables: readonly string[];
  /** Idempotency keys (idempotency.ts): claim a batch's keys, read the taken ones, append and record first ids, sweep. */
  readonly claimKeys: Statement;
  readonly storedKeys: Statement;
  readonly appendKeyed: Statement;
  readonly sweepKeys: Statement;
  readonly clearKeys: Statement;
  /** Forks (fork.ts). */
  readonly sourceLastId: Statement;
  readonly claimForkCounter: Statement;
  readonly insertFork: Statement;
  readonly materializeForks: Statement;
  readonly dropForksOf: Statement;
  readonly dropFork: Statement;
  readonly append: Statement;
  readonly clearCounter: Statement;
  readonly clearMessages: Statement;
  readonly messages: Statement;
  readonly range: Statement;
  readonly tail: Statement;
  readonly systemMessages: Statement;
  readonly lastId: Statement;
  /** The last id with the counter row locked until commit (appends to it wait). */
  readonly lockedLastId: Statement;
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

/** The schema a PostgreSQL store uses by default: `mnemo`. */
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
  // The segments of conversation $1 (fork.ts): (conversation_id, lo, hi), newest first.
  const chain = `WITH RECURSIVE chain(conversation_id, lo, hi, depth) AS (
         SELECT $1::text COLLATE "C", COALESCE((SELECT at FROM ${s}.forks WHERE conversation_id = $1), 0) + 1, 9223372036854775807::bigint, 0
         UNION ALL
         SELECT f.source, COALESCE((SELECT g.at FROM ${s}.forks g WHERE g.conversation_id = f.source), 0) + 1, f.at, chain.depth + 1
         FROM chain JOIN ${s}.forks f ON f.conversation_id = chain.conversation_id
         WHERE chain.depth < 10000
       )`;
  const segmentRows = (lo: string, hi: string, order: 'ASC' | 'DESC', limit: string) => `SELECT m.message_id, m.ts, m.meta, m.message FROM chain CROSS JOIN LATERAL (
           SELECT message_id, ts, meta, message FROM ${s}.messages
           WHERE conversation_id = chain.conversation_id AND message_id BETWEEN GREATEST(chain.lo, ${lo}) AND LEAST(chain.hi, ${hi})
           ORDER BY message_id ${order} ${limit}
         ) m`;

  // The ids of the system messages conversation $1 sees, through its chain.
  const systemSegmentIds = `SELECT sm.message_id FROM chain CROSS JOIN LATERAL (
           SELECT message_id FROM ${s}.system_messages
           WHERE conversation_id = chain.conversation_id AND message_id BETWEEN chain.lo AND chain.hi
         ) sm`;

  const appendText = (keyed: boolean) => `WITH batch AS (
         SELECT b.conversation_id COLLATE "C" AS conversation_id, b.message, b.meta, b.is_system, ${keyed ? 'b.key COLLATE "C" AS key' : 'NULL::text AS key'}, b.ord
         FROM unnest($1::text[], $2::text[], $3::text[], $5::boolean[]${keyed ? ', $6::text[]' : ''}) WITH ORDINALITY AS b(conversation_id, message, meta, is_system${keyed ? ', key' : ''}, ord)
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
                b.meta, b.message, b.is_system, b.key
         FROM batch b JOIN bases USING (conversation_id)
       ), inserted AS (
         INSERT INTO ${s}.messages (conversation_id, message_id, ts, meta, message)
         SELECT conversation_id, message_id, $4, meta::json, message::json FROM numbered
       ), indexed AS (
         INSERT INTO ${s}.system_messages (conversation_id, message_id)
         SELECT conversation_id, message_id FROM numbered WHERE is_system
       )${
         keyed
           ? `, settled AS (
         UPDATE ${s}.idempotency k SET first_id = n.message_id FROM numbered n
         WHERE n.key IS NOT NULL AND k.conversation_id = n.conversation_id AND k.key = n.key
       )`
           : ''
       }
       SELECT conversation_id, base FROM bases`;

  return {
    schema,
    migrationLock: `mnemo.migrate.${schema}`,
    tables: [`${s}.conversations`, `${s}.messages`, `${s}.system_messages`, `${s}.idempotency`, `${s}.forks`, `${s}.conversation_ttl`],
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
      CREATE TABLE IF NOT EXISTS ${s}.idempotency (
        conversation_id text COLLATE "C" NOT NULL,
        key text COLLATE "C" NOT NULL,
        first_id bigint NOT NULL,
        count integer NOT NULL,
        at bigint NOT NULL,
        PRIMARY KEY (conversation_id, key)
      );
      CREATE INDEX IF NOT EXISTS idempotency_at ON ${s}.idempotency (at);
      CREATE TABLE IF NOT EXISTS ${s}.forks (
        conversation_id text COLLATE "C" PRIMARY KEY,
        source text COLLATE "C" NOT NULL,
        at bigint NOT NULL CHECK (at >= 1)
      );
      CREATE INDEX IF NOT EXISTS forks_source ON ${s}.forks (source);
      -- Per-conversation retention overrides (runtime.retention.setTtl): ms, or NULL for never.
      CREATE TABLE IF NOT EXISTS ${s}.conversation_ttl (
        conversation_id text COLLATE "C" PRIMARY KEY,
        ttl_ms bigint CHECK (ttl_ms > 0)
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
    tablesExist: named('tables_exist_v2', `SELECT bool_and(to_regclass(t) IS NOT NULL) AS ok FROM unnest($1::text[]) AS t`),
    // Per key: $1 conversation, $2 key, $3 count; $4 now, $5 expiry cutoff. A row back: claimed.
    // Claimed in (conversation, key) order, so two batches sharing keys queue, not deadlock.
    claimKeys: named(
      'claim_keys',
      `INSERT INTO ${s}.idempotency AS k (conversation_id, key, first_id, count, at)
       SELECT v.conversation_id, v.key, 0, v.count, $4 FROM unnest($1::text[], $2::text[], $3::integer[]) AS v(conversation_id, key, count)
       ORDER BY v.conversation_id COLLATE "C", v.key COLLATE "C"
       ON CONFLICT (conversation_id, key) DO UPDATE SET first_id = 0, count = EXCLUDED.count, at = EXCLUDED.at WHERE k.at <= $5
       RETURNING k.conversation_id, k.key`,
    ),
    storedKeys: named(
      'stored_keys',
      `SELECT k.conversation_id, k.key, k.first_id, k.count FROM unnest($1::text[], $2::text[]) AS v(conversation_id, key)
       JOIN ${s}.idempotency k ON k.conversation_id = v.conversation_id COLLATE "C" AND k.key = v.key COLLATE "C"`,
    ),
    sweepKeys: named(
      'sweep_keys',
      `DELETE FROM ${s}.idempotency WHERE ctid IN (SELECT ctid FROM ${s}.idempotency WHERE at <= $1 LIMIT $2)`,
    ),
    clearKeys: named('clear_keys', `DELETE FROM ${s}.idempotency WHERE conversation_id = $1`),
    sourceLastId: named('source_last_id', `SELECT last_id FROM ${s}.conversations WHERE conversation_id = $1 FOR SHARE`),
    claimForkCounter: named(
      'claim_fork_counter',
      `INSERT INTO ${s}.conversations (conversation_id, last_id) VALUES ($1, $2) ON CONFLICT (conversation_id) DO NOTHING RETURNING 1 AS claimed`,
    ),
    insertFork: named('insert_fork', `INSERT INTO ${s}.forks (conversation_id, source, at) VALUES ($1, $2, $3)`),
    // Each fork of $1 gets the rows it reads from $1 (ids 1..its at) as its own, and their
    // system-message keys.
    materializeForks: named(
      'materialize_forks_v2',
      `${chain}, copied AS (
         INSERT INTO ${s}.messages (conversation_id, message_id, ts, meta, message)
         SELECT f.conversation_id, r.message_id, r.ts, r.meta, r.message
         FROM (${segmentRows('1', '9223372036854775807', 'ASC', '')}) r
         JOIN ${s}.forks f ON f.source = $1 AND r.message_id <= f.at
       )
       INSERT INTO ${s}.system_messages (conversation_id, message_id)
       SELECT f.conversation_id, r.message_id FROM (${systemSegmentIds}) r
       JOIN ${s}.forks f ON f.source = $1 AND r.message_id <= f.at`,
    ),
    dropForksOf: named('drop_forks_of', `DELETE FROM ${s}.forks WHERE source = $1`),
    dropFork: named('drop_fork', `DELETE FROM ${s}.forks WHERE conversation_id = $1`),
    // One statement appends a batch spanning any number of conversations. Per entry:
    // $1 conversation, $2 message (json text), $3 meta (json text), $5 is it a system
    // message; $4 the batch's ts.
    // Counter rows are locked in conversation order, so two processes whose batches share
    // conversations queue on each other instead of deadlocking. Within a conversation the
    // entries are numbered in array order. Returns each conversation's id base (first id - 1).
    append: named('append', appendText(false)),
    // The same, with $6: per entry the key it is the first entry of (NULL for the others), whose
    // claimed row (claimKeys, earlier in the transaction) gets the entry's id as its first id.
    appendKeyed: named('append_keyed', appendText(true)),
    clearCounter: named('clear_counter', `DELETE FROM ${s}.conversations WHERE conversation_id = $1`),
    clearMessages: named(
      'clear_messages',
      `WITH unindexed AS (DELETE FROM ${s}.system_messages WHERE conversation_id = $1)
       DELETE FROM ${s}.messages WHERE conversation_id = $1`,
    ),
    messages: named(
      'messages_v2',
      `${chain} SELECT message::text AS message FROM (${segmentRows('1', '9223372036854775807', 'ASC', '')}) r ORDER BY message_id`,
    ),
    range: named(
      'range_v2',
      `${chain} SELECT ${columns} FROM (${segmentRows('$2::bigint', '$3::bigint', 'ASC', 'LIMIT $4')}) r ORDER BY message_id LIMIT $4`,
    ),
    tail: named(
      'tail_v2',
      `${chain} SELECT * FROM (
         SELECT ${columns} FROM (${segmentRows('1', '9223372036854775807', 'DESC', 'LIMIT $2')}) r ORDER BY message_id DESC LIMIT $2
       ) last ORDER BY message_id`,
    ),
    systemMessages: named(
      'system_messages_v2',
      `${chain} SELECT ${columns} FROM chain CROSS JOIN LATERAL (
         SELECT message_id, m.ts, m.meta, m.message FROM ${s}.system_messages sm JOIN ${s}.messages m USING (conversation_id, message_id)
         WHERE sm.conversation_id = chain.conversation_id AND sm.message_id BETWEEN chain.lo AND chain.hi
       ) r ORDER BY message_id`,
    ),
    lastId: named('last_id', `SELECT last_id FROM ${s}.conversations WHERE conversation_id = $1`),
    lockedLastId: named('locked_last_id', `SELECT last_id FROM ${s}.conversations WHERE conversation_id = $1 FOR UPDATE`),
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
            indexed AS (DELETE FROM ${s}.system_messages WHERE ${selected}),
            keyed AS (DELETE FROM ${s}.idempotency WHERE ${selected}),
            forked AS (DELETE FROM ${s}.forks WHERE ${selected}),
            ttls AS (DELETE FROM ${s}.conversation_ttl WHERE ${selected})
       DELETE FROM ${s}.messages WHERE ${selected}`,
    ),
  };
}
