import { escapeIdentifier, type Pool, type PoolClient, type QueryResultRow } from 'pg';
import { MnemoError } from '../../../errors.ts';
import { toStorageError } from '../../../memory/postgres/postgres-errors.ts';
import type { PostgresStoreInternals } from '../../../memory/postgres/postgres-store.ts';
import type { WriteGuard } from '../recall-store.ts';
import { StaleWriteError } from '../stale-write-error.ts';
import { migrateRecall } from './recall-schema.ts';
import { prepared, preparing } from './prepared-statements.ts';
import { DEFAULT_HNSW_RULE, enablePgvector, type HnswRule, type VectorMode } from './pgvector.ts';

/**
 * What every part of the PostgreSQL recall adapter shares: the message store's pool and
 * internals (its transcript writes run inside our transactions), the escaped schema, and the
 * two primitives every write is made of:
 *
 * - `tx(body)`: ONE transaction on one pooled client: BEGIN, body, COMMIT; any failure rolls
 *   back (nothing half-written) and rejects with the message store's typed `StorageError`s
 *   (postgres-errors.ts), except the adapter's own refusals (`StaleWriteError`, `ForkError`,
 *   `InvalidInputError`), which pass as they are.
 * - `lockUser(client, userId)`: the user's row of `recall_users`, made if missing (a fresh
 *   random incarnation) and locked `FOR UPDATE` until commit. Every write of a user takes it
 *   first, so a user's writes are serialized across processes by the database (daily ids,
 *   counters, index totals read and written under it), and an erasure (which takes it too, then
 *   deletes it) is ordered with every write: a write after it finds a new incarnation.
 *   Lock order is always user row, then the message store's conversation rows, so the two
 *   stores' writers never deadlock.
 * - `checkGuard`: the guard of a multi-step operation, read INSIDE the write's transaction,
 *   after the user's row lock: the incarnation is the one the operation began under, the job's
 *   lease (`recall_jobs` row with its token, locked) is still held.
 */
export interface PgContext {
  /** The message store's pool (transactions, reads). */
  pool: Pool;
  /** The message store's in-transaction writes (postgres-store.ts). */
  log: PostgresStoreInternals;
  /** The schema, escaped, for statements: `${s}.recall_daily`. */
  s: string;
  /** The schema as given (advisory lock keys). */
  schema: string;
  embeddings: boolean;
  /** How vectors are stored and searched (pgvector.ts); known once `ready()` resolved. */
  vectors(): VectorMode;
  /** When pgvector's HNSW index is built and used (pgvector.ts). */
  hnsw: HnswRule;
  /** `after(fn)`: `fn` runs once the transaction committed (never when it rolled back). */
  tx<T>(body: (client: PoolClient, after: (fn: () => void) => void) => Promise<T>): Promise<T>;
  read<R extends QueryResultRow>(text: string, values?: unknown[]): Promise<R[]>;
  /** Resolved once the recall tables exist. */
  ready(): Promise<void>;
}

/** The user's row as a write holds it (locked until commit). */
export interface UserRow {
  incarnation: string;
  session_order: string | number;
  log_seq: string | number;
  fact_seq: string | number;
  facts_gen: string;
  fact_doc: unknown;
  index_docs: string | number;
  index_length: string | number;
}

