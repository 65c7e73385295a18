import { createHash } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import type { ErrorRecord } from '../../../errors.ts';
import { jobKey, type DeadJob, type Job, type JobCounts, type JobKind, type JobQueue, type LeasedJob, type NewJob } from '../job-queue.ts';
import type { PgContext } from './pg-recall-context.ts';

/**
 * The job queue (job-queue.ts) in PostgreSQL: `recall_jobs` and `recall_dead_jobs`, shared by
 * every process on the database.
 *
 * - A job is queued inside the transaction of the write that calls for it (`enqueueTx`), with
 *   `INSERT ... ON CONFLICT DO UPDATE`: queuing it again replaces its payload, resets its
 *   attempts and drops its lease (the old lease's effects then store nothing), and takes it out
 *   of the dead letters.
 * - `lease` picks due jobs with `FOR UPDATE SKIP LOCKED` (two processes leasing at once take
 *   different jobs, neither waits) and stamps a fresh token and `lease_until = now() + leaseMs`
 *   in the same statement. TIME is the database's `now()`: due times, leases and retries never
 *   read a worker's clock. A lease past its expiry is due again (its worker died).
 * - `complete` and `fail` are conditional on the token (a lease no longer held changes nothing);
 *   a job's effects check the lease inside their own transaction (pg-recall-context.ts
 *   `leaseHeld`, which locks the job's row until that transaction ends).
 * - `subscribe` tells of jobs queued, after their commit: this process's at once, every
 *   process's through PostgreSQL's `NOTIFY` (sent inside the queuing transaction, so delivered
 *   only if it commits) on a channel of the schema, heard by one `LISTEN` connection that the
 *   queue opens at the first `subscribe` and reopens when it drops. Workers poll as well
 *   (`nextDue`), so a notification lost while that connection was down delays a job, never loses it.
 */
export interface PgJobQueue extends JobQueue {
  /** Inside a write transaction: queues `job`; listeners are told once it commits. */
  enqueueTx(client: PoolClient, job: NewJob, after: (fn: () => void) => void): Promise<void>;
  /** Inside a write transaction: removes a leased job whose effects commit in it. */
  completeTx(client: PoolClient, lease: { kind: JobKind; userId: string; key: string; token: string }): Promise<void>;
  /** Ends the `LISTEN` connection, if one was opened. */
  close(): Promise<void>;
}

/** How long a dropped `LISTEN` connection waits before it is opened again. */
const RELISTEN_MS = 1_000;

interface JobRow {
  kind: JobKind;
  user_id: string;
  key: string;
  payload: string;
  queued_at: Date;
  attempts: number;
  last_error: string | null;
  next_at: Date | null;
  token?: string | null;
  dead_at?: Date;
}

const COLUMNS = 'kind, user_id, key, payload::text AS payload, queued_at, attempts, last_error::text AS last_error, next_at';

function toJob<K extends JobKind>(row: JobRow): Job<K> {
  return {
    kind: row.kind as K,
    userId: row.user_id,
    key: row.key,
    payload: JSON.parse(row.payload) as Job<K>['payload'],
    queuedAt: row.queued_at.toISOString(),
    attempts: Number(row.attempts),
    ...(row.last_error === null ? {} : { lastError: JSON.parse(row.last_error) as ErrorRecord }),
    ...(row.next_at === null ? {} : { nextAt: row.next_at.toISOString() }),
  };
}

