/**
 * `mnemo/postgres`: the PostgreSQL stores, for many processes on one database. Importing it
 * loads `pg`. (`startRuntime({ storage: { postgres } })` loads it by itself when asked for.)
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