export function createPgContext(log: PostgresStoreInternals, embeddings: boolean, hnsw: HnswRule = DEFAULT_HNSW_RULE): PgContext {
  const pool = log.pool;
  let mode: VectorMode | undefined;
  const s = escapeIdentifier(log.schema);
  let migrated: Promise<void> | undefined;
  const rethrow = (error: unknown, sent: boolean): never => {
    // Our own refusals, and bugs, as they are; what `pg` threw, typed.
    if (error instanceof MnemoError || error instanceof TypeError || error instanceof RangeError) throw error;
    throw toStorageError(error, { operation: sent ? 'append' : 'read', sent });
  };
  const ready = (): Promise<void> => {
    migrated ??= (async () => {
      await log.migrate();
      const client = await pool.connect();
      const ignore = () => {};
      client.on('error', ignore);
      try {
        await migrateRecall(client, log.schema);
        mode = await enablePgvector(client, log.schema);
        client.off('error', ignore);
        client.release();
      } catch (error) {
        client.off('error', ignore);
        client.release(true);
        throw error;
      }
    })().catch((error: unknown) => {
      migrated = undefined;
      return rethrow(error, false);
    });
    return migrated;
  };
  return {
    pool,
    log,
    s,
    schema: log.schema,
    embeddings,
    hnsw,
    vectors: () => {
      if (mode === undefined) throw new Error('the recall tables are not ready yet');
      return mode;
    },
    ready,
    async tx<T>(body: (client: PoolClient, after: (fn: () => void) => void) => Promise<T>): Promise<T> {
      log.checkOpen();
      await ready();
      return log.track(
        (async () => {
          let client: PoolClient;
          try {
            client = await pool.connect();
          } catch (error) {
            return rethrow(error, false);
          }
          // A connection dying between two statements is reported as an event, not to a query:
          // without a listener Node would crash the process.
          const ignore = () => {};
          client.on('error', ignore);
          let began = false;
          const committed: Array<() => void> = [];
          try {
            await client.query('BEGIN');
            began = true;
            const result = await body(preparing(client), (fn) => void committed.push(fn));
            await client.query('COMMIT');
            client.off('error', ignore);
            client.release();
            for (const fn of committed) fn();
            return result;
          } catch (error) {
            // Back to the pool only when the connection is known clean (rolled back), else dropped.
            const clean = began ? await client.query('ROLLBACK').then(() => true, () => false) : false;
            client.off('error', ignore);
            client.release(!clean);
            return rethrow(error, began);
          }
        })(),
      );
    },
    async read<R extends QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> {
      log.checkOpen();
      await ready();
      try {
        return (await log.track(values.length > 0 ? pool.query<R>(prepared(text, values)) : pool.query<R>(text))).rows;
      } catch (error) {
        return rethrow(error, false);
      }
    },
  };
}

/** Inside a transaction: the user's row, made if missing, locked until commit (see above). */
export async function lockUser(ctx: PgContext, client: PoolClient, userId: string): Promise<UserRow> {
  const { rows } = await client.query<UserRow>(
    `INSERT INTO ${ctx.s}.recall_users AS u (user_id, incarnation) VALUES ($1, gen_random_uuid()::text)
     ON CONFLICT (user_id) DO UPDATE SET user_id = u.user_id RETURNING *`,
    [userId],
  );
  return rows[0]!;
}

/** Inside a transaction, after `lockUser`: throws `StaleWriteError` (the transaction then rolls back) when `guard` no longer holds. */
export async function checkGuard(ctx: PgContext, client: PoolClient, userId: string, user: UserRow, guard: WriteGuard | undefined): Promise<void> {
  if (guard?.incarnation !== undefined && user.incarnation !== guard.incarnation) throw new StaleWriteError('erased', userId);
  if (guard?.job !== undefined && !(await leaseHeld(ctx, client, guard.job))) throw new StaleWriteError('lease_lost', userId);
}

/** Inside a transaction: whether the job is still queued under this lease's token (its row locked until commit). */
export async function leaseHeld(ctx: PgContext, client: PoolClient, job: { kind: string; userId: string; key: string; token: string }): Promise<boolean> {
  const { rowCount } = await client.query(`SELECT 1 FROM ${ctx.s}.recall_jobs WHERE kind = $1 AND user_id = $2 AND key = $3 AND token = $4 FOR UPDATE`, [
    job.kind,
    job.userId,
    job.key,
    job.token,
  ]);
  return (rowCount ?? 0) > 0;
}

/** A bigint column as a number (ids stay below 2^53). */
export const num = (v: string | number | null | undefined): number => (v === null || v === undefined ? 0 : Number(v));