export function createPgJobQueue(ctx: PgContext): PgJobQueue {
  const { s } = ctx;
  const listeners = new Map<JobKind, Set<() => void>>();
  const notify = (kind: JobKind) => {
    for (const listener of [...(listeners.get(kind) ?? [])]) listener();
  };
  // One channel per schema (a channel name is at most 63 bytes: the schema's hash).
  const channel = `mnemo_recall_jobs_${createHash('sha256').update(ctx.schema).digest('hex').slice(0, 16)}`;
  let listening: { pool: Pool; client?: PoolClient; timer?: NodeJS.Timeout } | undefined;
  let closed = false;
  function listen(): void {
    if (listening !== undefined || closed) return;
    const state: { pool: Pool; client?: PoolClient; timer?: NodeJS.Timeout } = { pool: ctx.log.newPool(1) };
    state.pool.on('error', () => {});
    listening = state;
    const open = async (): Promise<void> => {
      state.timer = undefined;
      if (closed) return;
      try {
        const client = await state.pool.connect();
        const dropped = () => {
          client.off('error', dropped);
          client.release(true);
          if (state.client === client) state.client = undefined;
          if (!closed) state.timer = setTimeout(() => void open(), RELISTEN_MS).unref();
        };
        client.on('error', dropped);
        client.on('notification', (message) => {
          if (message.channel === channel && message.payload !== undefined) notify(message.payload as JobKind);
        });
        await client.query(`LISTEN ${channel}`);
        if (closed) {
          client.off('error', dropped);
          client.release(true);
          return;
        }
        state.client = client;
      } catch {
        if (!closed) state.timer = setTimeout(() => void open(), RELISTEN_MS).unref();
      }
    };
    void open();
  }
  async function enqueueTx(client: PoolClient, job: NewJob, after: (fn: () => void) => void): Promise<void> {
    const key = jobKey(job);
    // One statement: queued (or replaced), out of the dead letters, and told: NOTIFY is
    // delivered at commit, to every process listening (this one's listener hears it too: a
    // second kick is harmless).
    await client.query(
      `WITH queued AS (
         INSERT INTO ${s}.recall_jobs AS j (kind, user_id, key, payload, queued_at) VALUES ($1, $2, $3, $4::json, now())
         ON CONFLICT (kind, user_id, key) DO UPDATE SET payload = EXCLUDED.payload, queued_at = now(), attempts = 0, last_error = NULL,
           next_at = NULL, token = NULL, lease_until = NULL
         RETURNING 1
       ), revived AS (
         DELETE FROM ${s}.recall_dead_jobs WHERE kind = $1 AND user_id = $2 AND key = $3
       )
       SELECT pg_notify($5, $1) FROM queued`,
      [job.kind, job.userId, key, JSON.stringify(job.payload), channel],
    );
    after(() => notify(job.kind));
  }
  return {
    enqueueTx,
    async completeTx(client, lease) {
      await client.query(`DELETE FROM ${s}.recall_jobs WHERE kind = $1 AND user_id = $2 AND key = $3 AND token = $4`, [lease.kind, lease.userId, lease.key, lease.token]);
    },
    async enqueue(jobs) {
      if (jobs.length === 0) return;
      await ctx.tx(async (client, after) => {
        for (const job of jobs) await enqueueTx(client, job, after);
      });
    },
    async lease<K extends JobKind>(kind: K, options: { limit: number; leaseMs: number }): Promise<LeasedJob<K>[]> {
      if (options.limit <= 0) return [];
      const rows = await ctx.read<JobRow & { token: string }>(
        `WITH due AS (
           SELECT kind, user_id, key FROM ${s}.recall_jobs
           WHERE kind = $1 AND (next_at IS NULL OR next_at <= now()) AND (lease_until IS NULL OR lease_until <= now())
           ORDER BY COALESCE(next_at, queued_at), user_id, key LIMIT $2 FOR UPDATE SKIP LOCKED
         )
         UPDATE ${s}.recall_jobs j SET token = gen_random_uuid()::text, lease_until = now() + $3 * interval '1 millisecond'
         FROM due WHERE j.kind = due.kind AND j.user_id = due.user_id AND j.key = due.key
         RETURNING j.kind, j.user_id, j.key, j.payload::text AS payload, j.queued_at, j.attempts, j.last_error::text AS last_error, j.next_at, j.token`,
        [kind, options.limit, Math.max(0, options.leaseMs)],
      );
      return rows
        .sort((a, b) => (a.next_at ?? a.queued_at).getTime() - (b.next_at ?? b.queued_at).getTime() || (a.user_id < b.user_id ? -1 : a.user_id > b.user_id ? 1 : a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
        .map((row) => ({ ...toJob<K>(row), token: row.token }));
    },
    async complete(job) {
      await ctx.tx((client) => this.completeTx(client, job));
    },
    async fail(job, error, retryInMs) {
      const where = `kind = $1 AND user_id = $2 AND key = $3 AND token = $4`;
      const values = [job.kind, job.userId, job.key, job.token, JSON.stringify(error)];
      if (retryInMs !== undefined) {
        await ctx.read(
          `UPDATE ${s}.recall_jobs SET attempts = attempts + 1, last_error = $5::json, next_at = now() + $6 * interval '1 millisecond', token = NULL, lease_until = NULL WHERE ${where}`,
          [...values, Math.max(0, retryInMs)],
        );
        return;
      }
      await ctx.read(
        `WITH gone AS (DELETE FROM ${s}.recall_jobs WHERE ${where} RETURNING kind, user_id, key, payload, queued_at, attempts)
         INSERT INTO ${s}.recall_dead_jobs (kind, user_id, key, payload, queued_at, attempts, last_error, dead_at)
         SELECT kind, user_id, key, payload, queued_at, attempts + 1, $5::json, now() FROM gone
         ON CONFLICT (kind, user_id, key) DO UPDATE SET payload = EXCLUDED.payload, queued_at = EXCLUDED.queued_at, attempts = EXCLUDED.attempts,
           last_error = EXCLUDED.last_error, dead_at = EXCLUDED.dead_at`,
        values,
      );
    },
    async get<K extends JobKind>(kind: K, userId: string, key: string): Promise<Job<K> | undefined> {
      const rows = await ctx.read<JobRow>(`SELECT ${COLUMNS} FROM ${s}.recall_jobs WHERE kind = $1 AND user_id = $2 AND key = $3`, [kind, userId, key]);
      return rows[0] === undefined ? undefined : toJob<K>(rows[0]);
    },
    async nextDue(kind) {
      const rows = await ctx.read<{ ms: number | null }>(
        // (GREATEST skips NULLs: the CASE keeps "none queued" apart from "due now".)
        `SELECT CASE WHEN count(*) = 0 THEN NULL ELSE GREATEST(0, ceil(extract(epoch FROM
           min(GREATEST(COALESCE(next_at, queued_at), COALESCE(lease_until, queued_at))) - now()) * 1000)) END::float8 AS ms
         FROM ${s}.recall_jobs WHERE kind = $1`,
        [kind],
      );
      const ms = rows[0]?.ms;
      return ms === null || ms === undefined ? undefined : Number(ms);
    },
    async counts(kind, userId): Promise<JobCounts> {
      const rows = await ctx.read<{ pending: string; retrying: string; dead: string }>(
        `SELECT (SELECT count(*) FROM ${s}.recall_jobs WHERE kind = $1 AND ($2::text IS NULL OR user_id = $2)) AS pending,
                (SELECT count(*) FROM ${s}.recall_jobs WHERE kind = $1 AND ($2::text IS NULL OR user_id = $2) AND attempts > 0) AS retrying,
                (SELECT count(*) FROM ${s}.recall_dead_jobs WHERE kind = $1 AND ($2::text IS NULL OR user_id = $2)) AS dead`,
        [kind, userId ?? null],
      );
      const r = rows[0]!;
      return { pending: Number(r.pending), retrying: Number(r.retrying), dead: Number(r.dead) };
    },
    async dead<K extends JobKind>(kind: K, options: { limit: number; userId?: string }): Promise<DeadJob<K>[]> {
      const rows = await ctx.read<JobRow & { dead_at: Date }>(
        `SELECT ${COLUMNS.replace('next_at', 'NULL::timestamptz AS next_at')}, dead_at FROM ${s}.recall_dead_jobs
         WHERE kind = $1 AND ($2::text IS NULL OR user_id = $2) ORDER BY user_id, key LIMIT $3`,
        [kind, options.userId ?? null, Math.max(0, options.limit)],
      );
      return rows.map((row) => ({ ...toJob<K>(row), lastError: JSON.parse(row.last_error!) as ErrorRecord, deadAt: row.dead_at.toISOString() }));
    },
    subscribe(kind, listener) {
      listen();
      let set = listeners.get(kind);
      if (set === undefined) listeners.set(kind, (set = new Set()));
      const mine = () => listener();
      set.add(mine);
      return () => void set.delete(mine);
    },
    async requeueDead(kind, userId) {
      const rows = await ctx.read<{ n: string }>(
        `WITH back AS (DELETE FROM ${s}.recall_dead_jobs WHERE kind = $1 AND ($2::text IS NULL OR user_id = $2) RETURNING kind, user_id, key, payload),
              put AS (INSERT INTO ${s}.recall_jobs AS j (kind, user_id, key, payload, queued_at) SELECT kind, user_id, key, payload, now() FROM back
                      ON CONFLICT (kind, user_id, key) DO NOTHING)
         SELECT count(*) AS n FROM back`,
        [kind, userId ?? null],
      );
      const n = Number(rows[0]?.n ?? 0);
      if (n > 0) {
        await ctx.read('SELECT pg_notify($1, $2)', [channel, kind]);
        notify(kind);
      }
      return n;
    },
    async schedule(job, inMs) {
      // A queued one keeps its payload (a walk's cursor) and lease; only its due time may move sooner.
      await ctx.read(
        `WITH queued AS (
           INSERT INTO ${s}.recall_jobs AS j (kind, user_id, key, payload, queued_at, next_at) VALUES ($1, $2, $3, $4::json, now(), now() + $5 * interval '1 millisecond')
           ON CONFLICT (kind, user_id, key) DO UPDATE SET next_at = LEAST(COALESCE(j.next_at, j.queued_at), EXCLUDED.next_at) RETURNING 1
         )
         SELECT pg_notify($6, $1) FROM queued`,
        [job.kind, job.userId, jobKey(job), JSON.stringify(job.payload), Math.max(0, inMs), channel],
      );
    },
    async reschedule(job, payload, inMs) {
      await ctx.read(
        `UPDATE ${s}.recall_jobs SET payload = $5::json, next_at = now() + $6 * interval '1 millisecond', attempts = 0, last_error = NULL, token = NULL, lease_until = NULL
         WHERE kind = $1 AND user_id = $2 AND key = $3 AND token = $4`,
        [job.kind, job.userId, job.key, job.token, JSON.stringify(payload), Math.max(0, inMs)],
      );
    },
    async close() {
      closed = true;
      const state = listening;
      if (state === undefined) return;
      if (state.timer !== undefined) clearTimeout(state.timer);
      state.client?.release(true);
      state.client = undefined;
      await state.pool.end();
    },
    async purgeDead(kind, before) {
      const rows = await ctx.read<{ n: string }>(
        `WITH gone AS (DELETE FROM ${s}.recall_dead_jobs WHERE kind = $1 AND dead_at < $2::timestamptz RETURNING 1) SELECT count(*) AS n FROM gone`,
        [kind, before],
      );
      return Number(rows[0]?.n ?? 0);
    },
  };
}
