import { errorRecord, InvalidInputError, type ErrorRecord } from '../../errors.ts';
import type { LlmService } from '../../llm/llm-service.ts';
import type { RecallDeps } from '../recall-deps.ts';
import { commit, commitRemoval, HIGH, type RecallDbs } from '../store/recall-dbs.ts';
import type { ExtractionJob, FactSource } from './fact-entry.ts';
import { deadJobs, extractFacts, queuedJobs, type JobKey } from './fact-extraction.ts';
import { rememberFact } from './facts-service.ts';
import type { UserGate, UserLease } from '../user-gate.ts';
import { linkedRoot, withSpan } from '../../telemetry/tracing.ts';

/**
 * The background drain of the extraction queue (fact-extraction.ts), one job at a time,
 * tracked by the service (its `close()` waits for it and aborts its model call: the job stays
 * queued, its attempt not counted).
 *
 * - Erasure (user-gate.ts): a job runs under a lease of its user, taken in the same event-loop
 *   turn as the job is read from the queue. The user's erasure revokes it: the job's model
 *   calls are aborted, and each of its commits (its facts, the removal of its queue entry, a
 *   failure's record) checks the lease inside its transaction and writes nothing once it is
 *   revoked, whenever the model answers. The erasure removes the user's queued jobs with the
 *   rest of their keys; while it runs, the drain skips the user's jobs.
 *
 * - A job fails when the model throws, answers something other than the JSON asked for, or a
 *   fact cannot be written. The error goes whole to recall's `onFactsError`; the job keeps only
 *   its `{code, message}` (`errorRecord`: Mnemo's own sentence, never a model provider's words).
 *   A failed job stays queued with `attempts`, `last_error` and
 *   `next_at` (now + `backoffMs` · 2^(attempts−1), at most `maxBackoffMs`) and the drain goes
 *   on with the next due job: a failing job never holds back later ones, the same user's
 *   included. After `maxAttempts` failures it moves to `recall.fact-dead` (kept, listed by
 *   `extractionStatus`, counted in the metrics) and is not tried again.
 * - `next_at` is stored, so a restart resumes every pending job on its schedule; a timer
 *   (unref'd, cleared on close) wakes the drain at the earliest one.
 * - Finding the next due job scans the queue: it is short unless the model is down for long.
 */
export interface ExtractionRetryOptions {
  /** Attempts of a job before it is dead-lettered. Default 5. */
  maxAttempts?: number;
  /** Wait after the first failure; doubles with each further one. Default 2000 ms. */
  backoffMs?: number;
  /** The longest wait between attempts. Default 300 000 ms (5 minutes). */
  maxBackoffMs?: number;
}

export const DEFAULT_EXTRACTION_RETRY: Required<ExtractionRetryOptions> = { maxAttempts: 5, backoffMs: 2_000, maxBackoffMs: 300_000 };

/** A dead-lettered job as `extractionStatus` lists it. */
export interface DeadExtraction {
  user_id: string;
  session_id: string;
  /** The reply's message id (the job's key with user and session). */
  reply_id: number;
  message_ids: number[];
  attempts: number;
  last_error: ErrorRecord;
  queued_at: string;
  dead_at: string;
}

export interface ExtractionStatus {
  /** Jobs queued (due now or waiting for a retry). */
  pending: number;
  /** Of those, the ones that failed at least once. */
  retrying: number;
  /** Jobs that failed every attempt. */
  dead: number;
  /** The first 100 of them, in key order (user, session, reply). */
  dead_jobs: DeadExtraction[];
}

export interface ExtractionWorker {
  /** Starts a drain unless one is running (then it picks the new job up too). */
  kick(): void;
  /** Resolves when no job is due now (jobs waiting for a retry are not). */
  idle(): Promise<void>;
  close(): void;
}

/** The key a turn notes its span under for its extraction job's span to link to (telemetry/tracing.ts). */
export function extractionLinkKey([userId, sessionId, replyId]: JobKey): string {
  return `extraction\u0000${userId}\u0000${sessionId}\u0000${replyId}`;
}

export function checkRetryOptions(options: ExtractionRetryOptions | undefined): Required<ExtractionRetryOptions> {
  const out = { ...DEFAULT_EXTRACTION_RETRY, ...options };
  const whole = (name: keyof ExtractionRetryOptions, min: number) => {
    if (!Number.isSafeInteger(out[name]) || out[name] < min) {
      throw new InvalidInputError('invalid_option', `extraction.${name} must be a whole number from ${min}`);
    }
  };
  whole('maxAttempts', 1);
  whole('backoffMs', 0);
  whole('maxBackoffMs', 0);
  return out;
}

