import { onMigratedSchema } from '../../../memory/postgres/ordered-migrations.ts';
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
export function migratePostgres(options: { connectionString: string; schema?: string }): Promise<{ schema: string; recallVersion: number; vectors: VectorMode['kind'] }> {
  return onMigratedSchema(options, async (client, schema) => {
    await migrateRecall(client, schema);
    const vectors = await enablePgvector(client, schema);
    if (vectors.kind === 'pgvector') await buildHnswIndexes(client, schema, vectors.ext, DEFAULT_HNSW_RULE);
    return { schema, recallVersion: MIGRATIONS.length, vectors: vectors.kind };
  });
}
