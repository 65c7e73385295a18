import type { PoolClient } from 'pg';
import { runOrderedMigrations } from '../../../memory/postgres/ordered-migrations.ts';

/**
 * The layered memory's tables in PostgreSQL, beside the message store's (same schema, names
 * prefixed `recall_`), as ORDERED MIGRATIONS: `MIGRATIONS[i]` takes the schema from version i
 * to i + 1, and `recall_schema_version` holds the version reached. A store migrates at open,
 * under a transaction-scoped advisory lock (the message store's mechanism), so many processes
 * starting at once apply each step once; a step is never edited once released, only added to.
 *
 * | table                  | key                          | what                                      |
 * |------------------------|------------------------------|-------------------------------------------|
 * | recall_users           | user_id                      | incarnation, counters, facts generation, index totals; its row lock orders the user's writes |
 * | recall_sessions        | user_id, session_id          | the sessions index (SessionEntry columns, the title as json; `first_turn`: its first turn has not ended) |
 * | recall_daily           | user_id, day, id             | the daily view (record: DailyRecord json) |
 * | recall_daily_high      | user_id, day                 | a day's high-water mark (ids never reused)|
 * | recall_log             | user_id, seq                 | the dialogue log                          |
 * | recall_long_term       | user_id, version             | long-term document versions               |
 * | recall_facts           | user_id, seq                 | every fact entry; `current`, `key`        |
 * | recall_turn_keys       | user_id, session_id, key     | keyed turns' entries                      |
 * | recall_session_docs    | user_id, ord, id             | session documents (search/doc-numbers.ts) |
 * | recall_docs            | user_id, doc                 | the ranked index's documents, their length|
 * | recall_postings        | user_id, term, doc           | tf (and the document's length)            |
 * | recall_vectors         | user_id, item, id            | embeddings (`encodeVector` bytes; with pgvector the hash, and `embedding`) |
 * | recall_jobs            | kind, user_id, key           | the job queue, with leases                |
 * | recall_dead_jobs       | kind, user_id, key           | its dead letters                          |
 *
 * Whatever holds user text is `json` (rows, titles, facts), never `text`: PostgreSQL's text cannot
 * hold NUL, a JSON string can (as `\u0000`); ids, days and keys exclude control characters.
 * Every table's key starts with the user (the jobs' after the kind), so an erasure is one
 * `DELETE ... WHERE user_id = $1` per table. Ids are `text COLLATE "C"` as in the message store.
 * Vectors are `bytea`; where pgvector is installed, a step outside this list (it depends on the
 * server, not on the version: pgvector.ts `enablePgvector`) adds `embedding vector` beside them.
 */
