import { createPostgresStore, postgresStoreInternals } from '../../../memory/postgres/postgres-store.ts';
import { toStorageError } from '../../../memory/postgres/postgres-errors.ts';
import { MIGRATIONS, migrateRecall } from './recall-schema.ts';

/**
 * Brings one schema to this version's tables: the message store's (postgres-schema.ts), then
 * the layered memory's ordered migrations (recall-schema.ts), each under its advisory lock, so
 * it is safe beside running servers and idempotent. What `mnemo migrate` runs. Failures are
 * `StorageError`s (`storage_unavailable` for an unreachable database); `InvalidInputError` for
 * a schema that is not an SQL identifier.
 */
export async function migratePostgres(options: { connectionString: string; schema?: string }): Promise<{ schema: string; recallVersion: number }> {
  const store = createPostgresStore({ connectionString: options.connectionString, ...(options.schema === undefined ? {} : { schema: options.schema }) });
  try {
    await store.migrate();
    const { pool, schema } = postgresStoreInternals(store)!;
    const client = await pool.connect().catch((error: unknown) => {
      throw toStorageError(error, { operation: 'migrate', sent: false });
    });
    try {
      await migrateRecall(client, schema);
    } catch (error) {
      throw toStorageError(error, { operation: 'migrate', sent: true });
    } finally {
      client.release();
    }
    return { schema, recallVersion: MIGRATIONS.length };
  } finally {
    await store.close();
  }
}
