/**
 * src/memory/postgres: the PostgreSQL store, for many Node processes sharing one database.
 */
export {
  createPostgresStore,
  type PostgresStore,
  type PostgresStoreOptions,
  type PostgresConnectionOption,
} from './postgres-store.ts';
export { StorageUnavailableError, type PostgresOperation } from './postgres-errors.ts';
export { DEFAULT_SCHEMA as DEFAULT_POSTGRES_SCHEMA } from './postgres-schema.ts';
