import type { JobQueue, LeasedJob, NewJob } from '../recall/storage/job-queue.ts';
import type { SweepCursor, SweepReport } from './retention-sweep.ts';

/**
 * Who runs a round of the retention sweep, and where it resumes from (the sweeper process,
 * retention-sweeper.ts, asks on its timer and on `runtime.retention.sweep()`):
 *
 * - `localRounds`: this process, every time, the cursor in its memory. For LMDB, whose data
 *   directory one process owns: a restart starts the walks over (one more pass, nothing lost).
 * - `queuedRounds`: whichever process leases the one recurring `sweep` job of the job queue
 *   (job-queue.ts). For a database many processes share: every one's timer asks, one gets the
 *   lease (SKIP LOCKED on PostgreSQL), runs the round from the cursor in the job's payload and
 *   hands the next round its cursor, due `everyMs` later by the database's clock; the others
 *   find nothing due. A process killed mid-round leaves its lease to expire (`leaseMs`), and
 *   the round is run again from the same cursor (its clears are conditional: run twice, they
 *   do the work once).
 */
export interface SweepRounds {
  /** The timer's ask: a round if one is due and this process got it; undefined otherwise. */
  due(): Promise<SweepReport | undefined>;
  /** A round now (after a round another process is running, if any). */
  now(): Promise<SweepReport>;
}

/** One round from `from`: what it did and where the next resumes. */
export type SweepRound = (from: SweepCursor) => Promise<{ report: SweepReport; next: SweepCursor }>;

export function localRounds(round: SweepRound): SweepRounds {
  let cursor: SweepCursor = {};
  const run = async () => {
    const { report, next } = await round(cursor);
    cursor = next;
    return report;
  };
  return { due: run, now: run };
}

/** The sweep's job: of no user (no user id is empty), so no erasure removes it. */
const SWEEP_JOB: NewJob = { kind: 'sweep', userId: '', payload: {} };
/** How long `now()` waits between asks while another process runs a round. */
const NOW_POLL_MS = 50;

export function queuedRounds(queue: () => JobQueue, round: SweepRound, options: { everyMs: number; leaseMs: number }): SweepRounds {
  const run = async (job: LeasedJob<'sweep'>): Promise<SweepReport> => {
    const jobs = queue();
    let result: Awaited<ReturnType<SweepRound>>;
    try {
      result = await round(job.payload);
    } catch (error) {
      // Tried again next period, from the same cursor.
      await jobs.fail(job, { code: 'sweep_failed', message: 'a round of the retention sweep failed' }, options.everyMs).catch(() => undefined);
      throw error;
    }
    await jobs.reschedule(job, result.next, options.everyMs);
    return result.report;
  };
  const lease = async () => (await queue().lease('sweep', { limit: 1, leaseMs: options.leaseMs }))[0];
  return {
    async due() {
      // Queued by the first process to ask (due a period later, as a local timer's first
      // round), a no-op after that.
      await queue().schedule(SWEEP_JOB, options.everyMs);
      const job = await lease();
      return job === undefined ? undefined : run(job);
    },
    async now() {
      for (;;) {
        await queue().schedule(SWEEP_JOB, 0);
        const job = await lease();
        if (job !== undefined) return run(job);
        await new Promise((resolve) => setTimeout(resolve, NOW_POLL_MS));
      }
    },
  };
}
