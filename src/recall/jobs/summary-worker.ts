import { errorRecord } from '../../errors.ts';
import { languageOf } from '../../language.ts';
import type { LlmService } from '../../llm/llm-service.ts';
import { createSummarizer, type Summarizer } from '../../provider/summarizer.ts';
import type { WallClock } from '../../wall-clock.ts';
import type { RecallDeps, SummaryEngine } from '../recall-deps.ts';
import { sessionConversationId } from '../recall-ids.ts';
import type { UserGate } from '../user-gate.ts';
import { createJobWorker, DEFAULT_RETRY, type JobWorker } from './job-worker.ts';

/**
 * The rolling summaries of recall's sessions in the background: the job worker
 * (jobs/job-worker.ts) on the `summarize` jobs, one at a time, tracked by the service.
 *
 * - A job is queued in the commit of the reply of a turn that found its session due (the part
 *   before the last `keepLast` turns and after the latest summary passes `maxTokens`), so a
 *   kill never loses it; re-queued by a later due turn while it waits or runs, it is one job.
 * - It runs the summarizer's check (provider/summarizer.ts, over the session's conversation;
 *   a backlog longer than 4 × `maxTokens`, a session older than its summaries, catches up with
 *   its newest part only, one model call):
 *   summaries in the language of the session's last user message (recall's `language`, whose
 *   `'auto'` resolves there), by the summary model, else extractive. Each is stored through
 *   the store's `appendSummary`, guarded by the turn's incarnation and the session's entry, so
 *   none is stored after the user's erasure or the session's deletion (`StaleWriteError`: the
 *   job is gone with them), nor over a summary another process stored first.
 * - Erasure: the user gate aborts the model call at once (user-gate.ts `lease`).
 * - A failed job (the model, the store) is retried with backoff (5 attempts from 2 s), then
 *   dead-lettered; the next due turn queues it afresh. Its `lastError` keeps Mnemo's sentence;
 *   the whole error goes to one `console.warn` line.
 */

export function createSummaryWorker(
  deps: RecallDeps & { summary: SummaryEngine },
  track: <T>(work: () => Promise<T>) => Promise<T>,
  gate: Pick<UserGate, 'lease'>,
): JobWorker {
  const { summary } = deps;
  return createJobWorker({
    queue: deps.store.jobs,
    kind: 'summarize',
    retry: DEFAULT_RETRY,
    track,
    errorOf: (error) => {
      warn(error);
      return errorRecord(error, 'summary_failed');
    },
    async run([job], signal) {
      const { userId, payload } = job!;
      let userLease;
      try {
        userLease = gate.lease(userId);
      } catch {
        return ['gone']; // the user is being erased: the job goes with them
      }
      try {
        const entry = await deps.store.session(userId, payload.sessionId);
        if (entry === undefined) return ['done']; // deleted since: nothing to summarize
        const conversationId = sessionConversationId(userId, payload.sessionId);
        const lastUser = (await deps.memory.tail(conversationId, 2 * summary.keepLast + 2)).findLast((r) => r.message.role === 'user');
        const said = typeof lastUser?.message.content === 'string' ? lastUser.message.content : '';
        const guard = { ...(payload.incarnation === undefined ? {} : { incarnation: payload.incarnation }), sessionOrder: entry.order };
        const summarizer = createSummarizer(deps.memory, {
          keepLast: summary.keepLast,
          maxTokens: summary.maxTokens,
          ...(summary.llm === undefined ? {} : { llm: summary.llm }),
          ...(summary.clock === undefined ? {} : { clock: summary.clock }),
          language: languageOf(deps.language, said),
          // A long backlog (a session older than its summaries) costs one summary, not one per step.
          catchUp: 'newest',
          append: (_id, made, trace) => deps.store.appendSummary(userId, payload.sessionId, made, guard, trace),
        });
        await summarizer.check(conversationId, { signal: AbortSignal.any([signal, userLease.signal]) });
        return ['done'];
      } finally {
        userLease.release();
      }
    },
  });
}

function warn(error: unknown): void {
  const { code, message } = errorRecord(error, 'summary_failed');
  console.warn(`mnemo: a session summary failed (${code}): ${message}; it is retried`);
}
