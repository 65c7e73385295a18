import { escapeIdentifier, type Pool, type PoolClient, type QueryResultRow } from 'pg';
import { MnemoError } from '../../../errors.ts';
import { toStorageError } from '../../../memory/postgres/postgres-errors.ts';
import type { PostgresStoreInternals } from '../../../memory/postgres/postgres-store.ts';
import { prepared } from '../../../recall/storage/postgres/prepared-statements.ts';
import { migrateLangGraph } from './langgraph-schema.ts';

/**
 * What the saver's and the store's PostgreSQL adapters share: a message store's pool and
 * lifecycle (the runtime's, or one made for a standalone saver or store), the escaped schema,
 * the tables migrated once (the message store's, then langgraph-schema.ts: the schema is one
 * Mnemo schema, whoever uses it first), and two primitives:
 *
 * - `tx(body)`: ONE transaction on one pooled client; `rollback()` asks for a rollback
 *   instead of the commit (a refused put). Any failure rolls back and rejects with the message
 *   store's typed errors (postgres-errors.ts: `storage_unavailable`, `storage_full`,
 *   `storage_failed`). A deadlock or serialization failure (which rolled back everything) is
 *   retried, a few times.
 * - `query(text, values)`: one statement outside a transaction (reads).
 *
 * Statements with parameters go as named prepared statements (parsed and planned once per
 * connection). Work is tracked by the message store, whose `close()` waits for it; once it is
 * closing, calls reject with `store_closed`.
 */
export interface PgLangGraph {
  /** The schema, escaped, for statements: `${s}.langgraph_items`. */
  readonly s: string;
  /** The runtime whose tree adopts the saver's thread writers; undefined standalone. */
  readonly runtimeName: string | undefined;
  checkOpen(): void;
  tx<T>(body: (client: PoolClient, rollback: () => void) => Promise<T>): Promise<T>;
  query<R extends QueryResultRow>(text: string, values: unknown[]): Promise<R[]>;
  /** Ends what this connection owns (a standalone store's pool); the runtime's is left open. */
  release(): Promise<void>;
}

const RETRIED_STATES = new Set(['40P01', '40001']);
const ATTEMPTS = 3;
const ignore = () => {};

export function pgLangGraph(log: PostgresStoreInternals, options: { runtimeName: string | undefined; release: () => Promise<void> }): PgLangGraph {
  const pool: Pool = log.pool;
  const s = escapeIdentifier(log.schema);
  let migrated: Promise<void> | undefined;
  const typed = (error: unknown, sent: boolean): never => {
    if (error instanceof MnemoError || error instanceof TypeError || error instanceof RangeError) throw error;
    throw toStorageError(error, { operation: sent ? 'append' : 'read', sent });
  };
  const ready = (): Promise<void> => {
    migrated ??= (async () => {
      // The message store's tables first: that migration makes the schema, under its own lock
      // (a CREATE SCHEMA of ours beside it could collide in the catalog).
      await log.migrate();
      const client = await pool.connect();
      client.on('error', ignore);
      try {
        await migrateLangGraph(client, log.schema);
        client.off('error', ignore);
        client.release();
      } catch (error) {
        client.off('error', ignore);
        client.release(true);
        throw error;
      }
    })().catch((error: unknown) => {
      migrated = undefined; // tried again by the next call
      if (error instanceof MnemoError) throw error;
      throw toStorageError(error, { operation: 'migrate', sent: false });
    });
    return migrated;
  };

  async function once<T>(body: (client: PoolClient, rollback: () => void) => Promise<T>): Promise<{ value: T } | { retry: unknown }> {
    let client: PoolClient;
    try {
      client = await pool.connect();
    } catch (error) {
      return typed(error, false);
    }
    // A connection dying between two statements is reported as an event, not to a query.
    client.on('error', ignore);
    let began = false;
    let abort = false;
    try {
      await client.query('BEGIN');
      began = true;
      const value = await body(client, () => (abort = true));
      await client.query(abort ? 'ROLLBACK' : 'COMMIT');
      client.off('error', ignore);
      client.release();
      return { value };
    } catch (error) {
      // Back to the pool only when the connection is known clean (rolled back), else dropped.
      const clean = began ? await client.query('ROLLBACK').then(() => true, () => false) : false;
      client.off('error', ignore);
      client.release(!clean);
      const state = (error as { code?: unknown }).code;
      if (clean && typeof state === 'string' && RETRIED_STATES.has(state)) return { retry: error };
      return typed(error, began);
    }
  }

  return {
    s,
    runtimeName: options.runtimeName,
    checkOpen: () => log.checkOpen(),
    async tx<T>(body: (client: PoolClient, rollback: () => void) => Promise<T>): Promise<T> {
      log.checkOpen();
      await ready();
      return log.track(
        (async () => {
          let last: unknown;
          for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
            const outcome = await once(body);
            if ('value' in outcome) return outcome.value;
            last = outcome.retry;
          }
          return typed(last, true);
        })(),
      );
    },
    async query<R extends QueryResultRow>(text: string, values: unknown[]): Promise<R[]> {
      log.checkOpen();
      await ready();
      try {
        return (await log.track(pool.query<R>(prepared(text, values)))).rows;
      } catch (error) {
        return typed(error, false);
      }
    },
    release: options.release,
  };
}

/** `client.query` of a named prepared statement. */
export async function run<R extends QueryResultRow>(client: PoolClient, text: string, values: unknown[]): Promise<R[]> {
  return (await client.query<R>(prepared(text, values))).rows;
}
