import type { TraceContext } from '../../../telemetry/tracing.ts';
import { latestSummary, listSummaries, summaryConversationId, summaryEntry, toSummaryRecord, type NewSummary, type SummaryRecord } from '../../../provider/summary-record.ts';
import { sessionConversationId } from '../../recall-ids.ts';
import type { WriteGuard } from '../recall-store.ts';
import { StaleWriteError } from '../stale-write-error.ts';
import type { LmdbContext } from './lmdb-context.ts';
import { checkGuard } from './write-guards.ts';
import { sessionEntry } from './sessions-index.ts';

/**
 * The rolling summaries of the LMDB adapter (recall-store.ts `appendSummary`, and what
 * `forkSession` carries over). A summary is a record of the session's companion conversation in
 * the LMDB message store, appended through it (its actor numbers the record), so its checks
 * cannot sit inside that append's transaction. One process owns the directory, so they are made
 * atomic with what could undo them by a per-user lock in memory (`ctx.userLocks`): the summary's
 * checks and append hold it, and so do the user's erasure and every session deletion. An
 * erasure or deletion either ran before (the checks then fail: the incarnation is gone, the
 * entry is gone or another) or runs after (and removes the summary with the rest).
 */
export async function appendSummary(
  ctx: LmdbContext,
  userId: string,
  sessionId: string,
  summary: NewSummary,
  guard: WriteGuard & { sessionOrder: number },
  traceContext?: TraceContext,
): Promise<SummaryRecord | undefined> {
  const release = await ctx.userLocks.lock(userId);
  try {
    checkGuard(ctx, userId, guard);
    if (sessionEntry(ctx.dbs, userId, sessionId)?.order !== guard.sessionOrder) throw new StaleWriteError('session_gone', userId);
    const conversationId = sessionConversationId(userId, sessionId);
    if (((await latestSummary(ctx.memory, conversationId))?.id ?? null) !== summary.previous) return undefined;
    const [stored] = await ctx.memory.append(summaryConversationId(conversationId), [summaryEntry(summary)], { traceContext });
    return toSummaryRecord(stored!);
  } finally {
    await release();
  }
}

/**
 * After `source` was forked at `messageId` into `target`: the target's companion becomes a fork
 * of the source's, at the last summary that covers no row after `messageId` (none: left empty).
 */
export async function forkSummaries(ctx: LmdbContext, source: string, messageId: number, target: string): Promise<void> {
  let at = 0;
  for (const summary of await listSummaries(ctx.memory, source)) {
    if (summary.to > messageId) break;
    at = summary.id;
  }
  if (at > 0) await ctx.memory.fork(summaryConversationId(source), at, summaryConversationId(target));
}
