import { escapeIdentifier, type PoolClient } from 'pg';
import { toStorageError } from './postgres-errors.ts';
import { createPostgresStore, postgresStoreInternals } from './postgres-store.ts';

/**
 * Ordered migrations for one part's tables in one schema (the layered memory's `recall_*`,
 * LangGraph's `langgraph_*`): `migrations[i]` takes the schema from version i to i + 1, and
 * `<part>_schema_version` holds the version reached.
 *
 * Contract: idempotent, and safe when many processes start at once on an empty database. The
 * version is read first without a lock (the common case: already current, nothing taken); else
 * one transaction takes a transaction-scoped advisory lock on (part, schema), reads the version
 * again (another process may have migrated meanwhile), runs the missing steps and records the
 * new version, so the steps run exactly once and a failure leaves the schema as it was.
 */
export async function runOrderedMigrations(
  client: PoolClient,
  schema: string,
  part: string,
  migrations: readonly ((s: string) => string)[],
): Promise<void> {
  const s = escapeIdentifier(schema);
  const versionTable = `${s}.${part}_schema_version`;
  const current = async (): Promise<number> => {
    const exists = await client.query(`SELECT to_regclass($1) IS NOT NULL AS ok`, [versionTable]);
    if (exists.rows[0]?.ok !== true) return 0;
    const row = await client.query(`SELECT version FROM ${versionTable}`);
    return row.rows[0] === undefined ? 0 : Number(row.rows[0].version);
  };
  if ((await current()) >= migrations.length) return;
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`mnemo.${part}.migrate.${schema}`]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
    await client.query(`CREATE TABLE IF NOT EXISTS ${versionTable} (version integer NOT NULL)`);
    let version = await current();
    if (version === 0) await client.query(`INSERT INTO ${versionTable} (version) SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM ${versionTable})`);
    for (; version < migrations.length; version++) await client.query(migrations[version]!(s));
    await client.query(`UPDATE ${versionTable} SET version = $1`, [migrations.length]);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/**
 * What `mnemo migrate` does for each part: the message store's tables first (they make the
 * schema), then `work` on one connection of that schema. Failures are `StorageError`s
 * (`storage_unavailable` when the database cannot be reached); the pool is closed either way.
 */
export async function onMigratedSchema<T>(options: { connectionString: string; schema?: string }, work: (client: PoolClient, schema: string) => Promise<T>): Promise<T> {
  const store = createPostgresStore({ connectionString: options.connectionString, ...(options.schema === undefined ? {} : { schema: options.schema }) });
  try {
    await store.migrate();
    const { pool, schema } = postgresStoreInternals(store)!;
    const client = await pool.connect().catch((error: unknown) => {
      throw toStorageError(error, { operation: 'migrate', sent: false });
    });
    try {
      return await work(client, schema);
    } catch (error) {
      throw toStorageError(error, { operation: 'migrate', sent: true });
    } finally {
      client.release();
    }
  } finally {
    await store.close();
  }
}
