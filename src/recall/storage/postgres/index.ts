/**
 * src/recall/storage/postgres: the layered memory's storage port on PostgreSQL, for many Node
 * processes on one database (postgres-recall-store.ts says what it guarantees).
 */
export { createPostgresRecallStore, type PostgresRecallStoreOptions } from './postgres-recall-store.ts';
export { isPostgresStore } from './postgres-recall-store.ts';
export { migratePostgres } from './migrate-postgres.ts';
