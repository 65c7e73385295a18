import type { PoolClient } from 'pg';
import { onMigratedSchema, runOrderedMigrations } from '../../../memory/postgres/ordered-migrations.ts';

/**
 * MnemoSaver's and MnemoStore's tables in PostgreSQL, beside the message store's and the
 * layered memory's (same schema, names prefixed `langgraph_`), as ORDERED MIGRATIONS:
 * `MIGRATIONS[i]` takes the schema from version i to i + 1, `langgraph_schema_version` holds
 * the version reached. Applied at first use under a transaction-scoped advisory lock, so many
 * processes starting at once apply each step once; a released step is never edited, only
 * followed by new ones.
 *
 * | table                   | key                                                   | what |
 * |-------------------------|-------------------------------------------------------|------|
 * | langgraph_heads         | thread_id, checkpoint_ns                              | the namespace's head (greatest id); its row lock orders the namespace's puts |
 * | langgraph_checkpoints   | thread_id, checkpoint_ns, checkpoint_id               | parent, serializer type, checkpoint (no channel values), metadata |
 * | langgraph_channels      | thread_id, checkpoint_ns, channel, version            | a channel value once per version: whole (`bytes`), a delta (`base`, `keep`, `bytes` the tail, chain position) or empty (`type` null) |
 * | langgraph_writes        | thread_id, checkpoint_ns, checkpoint_id, task_id, idx | pending writes |
 * | langgraph_items         | path, key                                             | the store's items: value (json), created/updated (the database's clock) |
 * | langgraph_item_vectors  | path, key, field                                      | their embeddings (Float32 bytes) |
 *
 * The rows are LMDB's (storage/lmdb/), so both adapters store the same things. Versions are
 * JSON text (`"00..1.ab"` or `3`: a string and a number never collide). Values are `json`,
 * not `jsonb`: json keeps the text as put (key order, duplicate keys, NUL as `\u0000`), which
 * jsonb would not; filters run in the adapter (store-filter.ts), the same code as on LMDB.
 * Ids are `text COLLATE "C"`: byte order, the order LMDB keys and JS strings compare in.
 */
export const MIGRATIONS: readonly ((s: string) => string)[] = [
  (s) => `
    CREATE TABLE ${s}.langgraph_heads (
      thread_id text COLLATE "C" NOT NULL,
      checkpoint_ns text COLLATE "C" NOT NULL,
      head_id text COLLATE "C",
      PRIMARY KEY (thread_id, checkpoint_ns)
    );
    CREATE TABLE ${s}.langgraph_checkpoints (
      thread_id text COLLATE "C" NOT NULL,
      checkpoint_ns text COLLATE "C" NOT NULL,
      checkpoint_id text COLLATE "C" NOT NULL,
      parent_id text COLLATE "C",
      type text NOT NULL,
      checkpoint bytea NOT NULL,
      metadata bytea NOT NULL,
      PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
    );
    CREATE TABLE ${s}.langgraph_channels (
      thread_id text COLLATE "C" NOT NULL,
      checkpoint_ns text COLLATE "C" NOT NULL,
      channel text COLLATE "C" NOT NULL,
      version text COLLATE "C" NOT NULL,
      type text,
      bytes bytea,
      base text COLLATE "C",
      keep integer,
      depth integer,
      chain_bytes bigint,
      root_length bigint,
      PRIMARY KEY (thread_id, checkpoint_ns, channel, version)
    );
    CREATE TABLE ${s}.langgraph_writes (
      thread_id text COLLATE "C" NOT NULL,
      checkpoint_ns text COLLATE "C" NOT NULL,
      checkpoint_id text COLLATE "C" NOT NULL,
      task_id text COLLATE "C" NOT NULL,
      idx integer NOT NULL,
      channel text NOT NULL,
      type text NOT NULL,
      value bytea NOT NULL,
      task_path text NOT NULL,
      PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
    );
    CREATE TABLE ${s}.langgraph_items (
      path text COLLATE "C" NOT NULL,
      key text COLLATE "C" NOT NULL,
      value json NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (path, key)
    );
    CREATE TABLE ${s}.langgraph_item_vectors (
      path text COLLATE "C" NOT NULL,
      key text COLLATE "C" NOT NULL,
      field text COLLATE "C" NOT NULL,
      vector bytea NOT NULL,
      PRIMARY KEY (path, key, field)
    );`,
];

/** Brings the schema to the latest version (idempotent; safe from many processes at once). */
export function migrateLangGraph(client: PoolClient, schema: string): Promise<void> {
  return runOrderedMigrations(client, schema, 'langgraph', MIGRATIONS);
}

/**
 * What `mnemo migrate` runs for LangGraph (after the message store's and the layered memory's
 * tables): the schema brought to `MIGRATIONS.length`. Failures are `StorageError`s.
 */
export function migrateLangGraphPostgres(options: { connectionString: string; schema?: string }): Promise<{ langgraphVersion: number }> {
  return onMigratedSchema(options, async (client, schema) => {
    await migrateLangGraph(client, schema);
    return { langgraphVersion: MIGRATIONS.length };
  });
}
