import { createPostgresStore, postgresStoreInternals } from '../../../memory/postgres/postgres-store.ts';
import { toStorageError } from '../../../memory/postgres/postgres-errors.ts';
import { MIGRATIONS, migrateRecall } from './recall-schema.ts';
import { buildHnswIndexes, DEFAULT_HNSW_RULE, enablePgvector, type VectorMode } from './pgvector.ts';

/**
 * Brings one schema to this version's tables: the message store's (postgres-schema.ts), then
 * the layered memory's ordered migrations (recall-schema.ts), each under its advisory lock, so
 * it is safe beside running servers and idempotent; then pgvector where it is installed (its
 * column, and the HNSW indexes the table has grown to need, built here rather than in the
 * background of the next start: pgvector.ts). What `mnemo migrate` runs. Failures are
 * `StorageError`s (`storage_unavailable` for an unreachable database); `InvalidInputError` for
 * a schema that is not an SQL identifier.
 */
export async function migratePostgres(options: { connectionString: string; schema?: string }): Promise<{ schema: string; recallVersion: number; vectors: VectorMode['kind'] }> {
  const store = createPostgresStore({ connectionString: options.connectionString, ...(options.schema === undefined ? {} : { schema: options.schema }) });
  try {
    await store.migrate();
    const { pool, schema } = postgresStoreInternals(store)!;
    const client = await pool.connect().catch((error: unknown) => {
      throw toStorageError(error, { operation: 'migrate', sent: false });
    });
    let vectors: VectorMode;
    try {
      await migrateRecall(client, schema);
      vectors = await enablePgvector(client, schema);
      if (vectors.kind === 'pgvector') await buildHnswIndexes(client, schema, vectors.ext, DEFAULT_HNSW_RULE);
    } catch (error) {
      throw toStorageError(error, { operation: 'migrate', sent: true });
    } finally {
      client.release();
    }
    return { schema, recallVersion: MIGRATIONS.length, vectors: vectors.kind };
  } finally {
    await store.close();
  }
}
