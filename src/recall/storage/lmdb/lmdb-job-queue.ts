import type { Database, Key } from 'lmdb';
import type { ErrorRecord } from '../../../errors.ts';
import type { WallClock } from '../../../wall-clock.ts';
import { jobKey, type DeadJob, type Job, type JobCounts, type JobKind, type JobLease, type JobQueue, type LeasedJob, type NewJob } from '../job-queue.ts';
import type { DeadEntry, ItemKey, QueueEntry } from './embeddings/embed-dbs.ts';
import { commit, commitRemoval, HIGH, type RecallDbs, type StoredDeadExtractionJob, type StoredExtractionJob } from './recall-dbs.ts';
import { fromExtractJob, toExtractJob } from './record-codec.ts';

/** node:crypto loads on first use: it is ~25 ms of a cold import (docs/performance-history.md). */
const crypto = () => process.getBuiltinModule('node:crypto');

/**
 * The job queue (job-queue.ts) in LMDB, over the queues earlier versions wrote, so jobs a
 * previous process left are picked up as they are:
 *
 * | kind      | queued                                   | dead letters                        |
 * |-----------|------------------------------------------|-------------------------------------|
 * | extract   | recall.fact-queue [user, session, reply] | recall.fact-dead, same key          |
 * | embed     | recall.embed-queue [user, item, id]      | recall.embed-dead, same key         |
 * | summarize | recall.jobs [user, 'summarize', key]     | recall.jobs [user, 'summarize!', key] |
 * | sweep     | recall.jobs ['', 'sweep', 'retention']   | recall.jobs ['', 'sweep!', key]     |
 *
 * One process owns a data directory, so leases live in this process's memory: a restart frees
 * them all (the previous process is gone), and a lease held past `leaseMs` is handed out again
 * here. The due order of each kind is kept in memory too (`DueIndex`), read from the queue once
 * on first use and updated once each write commits, so finding due jobs costs what it returns,
 * not the queue's length.
 *
 * A job's effects commit with `held(tx guard)` checked inside their transaction (lmdb-recall-
 * store.ts): the queue entry is still there and its lease is this one. An erasure removes the
 * user's entries, so nothing of a job still running writes after it.
 */
export interface LmdbJobQueue extends JobQueue {
  /** Inside a write transaction: the job is queued (replacing a queued one). */
  enqueueTx(job: NewJob, now: string): void;
  /** Inside a write transaction: whether `lease` is still held (its entry queued, its token current). */
  heldTx(lease: JobLease): boolean;
  /** Inside a write transaction: removes a leased job whose effects commit in it. */
  completeTx(lease: JobLease): void;
  /** Inside a write transaction that queued an embedding through its own table (embed-hooks.ts). */
  notedTx(kind: JobKind, userId: string, key: string): void;
  /**
   * The jobs queued inside the transaction body that just ran (`enqueueTx`, `notedTx`); the
   * caller hands them to `noteQueued` once that transaction committed.
   */
  takeNotes(): QueuedNote[];
  /** After the commit that queued them: the jobs become visible to `lease`, and listeners are told. */
  noteQueued(notes: readonly QueuedNote[]): void;
  /** After an erasure: the user's leases and due entries go. */
  forgetUser(userId: string): void;
}

export interface QueuedNote {
  kind: JobKind;
  userId: string;
  key: string;
}

/** Stored in `recall.jobs` for the kinds without a db of their own. */
interface StoredJob {
  payload: unknown;
  queued_at: string;
  attempts?: number;
  last_error?: ErrorRecord;
  next_at?: string;
  dead_at?: string;
}

export const JOBS_DB = 'recall.jobs';

interface KindTable {
  /** Every job of the kind (all users), in key order. */
  scan(userId?: string): Iterable<Job>;
  scanDead(userId?: string): Iterable<DeadJob>;
  get(userId: string, key: string): Job | undefined;
  put(job: Job): void;
  remove(userId: string, key: string): void;
  putDead(job: DeadJob): void;
  removeDead(userId: string, key: string): void;
  countDead(): number;
}

