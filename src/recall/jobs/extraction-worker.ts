import { errorRecord, InvalidInputError, type ErrorRecord } from '../../errors.ts';
import { languageOf } from '../../language.ts';
import type { LlmService } from '../../llm/llm-service.ts';
import { createJobWorker, type JobOutcome, type JobWorker, type RetryOptions } from './job-worker.ts';
import type { LeasedJob } from '../storage/job-queue.ts';
import { linkedRoot, withSpan, type TraceContext } from '../../telemetry/tracing.ts';
import type { RecallDeps } from '../recall-deps.ts';
import type { UserGate } from '../user-gate.ts';
import type { FactSource } from '../records/fact-entry.ts';
import { extractFacts } from '../facts/fact-extraction.ts';
import { rememberFact } from '../facts/facts-service.ts';

/**
 * Fact extraction in the background: the job worker (jobs/job-worker.ts) on the `extract`
 * jobs, one at a time, tracked by the service (its `close()` waits for it and aborts its model
 * call: the job stays queued, its attempt not counted).
 *
 * - A job asks the model for the turn's durable facts and writes each through the fact rules,
 *   every write guarded by the job's lease, then completes. A fact the rules refuse is skipped.
 * - Erasure: the user's erasure removes their jobs, so each later write of a running job stores
 *   nothing (its lease is gone, checked inside the store's transaction); in this process the
 *   user gate also aborts the job's model call at once (user-gate.ts `lease`).
 * - A job fails when the model throws, answers something other than the JSON asked for, or a
 *   fact cannot be written. The error goes whole to recall's `onFactsError`; the job keeps only
 *   its `{code, message}` (`errorRecord`: Mnemo's own sentence, never a model provider's words),
 *   and is retried with backoff until `maxAttempts`, then dead-lettered (listed by
 *   `extractionStatus`, counted in the metrics, re-queued by `retryDeadExtractions`).
 */
export type ExtractionRetryOptions = RetryOptions;

/** A dead-lettered job as `extractionStatus` lists it. */
export interface DeadExtraction {
  /** The user. */
  userId: string;
  /** The session of the turn. */
  sessionId: string;
  /** The reply's message id. */
  replyId: number;
  /** The turn's session rows: the user row, the reply. */
  messageIds: number[];
  /** Attempts made. */
  attempts: number;
  /** The last failure: its code and Mnemo's own sentence. */
  lastError: ErrorRecord;
  /** When it was queued (ISO instant). */
  queuedAt: string;
  /** When it was given up (ISO instant). */
  deadAt: string;
}

/** What `recall.extractionStatus` reports about fact extraction's queue. */
export interface ExtractionStatus {
  /** Jobs queued (due now or waiting for a retry). */
  pending: number;
  /** Of those, the ones that failed at least once. */
  retrying: number;
  /** Jobs that failed every attempt. */
  dead: number;
  /** The first 100 of them, by user then key. */
  deadJobs: DeadExtraction[];
}

export function createExtractionWorker(
  deps: RecallDeps,
  llm: LlmService,
  track: <T>(work: () => Promise<T>) => Promise<T>,
  gate: Pick<UserGate, 'lease'>,
  retry: Required<RetryOptions>,
): JobWorker {
  return createJobWorker({
    queue: deps.store.jobs,
    kind: 'extract',
    retry,
    track,
    errorOf: (error) => {
      deps.onFactsError(error, 'extraction');
      return errorRecord(error, 'extraction_failed');
    },
    run: ([job], signal) =>
      withSpan('mnemo.extraction', { 'mnemo.extraction.attempt': job!.attempts + 1 }, (_, trace) => runJob(job!, signal, trace), linkedRoot(extractionLinkKey(job!.userId, job!.payload))),
  });

  async function runJob(job: LeasedJob<'extract'>, signal: AbortSignal, trace: TraceContext | undefined): Promise<JobOutcome[]> {
    let userLease;
    try {
      userLease = gate.lease(job.userId);
    } catch {
      return ['gone']; // the user is being erased: the job goes with them
    }
    try {
      const aborted = AbortSignal.any([signal, userLease.signal]);
      const p = job.payload;
      const facts = await extractFacts(llm, p, aborted, languageOf(deps.language, p.userMessage), trace);
      const source: FactSource = { via: 'extraction', sessionId: p.sessionId, messageIds: p.messageIds };
      for (const fact of facts) {
        try {
          await rememberFact(deps, job.userId, { ...fact, source }, { signal: aborted, guard: { job } });
        } catch (error) {
          if (!(error instanceof InvalidInputError)) throw error;
        }
      }
      return ['done'];
    } finally {
      userLease.release();
    }
  }
}

/** The key a turn notes its span under, for its extraction job's span to link to (telemetry/tracing.ts). */
export function extractionLinkKey(userId: string, job: { sessionId: string; replyId: number }): string {
  return `extraction\u0000${userId}\u0000${job.sessionId}\u0000${job.replyId}`;
}

/** What is queued and what was dead-lettered. */
export async function extractionStatus(deps: RecallDeps): Promise<ExtractionStatus> {
  const counts = await deps.store.jobs.counts('extract');
  const dead = await deps.store.jobs.dead('extract', { limit: 100 });
  return {
    ...counts,
    deadJobs: dead.map((j) => ({
      userId: j.userId,
      sessionId: j.payload.sessionId,
      replyId: j.payload.replyId,
      messageIds: j.payload.messageIds,
      attempts: j.attempts,
      lastError: j.lastError,
      queuedAt: j.queuedAt,
      deadAt: j.deadAt,
    })),
  };
}
