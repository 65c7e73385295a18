import { hasConditionalClear } from '../../../memory/contract/conditional-clear.ts';
import { ForkError } from '../../../memory/contract/fork.ts';
import type { AppendOptions } from '../../../memory/contract/message-log.ts';
import type { StoredMessage } from '../../../message.ts';
import { summaryConversationId } from '../../../provider/summary-record.ts';
import { sessionConversationId } from '../../recall-ids.ts';
import type { SessionEntry, TurnKeyRecord } from '../../records/records.ts';
import type { TurnAppend, TurnAppended, WriteGuard } from '../recall-store.ts';
import { catchUpDaily, forgetMirror, mirrorSessionRow, rowsPending, rowsSettled, startMirror } from './daily-mirror.ts';
import { removeSessionDailyRows } from './daily-store.ts';
import { putLogRow } from './dialogue-log.ts';
import type { LmdbContext } from './lmdb-context.ts';
import { checkGuard, incarnationTx } from './write-guards.ts';
import { commit, commitRemoval, HIGH, type RecallDbs } from './recall-dbs.ts';
import { fromDailyRecord, fromLogRecord, toSessionEntry } from './record-codec.ts';
import { removeSessionDocs } from './session-docs.ts';
import { forkSummaries } from './lmdb-summaries.ts';
import { registerSession, removeSession, sessionEntry, touchSession } from './sessions-index.ts';

/**
 * The session write paths of the LMDB adapter: a turn's rows with what they imply, titles,
 * forks, deletion. One process owns the directory, so a session's turns are serialized by an
 * in-process lock (keyed-locks.ts), and the erasure guard is a per-user incarnation
 * (write-guards.ts).
 *
 * A turn's rows commit with their side writes in ONE transaction (one fsync): the side writes
 * are issued as a recall transaction from the append's `onNumbered` hook, in the event turn of
 * the rows' write, so lmdb-js commits and flushes both together (the transcripts are the LMDB
 * store of the same environment). A keyed append answered from its stored key (a retry) does
 * not call the hook: the side writes then commit on their own, given the stored records, and
 * skip what is there already (a mirrored row by its session message id).
 */
export async function appendTurn(ctx: LmdbContext, a: TurnAppend, guard: WriteGuard | undefined): Promise<TurnAppended> {
  const { dbs } = ctx;
  const { userId, sessionId } = a;
  checkGuard(ctx, userId, guard);
  // A session row a crash left out of the daily view is mirrored first (no commit when none).
  if (a.opens !== undefined && sessionEntry(dbs, userId, sessionId) !== undefined) await catchUpDaily(ctx, userId, sessionId);
  let incarnation = guard?.incarnation;
  let touched: SessionEntry | undefined;
  const sideWrites = (records: readonly StoredMessage[]): void => {
    incarnation = incarnationTx(dbs, userId);
    if (a.opens !== undefined) {
      if (!sessionEntry(dbs, userId, sessionId)) {
        registerSession(dbs, userId, sessionId, a.opens.now);
        startMirror(dbs, userId, sessionId);
      }
      // Marked in flight: a start after a kill mirrors what the turn left (daily-mirror.ts).
      rowsPending(dbs, userId, sessionId);
    }
    const side = a.with(records);
    for (const row of side.daily) {
      if (row.sessionMessageId === null) continue;
      mirrorSessionRow(dbs, userId, sessionId, { day: row.day, ...fromDailyRecord(row), session_message_id: row.sessionMessageId });
    }
    if (side.log !== undefined) putLogRow(dbs, userId, sessionId, fromLogRecord(side.log, 0));
    if (side.settles) rowsSettled(dbs, userId, sessionId);
    const at = new Date(ctx.clock.now()).toISOString();
    for (const job of side.jobs ?? []) ctx.queue.enqueueTx(job, at);
    if (side.turnKey !== undefined) dbs.turnKeys.put([userId, sessionId, side.turnKey.key], side.turnKey.value);
    if (side.touch !== undefined) touched = toSessionEntry(sessionId, touchSession(dbs, userId, sessionId, side.touch.title, side.touch.updatedAt));
  };
  let riding: Promise<void> | undefined;
  const options: AppendOptions = {
    ...(a.idempotencyKey === undefined ? {} : { idempotencyKey: a.idempotencyKey }),
    traceContext: a.traceContext,
    onNumbered: (records) => {
      riding = commit(dbs, () => sideWrites(records));
      // Awaited below; this only keeps a rejection seen before then from being unhandled.
      riding.catch(() => undefined);
    },
  };
  let records: StoredMessage[];
  try {
    records = await ctx.memory.append(sessionConversationId(userId, sessionId), a.entries, options);
  } catch (error) {
    if (riding !== undefined) await riding.catch(() => undefined);
    throw error;
  }
  await (riding ?? commit(dbs, () => sideWrites(records)));
  return { records, ...(touched === undefined ? {} : { session: touched }), guard: { ...guard, ...(incarnation === undefined ? {} : { incarnation }) } };
}