export function createLmdbJobQueue(dbs: RecallDbs & { guard(): void }, clock: WallClock): LmdbJobQueue {
  const jobs = dbs.env.openDB<StoredJob, Key>(JOBS_DB, { encoding: 'json' });
  const tables: Record<JobKind, KindTable> = {
    extract: extractTable(dbs),
    embed: embedTable(dbs, clock),
    summarize: jobsTable(jobs, 'summarize'),
    sweep: jobsTable(jobs, 'sweep'),
  };
  const leases = new Map<string, { token: string; until: number }>();
  const due: Partial<Record<JobKind, DueIndex>> = {};
  const id = (kind: JobKind, userId: string, key: string) => `${kind}\u0000${userId}\u0000${key}`;
  const indexOf = (kind: JobKind): DueIndex => {
    let index = due[kind];
    if (index === undefined) {
      index = new DueIndex();
      for (const job of tables[kind].scan()) index.set(id(kind, job.userId, job.key), dueAt(job), job.userId);
      due[kind] = index;
    }
    return index;
  };
  const now = () => clock.now();
  let notes: QueuedNote[] = [];
  const listeners: Record<JobKind, Set<() => void>> = { extract: new Set(), embed: new Set(), summarize: new Set(), sweep: new Set() };

  const queue: LmdbJobQueue = {
    enqueueTx(job, at) {
      const key = jobKey(job);
      // A job queued again (newer text to embed, say) is a new job: a worker holding the old
      // one finds its lease gone, so it neither completes nor fails this one.
      leases.delete(id(job.kind, job.userId, key));
      tables[job.kind].removeDead(job.userId, key);
      tables[job.kind].put({ kind: job.kind, userId: job.userId, key, payload: job.payload, queuedAt: at, attempts: 0 } as Job);
      notes.push({ kind: job.kind, userId: job.userId, key });
    },
    notedTx(kind, userId, key) {
      leases.delete(id(kind, userId, key));
      notes.push({ kind, userId, key });
    },
    takeNotes() {
      const taken = notes;
      notes = [];
      return taken;
    },
    heldTx(lease) {
      const held = leases.get(id(lease.kind, lease.userId, lease.key));
      return held !== undefined && held.token === lease.token && tables[lease.kind].get(lease.userId, lease.key) !== undefined;
    },
    completeTx(lease) {
      tables[lease.kind].remove(lease.userId, lease.key);
      leases.delete(id(lease.kind, lease.userId, lease.key));
    },
    forgetUser(userId) {
      for (const index of Object.values(due)) index?.dropUser(userId);
      for (const key of leases.keys()) if (key.split('\u0000')[1] === userId) leases.delete(key);
    },
    noteQueued(queued) {
      const told = new Set<JobKind>();
      for (const q of queued) {
        due[q.kind]?.set(id(q.kind, q.userId, q.key), 0, q.userId);
        told.add(q.kind);
      }
      for (const kind of told) for (const listener of listeners[kind]) listener();
    },
    subscribe(kind, listener) {
      listeners[kind].add(listener);
      return () => listeners[kind].delete(listener);
    },
    async enqueue(newJobs) {
      if (newJobs.length === 0) return;
      const at = new Date(now()).toISOString();
      const queued = await commit(dbs, () => {
        for (const job of newJobs) queue.enqueueTx(job, at);
        return queue.takeNotes();
      });
      queue.noteQueued(queued);
    },
    async lease(kind, { limit, leaseMs }) {
      const index = indexOf(kind);
      const t = now();
      const out: LeasedJob<typeof kind>[] = [];
      for (const jobId of index.dueBy(t)) {
        if (out.length >= limit) break;
        const held = leases.get(jobId);
        if (held !== undefined && held.until > t) continue;
        const [, userId, key] = jobId.split('\u0000') as [string, string, string];
        const job = tables[kind].get(userId, key);
        if (job === undefined) {
          index.delete(jobId);
          continue;
        }
        const token = crypto().randomUUID();
        leases.set(jobId, { token, until: t + leaseMs });
        out.push({ ...(job as Job<typeof kind>), token });
      }
      return out;
    },
    async complete(job) {
      const jobId = id(job.kind, job.userId, job.key);
      if (leases.get(jobId)?.token !== job.token) return;
      await commitRemoval(dbs, () => tables[job.kind].remove(job.userId, job.key));
      leases.delete(jobId);
      due[job.kind]?.delete(jobId);
    },
    async fail(job, error, retryInMs) {
      const retryAt = retryInMs === undefined ? undefined : new Date(now() + retryInMs).toISOString();
      const jobId = id(job.kind, job.userId, job.key);
      if (leases.get(jobId)?.token !== job.token) return;
      const table = tables[job.kind];
      const attempts = job.attempts + 1;
      await commit(dbs, () => {
        const stored = table.get(job.userId, job.key);
        if (stored === undefined) return; // erased meanwhile: nothing to keep
        const { nextAt: _n, ...rest } = stored;
        if (retryAt === undefined) {
          table.remove(job.userId, job.key);
          table.putDead({ ...rest, attempts, lastError: error, deadAt: new Date(now()).toISOString() });
        } else {
          table.put({ ...rest, attempts, lastError: error, nextAt: retryAt });
        }
      });
      leases.delete(jobId);
      if (retryAt === undefined) due[job.kind]?.delete(jobId);
      else due[job.kind]?.set(jobId, Date.parse(retryAt), job.userId);
    },
    async get(kind, userId, key) {
      return tables[kind].get(userId, key) as Job<typeof kind> | undefined;
    },
    async nextDue(kind) {
      const at = indexOf(kind).earliest();
      return at === undefined ? undefined : Math.max(0, at - now());
    },
    async counts(kind, userId) {
      let pending = 0;
      let retrying = 0;
      for (const job of tables[kind].scan(userId)) {
        pending++;
        if (job.attempts > 0) retrying++;
      }
      let dead = 0;
      if (userId === undefined) dead = tables[kind].countDead();
      else for (const _ of tables[kind].scanDead(userId)) dead++;
      return { pending, retrying, dead } satisfies JobCounts;
    },
    async dead(kind, { limit, userId }) {
      const out: DeadJob<typeof kind>[] = [];
      for (const job of tables[kind].scanDead(userId)) {
        if (out.length >= limit) break;
        out.push(job as DeadJob<typeof kind>);
      }
      return out;
    },
    async requeueDead(kind, userId) {
      const table = tables[kind];
      const moved = await commit(dbs, () => {
        const back: Job[] = [];
        for (const job of [...table.scanDead(userId)]) {
          const { deadAt: _d, lastError: _e, nextAt: _n, ...rest } = job;
          table.removeDead(job.userId, job.key);
          table.put({ ...rest, attempts: 0 });
          back.push(job);
        }
        return back;
      });
      const index = due[kind];
      for (const job of moved) index?.set(id(kind, job.userId, job.key), 0, job.userId);
      return moved.length;
    },
    async schedule(job, inMs) {
      const key = jobKey(job);
      const at = now();
      const table = tables[job.kind];
      const dueMs = at + Math.max(0, inMs);
      const nextAt = new Date(dueMs).toISOString();
      // A queued one keeps its payload and lease; only its due time may move sooner.
      const moved = await commit(dbs, () => {
        const stored = table.get(job.userId, key);
        if (stored === undefined) table.put({ kind: job.kind, userId: job.userId, key, payload: job.payload, queuedAt: new Date(at).toISOString(), attempts: 0, nextAt } as Job);
        else if ((stored.nextAt === undefined ? Date.parse(stored.queuedAt) : Date.parse(stored.nextAt)) > dueMs) table.put({ ...stored, nextAt });
        else return false;
        return true;
      });
      if (moved) indexOf(job.kind).set(id(job.kind, job.userId, key), dueMs, job.userId);
    },
    async reschedule(job, payload, inMs) {
      const jobId = id(job.kind, job.userId, job.key);
      if (leases.get(jobId)?.token !== job.token) return;
      const dueMs = now() + Math.max(0, inMs);
      const table = tables[job.kind];
      const kept = await commit(dbs, () => {
        const stored = table.get(job.userId, job.key);
        if (stored === undefined) return false;
        const { lastError: _e, ...rest } = stored;
        table.put({ ...rest, payload, attempts: 0, nextAt: new Date(dueMs).toISOString() } as Job);
        return true;
      });
      leases.delete(jobId);
      if (kept) due[job.kind]?.set(jobId, dueMs, job.userId);
    },
    async purgeDead(kind, before) {
      const table = tables[kind];
      return commitRemoval(dbs, () => {
        let n = 0;
        for (const job of [...table.scanDead()]) {
          if (job.deadAt < before) {
            table.removeDead(job.userId, job.key);
            n++;
          }
        }
        return n;
      });
    },
  };
  return queue;
}

