import { errorRecord, type ErrorRecord } from '../../errors.ts';
import { systemWallClock, type WallClock } from '../../wall-clock.ts';
import { createJobWorker, type JobOutcome } from './job-worker.ts';
import type { LeasedJob } from '../storage/job-queue.ts';
import type { RecallStore, VectorWrite } from '../storage/recall-store.ts';
import { EmbeddingsError } from '../embeddings/embedding-errors.ts';
import { createEmbeddingsClient, type EmbeddingsClient } from '../embeddings/embeddings-client.ts';
import type { ResolvedEmbeddingsOptions } from '../embeddings/embeddings-options.ts';
import { realTiming, tokenBucket, type Timing } from '../embeddings/rate-limiter.ts';
import { textHash } from '../search/vector-codec.ts';
import type { DrainStatus, EmbeddingDrain } from '../embeddings/embedding-drain.ts';

/**
 * The background drain of the `embed` jobs (the job worker, jobs/job-worker.ts): up to
 * `batchSize` jobs a round, each item's text read as it is now, one request (after the rate
 * limiter), and the vectors stored with their jobs completed in ONE step of the store
 * (`putVectors`). What makes a crash harmless: a job goes only with its vector, so a drain
 * killed anywhere resumes from the queue as committed; a batch embedded but not stored is
 * asked again, and the vector, keyed by its item, is stored once whatever happened.
 *
 * At that step, an item whose job is gone meanwhile (its row deleted, its user erased) is not
 * stored, and one whose text changed stays queued for the new text: nothing of an erased user
 * is written after the erasure, whenever the endpoint answers.
 *
 * Failures: every failed request counts an attempt on each item of its batch (their
 * `lastError`: the code and Mnemo's sentence, never the endpoint's words); a retryable one
 * (429, 5xx, timeout, connection) also waits `retryBaseMs × 2^(n−1)` (n failures in a row, at
 * most 60 s) before the next request; an item failed `maxAttempts` times is dead-lettered
 * (queued again by a new write of its row). An item that failed before is sent alone, so one bad
 * input cannot sink a batch forever. An item with no text (gone) completes at once.
 */
export interface EmbeddingDrainOptions {
  store: RecallStore;
  embeddings: ResolvedEmbeddingsOptions;
  /** Default: the `openai` client on `embeddings`. */
  client?: EmbeddingsClient;
  timing?: Timing;
  clock?: WallClock;
  /** Default 1000 ms. */
  pollMs?: number;
  /** An unexpected failure (storage): the drain has stopped. Default: retried after `pollMs`. */
  onCrash?: (error: unknown) => void;
}

export type { DrainStatus, EmbeddingDrain };

const MAX_BACKOFF_MS = 60_000;

export function createEmbeddingDrain(options: EmbeddingDrainOptions): EmbeddingDrain {
  const { store } = options;
  const cfg = options.embeddings;
  const client = options.client ?? createEmbeddingsClient(cfg);
  const timing = options.timing ?? realTiming;
  const clock = options.clock ?? systemWallClock;
  const limiter = tokenBucket(cfg.requestsPerMinute, cfg.burst, timing);
  const counts: DrainStatus = { requests: 0, failures: 0, embedded: 0 };
  let failuresInARow = 0;
  let closed = false;
  const running = new Set<Promise<unknown>>();

  /** One request for `jobs` (their texts known); the outcome of each. */
  const embedBatch = async (userJobs: Array<{ job: LeasedJob<'embed'>; text: string }>, signal: AbortSignal): Promise<JobOutcome[]> => {
    await limiter.take(signal);
    counts.requests++;
    let vectors: Float32Array[];
    try {
      vectors = await client.embed(userJobs.map((i) => i.text.slice(0, cfg.maxChars)), signal);
    } catch (error) {
      if (signal.aborted) throw error;
      counts.failures++;
      failuresInARow++;
      const failure = error instanceof EmbeddingsError ? error : new EmbeddingsError(String(error), true);
      if (failure.retryable) await timing.sleep(Math.min(MAX_BACKOFF_MS, cfg.retryBaseMs * 2 ** (failuresInARow - 1)), signal);
      const record: ErrorRecord = errorRecord(failure, 'embeddings_failed');
      return userJobs.map(() => record);
    }
    failuresInARow = 0;
    const byUser = new Map<string, VectorWrite[]>();
    userJobs.forEach(({ job, text }, i) => {
      const list = byUser.get(job.userId) ?? [];
      list.push({ item: job.payload.item, id: job.payload.id, hash: textHash(text), vector: vectors[i]!, job });
      byUser.set(job.userId, list);
    });
    for (const [userId, writes] of byUser) counts.embedded += await store.putVectors(userId, writes);
    // Stored ones were completed with their vectors; the others are queued again for newer text, or gone.
    return userJobs.map((): JobOutcome => 'gone');
  };

  const worker = createJobWorker({
    queue: store.jobs,
    kind: 'embed',
    batch: cfg.batchSize,
    retry: { maxAttempts: cfg.maxAttempts, backoffMs: 0, maxBackoffMs: 0 },
    pollMs: options.pollMs ?? 1_000,
    track: (work) => {
      const p = work();
      running.add(p);
      void p.finally(() => running.delete(p)).catch(() => undefined);
      return p;
    },
    errorOf: (error) => {
      // Not the endpoint (that is an outcome): the store failed. The drain has crashed.
      if (options.onCrash !== undefined && !closed) options.onCrash(error);
      return errorRecord(error, 'embeddings_failed');
    },
    async run(jobs, signal) {
      const outcomes = new Map<LeasedJob<'embed'>, JobOutcome>();
      const fresh: Array<{ job: LeasedJob<'embed'>; text: string }> = [];
      const retried: Array<{ job: LeasedJob<'embed'>; text: string }> = [];
      for (const job of jobs) {
        const text = await store.itemText(job.userId, job.payload.item, job.payload.id);
        if (text === undefined) outcomes.set(job, 'done');
        else (job.attempts > 0 ? retried : fresh).push({ job, text });
      }
      const groups = [...(fresh.length > 0 ? [fresh] : []), ...retried.map((r) => [r])];
      for (const group of groups) {
        if (closed) throw new Error('closed');
        const results = await embedBatch(group, signal);
        group.forEach(({ job }, i) => outcomes.set(job, results[i]!));
      }
      return jobs.map((job) => outcomes.get(job) ?? 'gone');
    },
  });

  return {
    kick: () => worker.kick(),
    idle: () => worker.idle(),
    status: () => ({ ...counts }),
    async close() {
      closed = true;
      worker.close();
      await Promise.allSettled([...running]);
    },
  };
}
