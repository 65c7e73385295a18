import type { ErrorRecord } from '../../errors.ts';

/**
 * The one durable job queue of the layered memory: fact extraction, embeddings and session
 * summaries run through it on every storage engine, as OTP has one restart policy for every
 * supervisor. A job is queued in the same commit as the write that calls for it (a turn's reply
 * queues its extraction; a stored row queues its embedding), so what was committed is queued.
 *
 * - IDENTITY: `(kind, userId, key)`. Queuing a job that is already queued replaces its payload
 *   and resets its attempts (the newest write wins: an embedding of a row's current text).
 * - LEASES: `lease` hands out due jobs (`nextAt` passed, not leased, or leased past its expiry)
 *   with a fresh `token`; a lease expires after `leaseMs`, so a job whose worker died (a killed
 *   process) is taken over by another worker, in any process. Jobs of one lease call are
 *   distinct and in due order.
 * - EFFECTS: a job's writes carry its lease as a guard (`WriteGuard.job`): they commit only
 *   while the job is still queued under that token, in the same transaction. An erasure removes
 *   the user's jobs, leased ones too, so a job that finishes after its user was erased writes
 *   nothing. Effects are idempotent (a job retried after a crash writes the same thing again).
 * - TIME is the store's: due times and retries are reckoned by its clock (the database's, on a
 *   shared one), never by a worker's.
 * - OUTCOMES: `complete` removes the job; `fail` counts an attempt and either schedules the next
 *   (`retryInMs`) or moves it to the dead letters (kept with the error, listed, re-queued by
 *   `requeueDead`, removed by `purgeDead`). Both are no-ops for a lease no longer held.
 * - RECURRING jobs (the retention sweep) are started by `schedule`, which every process may
 *   call (the first one queues it, later ones only make it due sooner), and kept by `reschedule`, which
 *   hands the next round its payload instead of removing the job: one job, so one round at a
 *   time whichever process leases it.
 * - Errors stored with a job are Mnemo's own sentences and codes, never a provider's text.
 */
export type JobKind = 'extract' | 'embed' | 'summarize' | 'sweep';

/** A finished turn waiting for fact extraction. */
export interface ExtractPayload {
  /** The session of the turn. */
  sessionId: string;
  /** The reply's session message id. */
  replyId: number;
  /** What the user said. */
  userMessage: string;
  /** What was answered. */
  assistantReply: string;
  /** The turn's session rows: the user row, the reply. */
  messageIds: number[];
}

/** An item waiting for its embedding: a document of the ranked index, or a fact. */
export interface EmbedPayload {
  /** `d`: a document of the ranked index; `f`: a fact. */
  item: 'd' | 'f';
  /** The document number (search/doc-numbers.ts) or the fact's seq. */
  id: number;
}

/** A session whose older part is due for a rolling summary (queued by the turn that found it due). */
export interface SummarizePayload {
  /** The session. */
  sessionId: string;
  /**
   * The user's incarnation the turn wrote under (`WriteGuard.incarnation`): the summary is
   * stored only while it holds, so nothing summarized before an erasure is stored after it.
   */
  incarnation?: string;
}

/**
 * The retention sweep (retention-sweep.ts): one recurring job of no user (`userId` ''), its
 * payload where each of its walks resumes (absent: from the start).
 */
export interface SweepPayload {
  /** The last conversation id the conversations' walk examined. */
  conversations?: string;
  /** The last `[userId, sessionId]` the sessions' walk examined. */
  sessions?: [string, string];
}

/** The payload of each job kind. */
export interface JobPayloads {
  /** Fact extraction of a finished turn. */
  extract: ExtractPayload;
  /** An item's embedding. */
  embed: EmbedPayload;
  /** A session's rolling summary. */
  summarize: SummarizePayload;
  /** A round of the retention sweep. */
  sweep: SweepPayload;
}

/** A queued job. */
export interface Job<K extends JobKind = JobKind> {
  /** What it does. */
  kind: K;
  /** Whose data it works on. */
  userId: string;
  /** Unique within `(kind, userId)`; built from the payload (`jobKey`). */
  key: string;
  /** What it needs. */
  payload: JobPayloads[K];
  /** ISO instant it was queued. */
  queuedAt: string;
  /** Failed attempts so far. */
  attempts: number;
  /** The last failure: its code and Mnemo's own sentence. */
  lastError?: ErrorRecord;
  /** Not due before this ISO instant; absent: due now. */
  nextAt?: string;
}

/** A job that failed every attempt (a dead letter). */
export interface DeadJob<K extends JobKind = JobKind> extends Job<K> {
  lastError: ErrorRecord;
  /** ISO instant it was given up. */
  deadAt: string;
}

