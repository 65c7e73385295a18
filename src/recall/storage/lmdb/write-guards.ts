import type { WriteGuard } from '../recall-store.ts';
import { StaleWriteError } from '../stale-write-error.ts';
import type { LmdbContext } from './lmdb-context.ts';
import type { RecallDbs } from './recall-dbs.ts';

/** node:crypto loads on first use: it is ~25 ms of a cold import (docs/performance-history.md). */
const crypto = () => process.getBuiltinModule('node:crypto');

/**
 * The LMDB adapter's write guards (recall-store.ts `WriteGuard`): the erasure guard is a per-user
 * random incarnation key (`[userId, 'incarnation']` in `recall.counters`) that the user's first
 * write makes and an erasure removes with everything else, so a guard taken before an erasure
 * fails after it; a job's guard is its lease in the job queue.
 */
const INCARNATION = 'incarnation';

/** Inside a write transaction: the user's incarnation, made by their first write. */
export function incarnationTx(dbs: RecallDbs, userId: string): string {
  const key = [userId, INCARNATION];
  const held = dbs.counters.get(key) as unknown;
  if (typeof held === 'string') return held;
  const made = crypto().randomUUID();
  (dbs.counters as unknown as { put(k: string[], v: string): void }).put(key, made);
  return made;
}

/** The user's incarnation, `undefined` before their first write (or after an erasure). */
export function incarnationOf(dbs: RecallDbs, userId: string): string | undefined {
  const held = dbs.counters.get([userId, INCARNATION]) as unknown;
  return typeof held === 'string' ? held : undefined;
}

/** Whether `guard` still holds (read outside a transaction: one process, the gate serializes erasures). */
export function checkGuard(ctx: LmdbContext, userId: string, guard: WriteGuard | undefined): void {
  if (guard?.incarnation !== undefined && incarnationOf(ctx.dbs, userId) !== guard.incarnation) {
    throw new StaleWriteError('erased', userId);
  }
  if (guard?.job !== undefined && !ctx.queue.heldTx(guard.job)) throw new StaleWriteError('lease_lost', userId);
}