export async function touch(ctx: LmdbContext, userId: string, sessionId: string, change: { title: string; updatedAt: string }, guard: WriteGuard | undefined): Promise<SessionEntry> {
  checkGuard(ctx, userId, guard);
  return commit(ctx.dbs, () => {
    incarnationTx(ctx.dbs, userId);
    return toSessionEntry(sessionId, touchSession(ctx.dbs, userId, sessionId, change.title, change.updatedAt));
  });
}

export async function fork(ctx: LmdbContext, userId: string, f: { sourceId: string; messageId: number; targetId: string; title: string; now: string }): Promise<void> {
  const { dbs } = ctx;
  if (sessionEntry(dbs, userId, f.targetId) !== undefined) {
    throw new ForkError('fork_target_exists', `session ${f.targetId} already exists`, { sessionId: f.targetId });
  }
  const source = sessionConversationId(userId, f.sourceId);
  const target = sessionConversationId(userId, f.targetId);
  await ctx.memory.fork(source, f.messageId, target);
  await forkSummaries(ctx, source, f.messageId, target);
  await commit(dbs, () => {
    incarnationTx(dbs, userId);
    registerSession(dbs, userId, f.targetId, f.now);
    // The prefix is the source's rows, already in the daily view: mirror only what comes after.
    startMirror(dbs, userId, f.targetId, f.messageId);
    const entry = touchSession(dbs, userId, f.targetId, f.title, f.now);
    dbs.sessions.put([userId, f.targetId], { ...entry, fork: { session_id: f.sourceId, message_id: f.messageId } });
  });
}

export async function deleteSession(ctx: LmdbContext, userId: string, sessionId: string, ifLastId: number | undefined): Promise<'deleted' | 'missing' | 'changed'> {
  // No summary of the session is appended while it is deleted (lmdb-summaries.ts).
  const release = await ctx.userLocks.lock(userId);
  try {
    return await deleteUnlocked(ctx, userId, sessionId, ifLastId);
  } finally {
    await release();
  }
}

async function deleteUnlocked(ctx: LmdbContext, userId: string, sessionId: string, ifLastId: number | undefined): Promise<'deleted' | 'missing' | 'changed'> {
  const { dbs, memory } = ctx;
  const conversationId = sessionConversationId(userId, sessionId);
  const existed = sessionEntry(dbs, userId, sessionId) !== undefined || (await memory.lastId(conversationId)) > 0;
  // The transcript first: if the index step fails, a retry finds the entry and finishes.
  if (ifLastId === undefined) await memory.clear(conversationId);
  else if (!hasConditionalClear(memory)) throw new TypeError('the LMDB adapter needs a transcript store with clearIfLastId');
  else if (!(await memory.clearIfLastId(conversationId, ifLastId))) return 'changed';
  await memory.clear(summaryConversationId(conversationId));
  const removed = await commitRemoval(dbs, () => {
    const entry = sessionEntry(dbs, userId, sessionId);
    if (entry !== undefined) removeSessionDocs(dbs, userId, entry.order);
    const n = removeSessionDailyRows(dbs, userId, sessionId);
    forgetMirror(dbs, userId, sessionId);
    for (const key of [...dbs.log.getKeys({ start: [userId, sessionId], end: [userId, sessionId, HIGH] })]) dbs.log.remove(key);
    for (const key of [...dbs.turnKeys.getKeys({ start: [userId, sessionId], end: [userId, sessionId, HIGH] })]) dbs.turnKeys.remove(key);
    removeSession(dbs, userId, sessionId);
    return n;
  });
  return existed || removed > 0 ? 'deleted' : 'missing';
}

export function turnKey(ctx: LmdbContext, userId: string, sessionId: string, key: string): TurnKeyRecord | undefined {
  return ctx.dbs.turnKeys.get([userId, sessionId, key]);
}