export const MIGRATIONS: readonly ((s: string) => string)[] = [
  (s) => `
    CREATE TABLE ${s}.recall_users (
      user_id text COLLATE "C" PRIMARY KEY,
      incarnation text NOT NULL,
      session_order bigint NOT NULL DEFAULT 0,
      log_seq bigint NOT NULL DEFAULT 0,
      fact_seq bigint NOT NULL DEFAULT 0,
      facts_gen text NOT NULL DEFAULT '',
      fact_doc json,
      index_docs bigint NOT NULL DEFAULT 0,
      index_length bigint NOT NULL DEFAULT 0,
      embed_live boolean NOT NULL DEFAULT false
    );
    CREATE TABLE ${s}.recall_sessions (
      user_id text COLLATE "C" NOT NULL,
      session_id text COLLATE "C" NOT NULL,
      title text NOT NULL,
      updated_at text NOT NULL,
      ord bigint NOT NULL,
      listed boolean NOT NULL,
      extra json,
      PRIMARY KEY (user_id, session_id)
    );
    CREATE TABLE ${s}.recall_daily (
      user_id text COLLATE "C" NOT NULL,
      day text COLLATE "C" NOT NULL,
      id bigint NOT NULL,
      session_id text COLLATE "C",
      session_message_id bigint,
      record json NOT NULL,
      PRIMARY KEY (user_id, day, id)
    );
    CREATE INDEX recall_daily_session ON ${s}.recall_daily (user_id, session_id, session_message_id);
    CREATE TABLE ${s}.recall_daily_high (
      user_id text COLLATE "C" NOT NULL,
      day text COLLATE "C" NOT NULL,
      high bigint NOT NULL,
      PRIMARY KEY (user_id, day)
    );
    CREATE TABLE ${s}.recall_log (
      user_id text COLLATE "C" NOT NULL,
      seq bigint NOT NULL,
      session_id text COLLATE "C" NOT NULL,
      record json NOT NULL,
      PRIMARY KEY (user_id, seq)
    );
    CREATE INDEX recall_log_session ON ${s}.recall_log (user_id, session_id, seq);
    CREATE TABLE ${s}.recall_long_term (
      user_id text COLLATE "C" NOT NULL,
      version bigint NOT NULL,
      record json NOT NULL,
      PRIMARY KEY (user_id, version)
    );
    CREATE TABLE ${s}.recall_facts (
      user_id text COLLATE "C" NOT NULL,
      seq bigint NOT NULL,
      entry json NOT NULL,
      current boolean NOT NULL,
      key text COLLATE "C",
      PRIMARY KEY (user_id, seq)
    );
    CREATE UNIQUE INDEX recall_facts_current_key ON ${s}.recall_facts (user_id, key) WHERE current AND key IS NOT NULL;
    CREATE TABLE ${s}.recall_turn_keys (
      user_id text COLLATE "C" NOT NULL,
      session_id text COLLATE "C" NOT NULL,
      key text COLLATE "C" NOT NULL,
      value json NOT NULL,
      PRIMARY KEY (user_id, session_id, key)
    );
    CREATE TABLE ${s}.recall_session_docs (
      user_id text COLLATE "C" NOT NULL,
      ord bigint NOT NULL,
      id bigint NOT NULL,
      session_id text COLLATE "C" NOT NULL,
      record json NOT NULL,
      PRIMARY KEY (user_id, ord, id)
    );
    CREATE TABLE ${s}.recall_docs (
      user_id text COLLATE "C" NOT NULL,
      doc bigint NOT NULL,
      length integer NOT NULL,
      PRIMARY KEY (user_id, doc)
    );
    CREATE TABLE ${s}.recall_postings (
      user_id text COLLATE "C" NOT NULL,
      term text COLLATE "C" NOT NULL,
      doc bigint NOT NULL,
      tf integer NOT NULL,
      length integer NOT NULL,
      PRIMARY KEY (user_id, term, doc)
    );
    CREATE TABLE ${s}.recall_vectors (
      user_id text COLLATE "C" NOT NULL,
      item text COLLATE "C" NOT NULL,
      id bigint NOT NULL,
      vector bytea NOT NULL,
      PRIMARY KEY (user_id, item, id)
    );
    CREATE TABLE ${s}.recall_jobs (
      kind text COLLATE "C" NOT NULL,
      user_id text COLLATE "C" NOT NULL,
      key text COLLATE "C" NOT NULL,
      payload json NOT NULL,
      queued_at timestamptz NOT NULL,
      attempts integer NOT NULL DEFAULT 0,
      last_error json,
      next_at timestamptz,
      token text,
      lease_until timestamptz,
      PRIMARY KEY (kind, user_id, key)
    );
    CREATE INDEX recall_jobs_user ON ${s}.recall_jobs (user_id);
    CREATE INDEX recall_jobs_due ON ${s}.recall_jobs (kind, (COALESCE(next_at, queued_at)));
    CREATE TABLE ${s}.recall_dead_jobs (
      kind text COLLATE "C" NOT NULL,
      user_id text COLLATE "C" NOT NULL,
      key text COLLATE "C" NOT NULL,
      payload json NOT NULL,
      queued_at timestamptz NOT NULL,
      attempts integer NOT NULL,
      last_error json NOT NULL,
      dead_at timestamptz NOT NULL,
      PRIMARY KEY (kind, user_id, key)
    );
    CREATE INDEX recall_dead_jobs_user ON ${s}.recall_dead_jobs (user_id);`,
  // 2: a session's first turn in flight is marked, so one a killed process cut short is listed later.
  (s) => `
    ALTER TABLE ${s}.recall_sessions ADD COLUMN first_turn boolean NOT NULL DEFAULT false;
    CREATE INDEX recall_sessions_first_turn ON ${s}.recall_sessions (user_id, session_id) WHERE first_turn;`,
  // 3: a title is the user's text, which may hold NUL (text columns cannot): json, as the rows are.
  (s) => `
    ALTER TABLE ${s}.recall_sessions ALTER COLUMN title TYPE json USING to_json(title);`,
  // 4: every user's items queue their embeddings (no per-user switch, as LMDB's older data needed).
  (s) => `
    ALTER TABLE ${s}.recall_users DROP COLUMN embed_live;`,
  // 5: a query term's postings read from the index alone (an index-only scan): the heap holds
  // them scattered, one page per posting, in the order documents were written.
  (s) => `
    ALTER TABLE ${s}.recall_postings DROP CONSTRAINT recall_postings_pkey, ADD PRIMARY KEY (user_id, term, doc) INCLUDE (tf, length);`,
];

/** Every table a user's rows live in (erasure deletes from each; `recall_users` last). */
export const USER_TABLES = [
  'recall_sessions',
  'recall_daily',
  'recall_daily_high',
  'recall_log',
  'recall_long_term',
  'recall_facts',
  'recall_turn_keys',
  'recall_session_docs',
  'recall_docs',
  'recall_postings',
  'recall_vectors',
  'recall_jobs',
  'recall_dead_jobs',
] as const;

/** Brings the schema to the latest version (idempotent; safe from many processes at once). */
export function migrateRecall(client: PoolClient, schema: string): Promise<void> {
  return runOrderedMigrations(client, schema, 'recall', MIGRATIONS);
}
