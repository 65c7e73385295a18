import type { Pool, PoolClient } from 'pg';
import { toStorageError } from '../../../memory/postgres/postgres-errors.ts';

/**
 * `lockSession` in PostgreSQL: a session-level advisory lock, `pg_advisory_lock` on a 64-bit
 * hash of `(schema, user, session)`, held on a DEDICATED pooled connection until released, so
 * the turns of one session are serialized in every process on the database. The connections
 * come from a pool of their own (`lockConnections`, default 10), never the pool the turn's writes
 * use: a turn holding its lock must always find a connection for its writes, however many turns
 * wait for locks.
 *
 * Two sessions whose keys hash alike share a lock (rare: 64 bits), which only serializes them.
 * A connection that dies while held releases the lock on the server; `release` then only drops
 * the connection. A session's turns in THIS process queue in memory first (one connection per
 * session held at a time, not one per waiting turn). `tryLock` (the open-time repair) takes a
 * lock only when no process holds it. `close` drops the connections still holding locks, so it
 * never waits for a holder (whose writes fail on the closed store anyway).
 */
export interface SessionLocks {
  lock(userId: string, sessionId: string): Promise<() => Promise<void>>;
  /** The session's lock if no one holds it now (`pg_try_advisory_lock`), else `undefined`. */
  tryLock(userId: string, sessionId: string): Promise<(() => Promise<void>) | undefined>;
  close(): Promise<void>;
}

export function createSessionLocks(pool: Pool, schema: string): SessionLocks {
  const queues = new Map<string, Promise<void>>();
  /** Connections holding a lock now: `close` drops them (the server then frees their locks). */
  const holding = new Set<PoolClient>();
  let closed = false;
  pool.on('error', () => {});

  const keyOf = (userId: string, sessionId: string) => JSON.stringify(['mnemo.recall.session', schema, userId, sessionId]);

  async function acquire(key: string, wait = true): Promise<(() => Promise<void>) | undefined> {
    let client: PoolClient;
    try {
      client = await pool.connect();
    } catch (error) {
      throw toStorageError(error, { operation: 'read', sent: false });
    }
    const ignore = () => {};
    client.on('error', ignore);
    try {
      if (!wait) {
        const { rows } = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS ok', [key]);
        if (rows[0]?.ok !== true) {
          client.off('error', ignore);
          client.release();
          return undefined;
        }
      } else await client.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [key]);
    } catch (error) {
      client.off('error', ignore);
      client.release(true);
      throw toStorageError(error, { operation: 'read', sent: false });
    }
    let released = false;
    holding.add(client);
    return async () => {
      if (released) return;
      released = true;
      if (!holding.delete(client)) return; // dropped by close
      try {
        await client.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [key]);
        client.off('error', ignore);
        client.release();
      } catch {
        // The connection is gone, and its lock with it.
        client.off('error', ignore);
        client.release(true);
      }
    };
  }

  return {
    async lock(userId, sessionId) {
      if (closed) throw toStorageError(new Error('the recall store is closed'), { operation: 'read', sent: false });
      const key = keyOf(userId, sessionId);
      const before = queues.get(key) ?? Promise.resolve();
      let done!: () => void;
      const mine = new Promise<void>((resolve) => (done = resolve));
      const tail = before.then(() => mine);
      queues.set(key, tail);
      await before;
      let release: () => Promise<void>;
      try {
        release = (await acquire(key))!;
      } catch (error) {
        done();
        if (queues.get(key) === tail) queues.delete(key);
        throw error;
      }
      let once = false;
      return async () => {
        if (once) return;
        once = true;
        await release();
        done();
        if (queues.get(key) === tail) queues.delete(key);
      };
    },
    async tryLock(userId, sessionId) {
      const key = keyOf(userId, sessionId);
      // Held in this process (queued turns): not free.
      if (closed || queues.has(key)) return undefined;
      return acquire(key, false);
    },
    async close() {
      if (closed) return;
      closed = true;
      // A holder still running finds its connection gone; its writes fail on the closed store anyway.
      for (const client of holding) client.release(true);
      holding.clear();
      await pool.end();
    },
  };
}