export function createExtractionWorker(
  deps: RecallDeps,
  llm: LlmService,
  track: <T>(work: () => Promise<T>) => Promise<T>,
  gate: Pick<UserGate, 'lease' | 'isErasing'>,
  retry: Required<ExtractionRetryOptions> = DEFAULT_EXTRACTION_RETRY,
): ExtractionWorker {
  const stop = new AbortController();
  let running: Promise<void> | undefined;
  let again = false;
  let timer: NodeJS.Timeout | undefined;
  let wakeAt = Infinity;

  const wakeUpAt = (at: number): void => {
    if (!Number.isFinite(at) || stop.signal.aborted || at >= wakeAt) return;
    clearTimeout(timer);
    wakeAt = at;
    const delay = Math.max(0, Math.min(at - deps.clock.now(), 2 ** 31 - 1));
    timer = setTimeout(() => {
      timer = undefined;
      wakeAt = Infinity;
      kick();
    }, delay);
    timer.unref();
  };

  /** The first job due now, else the earliest time one will be (a user being erased has none). */
  const nextDue = (): { key: JobKey; value: ExtractionJob } | number => {
    const now = deps.clock.now();
    let earliest = Infinity;
    for (const item of queuedJobs(deps.dbs)) {
      if (gate.isErasing(item.key[0])) continue;
      const at = item.value.next_at === undefined ? 0 : Date.parse(item.value.next_at);
      if (!(at > now)) return item;
      earliest = Math.min(earliest, at);
    }
    return earliest;
  };

  const run = async (key: JobKey, job: ExtractionJob, lease: Pick<UserLease, 'signal' | 'held'>): Promise<void> => {
    const [userId, sessionId] = key;
    const facts = await extractFacts(llm, job, lease.signal, deps.language);
    const source: FactSource = { via: 'extraction', session_id: sessionId, message_ids: job.message_ids };
    for (const fact of facts) {
      try {
        await rememberFact(deps, userId, { ...fact, source }, lease);
      } catch (error) {
        // A fact the rules refuse is skipped; anything else fails the attempt.
        if (!(error instanceof InvalidInputError)) throw error;
      }
    }
    await commitRemoval(deps.dbs, () => {
      if (lease.held) deps.dbs.factQueue.remove(key);
    });
  };

  const failed = async (key: JobKey, job: ExtractionJob, error: unknown, lease: Pick<UserLease, 'held'>): Promise<void> => {
    const attempts = (job.attempts ?? 0) + 1;
    deps.onFactsError(error, 'extraction');
    const lastError = errorRecord(error, 'extraction_failed');
    const now = deps.clock.now();
    await commit(deps.dbs, () => {
      // The user's erasure began (the job is erased with the rest): nothing to keep.
      if (!lease.held || deps.dbs.factQueue.get(key) === undefined) return;
      const { next_at: _next, ...rest } = job;
      if (attempts >= retry.maxAttempts) {
        deps.dbs.factQueue.remove(key);
        deps.dbs.factDead.put(key, { ...rest, attempts, last_error: lastError, dead_at: new Date(now).toISOString() });
      } else {
        const wait = Math.min(retry.backoffMs * 2 ** (attempts - 1), retry.maxBackoffMs);
        deps.dbs.factQueue.put(key, { ...rest, attempts, last_error: lastError, next_at: new Date(now + wait).toISOString() });
      }
    });
  };

  const drain = async (): Promise<void> => {
    for (;;) {
      again = false;
      if (stop.signal.aborted) return;
      const next = nextDue();
      if (typeof next === 'number') {
        wakeUpAt(next);
        return;
      }
      // In the turn that read the job: no erasure of its user can begin in between.
      const userLease = gate.lease(next.key[0]);
      const lease = {
        signal: AbortSignal.any([stop.signal, userLease.signal]),
        get held() {
          return userLease.held;
        },
      };
      try {
        await withSpan('mnemo.extraction', { 'mnemo.extraction.attempt': (next.value.attempts ?? 0) + 1 }, () => run(next.key, next.value, lease), linkedRoot(extractionLinkKey(next.key)));
      } catch (error) {
        // Stopping: the job stays as it was, for the next start. Erased: it is gone.
        if (stop.signal.aborted) return;
        await failed(next.key, next.value, error, lease);
      } finally {
        userLease.release();
      }
    }
  };

  function kick(): void {
    again = true;
    if (running !== undefined || stop.signal.aborted) return;
    running = track(drain)
      .catch(() => undefined)
      .finally(() => {
        running = undefined;
        // A kick that came after the drain's last look.
        if (again) kick();
      });
  }

  return {
    kick,
    idle: async () => {
      while (running !== undefined) await running;
    },
    close: () => {
      stop.abort();
      clearTimeout(timer);
    },
  };
}

/**
 * Inside a write transaction: moves every dead-lettered job (of `userId`, else all) back to the
 * queue with its attempts reset, due now. Returns how many.
 */
export function requeueDeadTx(dbs: RecallDbs, userId?: string): number {
  const range = userId === undefined ? { start: [''], end: [HIGH] } : { start: [userId], end: [userId, HIGH] };
  let moved = 0;
  for (const { key, value } of dbs.factDead.getRange(range)) {
    const { attempts: _a, last_error: _e, dead_at: _d, next_at: _n, ...job } = value;
    dbs.factQueue.put(key, job);
    dbs.factDead.remove(key);
    moved++;
  }
  return moved;
}

/** What is queued and what was dead-lettered (reads the dbs). */
export function extractionStatus(dbs: RecallDbs): ExtractionStatus {
  let pending = 0;
  let retrying = 0;
  for (const { value } of queuedJobs(dbs)) {
    pending++;
    if ((value.attempts ?? 0) > 0) retrying++;
  }
  const dead = deadJobs(dbs, 100).map(({ key: [user_id, session_id, reply_id], value }) => ({
    user_id,
    session_id,
    reply_id,
    message_ids: value.message_ids,
    attempts: value.attempts,
    last_error: value.last_error,
    queued_at: value.queued_at,
    dead_at: value.dead_at,
  }));
  return { pending, retrying, dead: dbs.factDead.getCount(), dead_jobs: dead };
}
