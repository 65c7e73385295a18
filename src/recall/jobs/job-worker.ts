import type { ErrorRecord } from '../../errors.ts';
import { InvalidInputError } from '../../errors.ts';
import type { JobKind, JobQueue, LeasedJob } from '../storage/job-queue.ts';
import { StaleWriteError } from '../storage/stale-write-error.ts';

/**
 * The one drain of the job queue (storage/job-queue.ts), for every kind of job: fact
 * extraction, embeddings, session summaries.
 *
 * - It leases up to `batch` due jobs of its kind, hands them to `run`, and settles each by its
 *   outcome: `'done'` completes it; an `ErrorRecord` is a failed attempt, retried after
 *   `backoffMs · 2^(attempts−1)` (at most `maxBackoffMs`) until `maxAttempts`, then moved to the
 *   dead letters; `'gone'` (its lease was lost: its user erased, or it was queued again) leaves
 *   it to whoever holds it now. A `run` that throws fails every job it was given
 *   (`StaleWriteError`: they are gone).
 * - It wakes on `kick()`, when the queue tells of new jobs, at the next due time (a timer,
 *   unref'd), and every `pollMs` (jobs queued by other processes sharing the store).
 * - `close()` stops leasing and aborts the running `run`'s signal: its jobs stay queued (their
 *   leases expire), their attempts not counted.
 *
 * One round at a time per worker; many workers (in many processes) may drain one queue: leases
 * keep them off each other's jobs.
 */
/**
 * How a failed job is retried: exponential backoff from `backoffMs`, capped at `maxBackoffMs`,
 * dead-lettered after `maxAttempts`.
 *
 * @inline
 */
export interface RetryOptions {
  /** Attempts of a job before it is dead-lettered. Default 5. */
  maxAttempts?: number;
  /** Wait after the first failure; doubles with each further one. Default 2000 ms. */
  backoffMs?: number;
  /** The longest wait between attempts. Default 300 000 ms (5 minutes). */
  maxBackoffMs?: number;
}

export const DEFAULT_RETRY: Required<RetryOptions> = { maxAttempts: 5, backoffMs: 2_000, maxBackoffMs: 300_000 };

export type JobOutcome = 'done' | 'gone' | ErrorRecord;

export interface JobWorkerOptions<K extends JobKind> {
  queue: JobQueue;
  kind: K;
  run(jobs: LeasedJob<K>[], signal: AbortSignal): Promise<JobOutcome[]>;
  retry?: Required<RetryOptions>;
  /** Jobs per `run`. Default 1. */
  batch?: number;
  /** How long a leased job is this worker's before another may take it. Default 10 minutes. */
  leaseMs?: number;
  /** A look at the queue at least this often. Default 5000 ms. */
  pollMs?: number;
  /** Wraps each round (recall's `close` waits for tracked work). Default: runs it. */
  track?: <T>(work: () => Promise<T>) => Promise<T>;
  /** The code of a failure `run` threw (not an outcome it returned). */
  errorOf(error: unknown): ErrorRecord;
}

export interface JobWorker {
  /** Starts a round unless one is running (which then looks again). */
  kick(): void;
  /** Resolves when a round found nothing due (jobs waiting for a retry are not waited for). */
  idle(): Promise<void>;
  close(): void;
}

export function resolveRetryOptions(options: RetryOptions | undefined, name = 'extraction'): Required<RetryOptions> {
  const out = { ...DEFAULT_RETRY, ...options };
  for (const [field, min] of [['maxAttempts', 1], ['backoffMs', 0], ['maxBackoffMs', 0]] as const) {
    if (!Number.isSafeInteger(out[field]) || out[field] < min) {
      throw new InvalidInputError('invalid_option', `${name}.${field} must be a whole number from ${min}`, { option: `${name}.${field}` });
    }
  }
  return out;
}

export function createJobWorker<K extends JobKind>(options: JobWorkerOptions<K>): JobWorker {
  const { queue, kind } = options;
  const retry = options.retry ?? DEFAULT_RETRY;
  const batch = options.batch ?? 1;
  const leaseMs = options.leaseMs ?? 600_000;
  const track = options.track ?? (<T>(work: () => Promise<T>) => work());
  const stop = new AbortController();
  let running: Promise<void> | undefined;
  let again = false;
  let timer: NodeJS.Timeout | undefined;
  let wakeAt = Infinity;
  const poll = setInterval(() => kick(), options.pollMs ?? 5_000);
  poll.unref();
  const unsubscribe = queue.subscribe(kind, () => kick());

  /** A timer for `inMs` from now, unless one is set to fire sooner. */
  const wakeUpIn = (inMs: number): void => {
    const at = performance.now() + inMs;
    if (stop.signal.aborted || at >= wakeAt) return;
    clearTimeout(timer);
    wakeAt = at;
    timer = setTimeout(() => {
      timer = undefined;
      wakeAt = Infinity;
      kick();
    }, Math.max(0, Math.min(inMs, 2 ** 31 - 1)));
    timer.unref();
  };

  const settle = async (job: LeasedJob<K>, outcome: JobOutcome): Promise<void> => {
    if (outcome === 'gone') return;
    if (outcome === 'done') return queue.complete(job);
    const attempts = job.attempts + 1;
    const wait = Math.min(retry.backoffMs * 2 ** (attempts - 1), retry.maxBackoffMs);
    await queue.fail(job, outcome, attempts >= retry.maxAttempts ? undefined : wait);
  };

  const round = async (): Promise<void> => {
    for (;;) {
      again = false;
      if (stop.signal.aborted) return;
      const jobs = await queue.lease(kind, { limit: batch, leaseMs });
      if (jobs.length === 0) {
        const next = await queue.nextDue(kind);
        if (next !== undefined) wakeUpIn(next);
        return;
      }
      let outcomes: JobOutcome[];
      try {
        outcomes = await options.run(jobs, stop.signal);
      } catch (error) {
        // Stopping: the jobs stay as they were, for the next start.
        if (stop.signal.aborted) return;
        const outcome: JobOutcome = error instanceof StaleWriteError ? 'gone' : options.errorOf(error);
        outcomes = jobs.map(() => outcome);
      }
      for (const [i, job] of jobs.entries()) await settle(job, outcomes[i] ?? 'gone');
    }
  };

  function kick(): void {
    again = true;
    if (running !== undefined || stop.signal.aborted) return;
    running = track(round)
      .catch(() => undefined)
      .finally(() => {
        running = undefined;
        // A kick that came after the round's last look.
        if (again) kick();
      });
  }

  kick();
  return {
    kick,
    idle: async () => {
      while (running !== undefined) await running;
    },
    close: () => {
      stop.abort();
      clearTimeout(timer);
      clearInterval(poll);
      unsubscribe();
    },
  };
}