/** A job handed to a worker. Its `token` guards its effects and its outcome. */
export interface LeasedJob<K extends JobKind = JobKind> extends Job<K> {
  /** This lease's token: its effects and outcome commit only while it is current. */
  token: string;
}

/** What a job's writes name to commit only while it is still held (see EFFECTS). */
export interface JobLease {
  /** The job's kind. */
  kind: JobKind;
  /** Its user. */
  userId: string;
  /** Its key. */
  key: string;
  /** The lease's token. */
  token: string;
}

/** How many jobs of a kind are queued, retrying and dead. */
export interface JobCounts {
  /** Queued (due now or waiting for a retry). */
  pending: number;
  /** Of those, the ones that failed at least once. */
  retrying: number;
  /** Dead letters. */
  dead: number;
}

/** The durable job queue of a `RecallStore` (see above for its guarantees). */
export interface JobQueue {
  /** Queues jobs on their own (work that is not part of another write, e.g. a backfill). */
  enqueue(jobs: readonly NewJob[]): Promise<void>;
  /** Up to `limit` due jobs of `kind`, leased for `leaseMs`. */
  lease<K extends JobKind>(kind: K, options: { limit: number; leaseMs: number }): Promise<LeasedJob<K>[]>;
  /** Removes the job; nothing when its lease is no longer held. */
  complete(job: LeasedJob): Promise<void>;
  /**
   * One more failed attempt: due again `retryInMs` from now (the store's clock), or, with
   * `retryInMs` undefined, moved to the dead letters.
   */
  fail(job: LeasedJob, error: ErrorRecord, retryInMs: number | undefined): Promise<void>;
  /**
   * The queued job `(kind, userId, key)`, leased or not, as stored: its attempts, last error and
   * due time (`nextAt`, by the store's clock); `undefined` when none is queued (never queued,
   * completed, dead or erased).
   */
  get<K extends JobKind>(kind: K, userId: string, key: string): Promise<Job<K> | undefined>;
  /** How long until the next job of `kind` is due, in ms (0: now; `undefined`: none queued), for a timer. */
  nextDue(kind: JobKind): Promise<number | undefined>;
  /** The counts of `kind` (of `userId`, else every user's). */
  counts(kind: JobKind, userId?: string): Promise<JobCounts>;
  /** The first `limit` dead letters, by user then key. */
  dead<K extends JobKind>(kind: K, options: { limit: number; userId?: string }): Promise<DeadJob<K>[]>;
  /**
   * Calls `listener` after jobs of `kind` were queued (in this process; an engine shared by many
   * processes may also tell of other processes' jobs, or not: workers poll as well). Returns the
   * unsubscribe function.
   */
  subscribe(kind: JobKind, listener: () => void): () => void;
  /** Dead letters (of `userId`, else every user's) back in the queue, attempts reset; how many. */
  requeueDead(kind: JobKind, userId?: string): Promise<number>;
  /** Drops dead letters that died before `before` (ISO); how many. */
  purgeDead(kind: JobKind, before: string): Promise<number>;
  /**
   * Queues `job` due `inMs` from now (the store's clock) unless it is queued already; a queued
   * one keeps its payload and lease and is only made due sooner, if `inMs` from now is sooner
   * than its due time. A recurring job's start, which every process running it may call (with
   * its period: a no-op once it runs), and its "run the next round now" (with 0).
   */
  schedule(job: NewJob, inMs: number): Promise<void>;
  /**
   * A recurring job's next round: the leased job stays queued with `payload`, due `inMs` from
   * now (the store's clock), its lease released and its attempts reset. Nothing when its lease
   * is no longer held.
   */
  reschedule<K extends JobKind>(job: LeasedJob<K>, payload: JobPayloads[K], inMs: number): Promise<void>;
}

/** A job to queue: its kind, user and payload (the key is made from them, `jobKey`). */
export type NewJob = {
  [K in JobKind]: {
    /** What it does. */
    kind: K;
    /** Whose data it works on. */
    userId: string;
    /** What it needs. */
    payload: JobPayloads[K];
  };
}[JobKind];

/** A job's key within its kind and user: what makes queuing it twice one job. */
export function jobKey(job: NewJob): string {
  switch (job.kind) {
    case 'extract':
      return `${job.payload.sessionId}/${job.payload.replyId}`;
    case 'embed':
      return `${job.payload.item}:${job.payload.id}`;
    case 'summarize':
      return job.payload.sessionId;
    case 'sweep':
      return 'retention';
  }
}