function dueAt(job: Pick<Job, 'nextAt'>): number {
  return job.nextAt === undefined ? 0 : Date.parse(job.nextAt);
}

/**
 * Due times of one kind's jobs, in memory (epoch ms; 0: due now). A lease reads the due ones
 * from here, not from LMDB: a pass over numbers in memory, whatever the queue's length.
 */
class DueIndex {
  private readonly at = new Map<string, { due: number; userId: string }>();

  set(id: string, due: number, userId: string): void {
    this.at.set(id, { due, userId });
  }

  delete(id: string): void {
    this.at.delete(id);
  }

  dropUser(userId: string): void {
    for (const [id, v] of this.at) if (v.userId === userId) this.at.delete(id);
  }

  earliest(): number | undefined {
    let min: number | undefined;
    for (const { due } of this.at.values()) if (min === undefined || due < min) min = due;
    return min;
  }

  /** Ids due at or before `t`, earliest first (ties in id order). */
  dueBy(t: number): string[] {
    return [...this.at]
      .filter(([, v]) => v.due <= t)
      .sort((a, b) => a[1].due - b[1].due || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
      .map(([id]) => id);
  }
}

function range(userId?: string): { start: Key; end: Key } {
  return userId === undefined ? { start: [''], end: [HIGH] } : { start: [userId], end: [userId, HIGH] };
}

function extractTable(dbs: RecallDbs): KindTable {
  const split = (key: string): [string, number] => {
    const at = key.lastIndexOf('/');
    return [key.slice(0, at), Number(key.slice(at + 1))];
  };
  return {
    *scan(userId) {
      for (const { key, value } of dbs.factQueue.getRange(range(userId))) yield toExtractJob(key[0], key[1], key[2], value);
    },
    *scanDead(userId) {
      for (const { key, value } of dbs.factDead.getRange(range(userId))) {
        yield { ...toExtractJob(key[0], key[1], key[2], value), lastError: value.last_error, deadAt: value.dead_at };
      }
    },
    get(userId, key) {
      const [sessionId, replyId] = split(key);
      const value = dbs.factQueue.get([userId, sessionId, replyId]);
      return value === undefined ? undefined : toExtractJob(userId, sessionId, replyId, value);
    },
    put(job) {
      const [sessionId, replyId] = split(job.key);
      dbs.factQueue.put([job.userId, sessionId, replyId], fromExtractJob(job as Job<'extract'>) satisfies StoredExtractionJob);
    },
    remove(userId, key) {
      const [sessionId, replyId] = split(key);
      dbs.factQueue.remove([userId, sessionId, replyId]);
    },
    putDead(job) {
      const [sessionId, replyId] = split(job.key);
      const value: StoredDeadExtractionJob = { ...fromExtractJob(job as Job<'extract'>), attempts: job.attempts, last_error: job.lastError, dead_at: job.deadAt };
      dbs.factDead.put([job.userId, sessionId, replyId], value);
    },
    removeDead(userId, key) {
      const [sessionId, replyId] = split(key);
      dbs.factDead.remove([userId, sessionId, replyId]);
    },
    countDead: () => dbs.factDead.getCount(),
  };
}

function embedTable(dbs: RecallDbs, clock: WallClock): KindTable {
  const itemKey = (userId: string, key: string): ItemKey => [userId, key[0] as 'd' | 'f', Number(key.slice(2))];
  const toJob = (key: ItemKey, value: QueueEntry): Job<'embed'> => ({
    kind: 'embed',
    userId: key[0],
    key: `${key[1]}:${key[2]}`,
    payload: { item: key[1], id: key[2] },
    queuedAt: '',
    attempts: value.attempts,
    ...(value.error === undefined ? {} : { lastError: errorOf(value.error) }),
    ...(value.next_at === undefined ? {} : { nextAt: value.next_at }),
  });
  return {
    *scan(userId) {
      for (const { key, value } of dbs.embed.queue.getRange(range(userId))) yield toJob(key, value);
    },
    *scanDead(userId) {
      for (const { key, value } of dbs.embed.dead.getRange(range(userId))) {
        yield { ...toJob(key, { attempts: value.attempts }), lastError: errorOf(value.error), deadAt: new Date(value.at).toISOString() };
      }
    },
    get(userId, key) {
      const k = itemKey(userId, key);
      const value = dbs.embed.queue.get(k);
      return value === undefined ? undefined : toJob(k, value);
    },
    put(job) {
      const entry: QueueEntry = { attempts: job.attempts, ...(job.lastError === undefined ? {} : { error: job.lastError }), ...(job.nextAt === undefined ? {} : { next_at: job.nextAt }) };
      dbs.embed.queue.put(itemKey(job.userId, job.key), entry);
    },
    remove(userId, key) {
      dbs.embed.queue.remove(itemKey(userId, key));
    },
    putDead(job) {
      const entry: DeadEntry = { attempts: job.attempts, error: job.lastError, at: Date.parse(job.deadAt) || clock.now() };
      dbs.embed.dead.put(itemKey(job.userId, job.key), entry);
    },
    removeDead(userId, key) {
      dbs.embed.dead.remove(itemKey(userId, key));
    },
    countDead: () => dbs.embed.dead.getCount(),
  };
}

/** An embedding failure as stored: older versions kept the endpoint's text, now shown by its code alone. */
function errorOf(e: ErrorRecord | string): ErrorRecord {
  return typeof e === 'string' ? { code: 'embeddings_failed', message: 'the embeddings endpoint failed' } : e;
}

function jobsTable(db: Database<StoredJob, Key>, kind: JobKind): KindTable {
  const dead = `${kind}!`;
  const toJob = (userId: string, key: string, v: StoredJob): Job => ({
    kind,
    userId,
    key,
    payload: v.payload,
    queuedAt: v.queued_at,
    attempts: v.attempts ?? 0,
    ...(v.last_error === undefined ? {} : { lastError: v.last_error }),
    ...(v.next_at === undefined ? {} : { nextAt: v.next_at }),
  } as Job);
  const fromJob = (job: Job): StoredJob => ({
    payload: job.payload,
    queued_at: job.queuedAt,
    ...(job.attempts > 0 ? { attempts: job.attempts } : {}),
    ...(job.lastError === undefined ? {} : { last_error: job.lastError }),
    ...(job.nextAt === undefined ? {} : { next_at: job.nextAt }),
  });
  function* scanOf(name: string, userId?: string): Generator<{ userId: string; key: string; value: StoredJob }> {
    if (userId !== undefined) {
      for (const { key, value } of db.getRange({ start: [userId, name], end: [userId, name, HIGH] })) yield { userId, key: (key as string[])[2]!, value };
      return;
    }
    // Every user: hop from user to user (the kind is the second key part).
    let from: Key = [''];
    for (;;) {
      const next = [...db.getKeys({ start: from, end: [HIGH], limit: 1 })][0] as string[] | undefined;
      if (next === undefined) return;
      const user = next[0]!;
      yield* scanOf(name, user);
      from = [user, HIGH];
    }
  }
  return {
    *scan(userId) {
      for (const { userId: u, key, value } of scanOf(kind, userId)) yield toJob(u, key, value);
    },
    *scanDead(userId) {
      for (const { userId: u, key, value } of scanOf(dead, userId)) yield { ...toJob(u, key, value), lastError: value.last_error ?? { code: 'job_failed', message: 'the job failed' }, deadAt: value.dead_at ?? '' };
    },
    get(userId, key) {
      const value = db.get([userId, kind, key]);
      return value === undefined ? undefined : toJob(userId, key, value);
    },
    put: (job) => void db.put([job.userId, kind, job.key], fromJob(job)),
    remove: (userId, key) => void db.remove([userId, kind, key]),
    putDead: (job) => void db.put([job.userId, dead, job.key], { ...fromJob(job), last_error: job.lastError, dead_at: job.deadAt }),
    removeDead: (userId, key) => void db.remove([userId, dead, key]),
    countDead: () => {
      let n = 0;
      for (const _ of scanOf(dead)) n++;
      return n;
    },
  };
}

