/**
 * `mnemo/postgres`: the PostgreSQL stores, for many processes on one database: the message log
 * (`createPostgresStore`) and the layered memory (`createPostgresRecallStore`, in the same
 * schema). Importing it loads `pg`. (`startRuntime({ storage: { postgres } })` loads it by itself
 * when asked for, and runs `runtime.recall` on it.)
 *
 * @module mnemo/postgres
 */
export {
  createPostgresStore,
  StorageUnavailableError,
  DEFAULT_POSTGRES_SCHEMA,
  type PostgresStore,
  type PostgresStoreOptions,
  type PostgresConnectionOption,
  type PostgresOperation,
} from './memory/postgres/index.ts';
export { createPostgresRecallStore, type PostgresRecallStoreOptions } from './recall/storage/postgres/index.ts';
