import type { Pool } from 'pg';
import { InvalidInputError } from '../../errors.ts';
import { createPostgresStore, postgresStoreInternals } from '../../memory/postgres/postgres-store.ts';
import type { Runtime } from '../../runtime.ts';
import type { CheckpointStorage } from './checkpoint-storage.ts';
import type { ItemStorage } from './item-storage.ts';
import { LmdbCheckpointStorage } from './lmdb/lmdb-checkpoint-storage.ts';
import { LmdbItemStorage } from './lmdb/lmdb-item-storage.ts';
import { openSource, type LmdbSource } from './lmdb/lmdb-source.ts';
import { PgCheckpointStorage } from './postgres/pg-checkpoint-storage.ts';
import { PgItemStorage } from './postgres/pg-item-storage.ts';
import { pgLangGraph, type PgLangGraph } from './postgres/pg-langgraph-connection.ts';

/**
 * Where MnemoSaver and MnemoStore keep their data:
 * - `{ runtime }`: the runtime's storage. On LMDB its environment (checkpoints, messages and
 *   recall data share commits); on PostgreSQL (`storage: { postgres }`, or a `{ store }` made by
 *   `createPostgresStore`) its pool and schema. The saver's thread writers join the runtime's tree.
 * - `{ path }`, `{ root }`: an LMDB environment (`LmdbSource`).
 * - `{ postgres, schema? }`: PostgreSQL, standalone: a connection string (a pool of its own,
 *   ended by `close()`) or your own `pg.Pool` (left open), tables in `schema` (default
 *   `'mnemo'`, the runtime's), created on first use.
 */
export type LangGraphSource = LmdbSource | PostgresSource;

/** PostgreSQL for a standalone saver or store. */
export interface PostgresSource {
  /** `postgres://user:password@host:port/database`, or your own `pg.Pool`. */
  readonly postgres: string | Pool;
  /** The schema of the tables (created if missing). Default `'mnemo'`. */
  readonly schema?: string;
}

export function openCheckpointStorage(source: LangGraphSource): CheckpointStorage {
  const pg = postgresOf(source);
  return pg === undefined ? new LmdbCheckpointStorage(openSource(source as LmdbSource)) : new PgCheckpointStorage(pg);
}

export function openItemStorage(source: LangGraphSource): ItemStorage {
  const pg = postgresOf(source);
  return pg === undefined ? new LmdbItemStorage(openSource(source as LmdbSource)) : new PgItemStorage(pg);
}

/** The PostgreSQL connection a source names; undefined for LMDB (checked by `openSource`). */
function postgresOf(source: LangGraphSource): PgLangGraph | undefined {
  if (typeof source !== 'object' || source === null) return undefined;
  if ('runtime' in source) {
    const runtime: Runtime = source.runtime;
    const storage = runtime.storage;
    const internals = storage.kind === 'custom' ? postgresStoreInternals(storage.store) : undefined;
    if (storage.kind !== 'lmdb' && internals === undefined) {
      throw new InvalidInputError('invalid_option', `the runtime's storage is '${storage.kind}': LangGraph persistence needs its LMDB or PostgreSQL storage`);
    }
    return internals === undefined ? undefined : pgLangGraph(internals, { runtimeName: runtime.name, release: async () => {} });
  }
  if (!('postgres' in source)) return undefined;
  const { postgres, schema } = source;
  const isPool = typeof postgres === 'object' && postgres !== null && typeof (postgres as Pool).connect === 'function';
  if (!isPool && (typeof postgres !== 'string' || postgres === '')) {
    throw new InvalidInputError('invalid_option', 'postgres must be a connection string or a pg.Pool', { option: 'postgres' });
  }
  // A message store gives the pool, the typed errors and the close semantics; its own tables are never made.
  const store = createPostgresStore({ ...(isPool ? { pool: postgres as Pool } : { connectionString: postgres as string }), ...(schema === undefined ? {} : { schema }) });
  return pgLangGraph(postgresStoreInternals(store)!, { runtimeName: undefined, release: () => store.close() });
}
