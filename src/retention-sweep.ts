import type { Database, Key, RootDatabase } from 'lmdb';
import { InvalidInputError } from './errors.ts';
import type { MessageLog } from './memory/contract/message-log.ts';
import type { ConditionalClear } from './memory/contract/conditional-clear.ts';
import type { ConversationTtls } from './memory/lmdb/conversation-ttl.ts';
import { MESSAGES_DB } from './memory/lmdb/lmdb-table.ts';
import { SUMMARY_ID_PREFIX, summaryConversationId } from './provider/summary-record.ts';
import { sessionConversationId } from './recall/recall-ids.ts';
import { DB_NAMES, HIGH } from './recall/storage/lmdb/recall-dbs.ts';
import type { WallClock } from './wall-clock.ts';

/**
 * One tick of the retention sweep (the sweeper process, retention-sweeper.ts, runs one
 * every `sweepEveryMs`; `runtime.retention.sweep()` runs one now).
 *
 * A conversation EXPIRES when its last record's `ts` (stamped by the runtime's wall clock on
 * every append) is older than its TTL: its override (`runtime.retention.setTtl`, `null` =
 * never) or else `idleTtlMs`. Last activity costs one reverse seek (`tail(1)`), so nothing
 * is written on the append path for retention.
 *
 * Two walks, each with a cursor kept in memory (a restarted sweeper starts over; the walk
 * wraps around at the end), each examining at most `perTick` items per tick, so a tick's cost
 * is bounded whatever the data's size:
 * - the MessageLog's conversations, by a seek to the next conversation id in the `messages`
 *   db. An expired one is cleared through the runtime's memory (its actor), with its summaries'
 *   companion. The ranges of recall's sessions (`session/`, `session#`) and of summary
 *   companions (`mnemo.summary`) are jumped over in one seek each: they go with their owners.
 * - recall's sessions (when the runtime has recall), by the sessions index `[user, session]`.
 *   An expired session is deleted as `deleteSession` deletes it: transcript, summaries, daily
 *   rows, log rows, index entry, and so it leaves search. A session with no transcript is
 *   left alone.
 *
 * The check and the clear are one step: an expired conversation is cleared on condition that
 * its last id is still the one the walk read (`clearIfLastId`: through the conversation's actor,
 * after every write queued before it, with no write of that conversation in between), so a
 * write landing at any point after the walk read the conversation keeps it. A session's
 * transcript is cleared under the same condition before the rest of the session is deleted.
 */
export interface RetentionOptions {
  /** An idle conversation (no append for this long) expires; a positive integer of ms. Required. */
  idleTtlMs: number;
  /** Items each walk examines per tick (the bound on a tick's cost). Default 1000. */
  perTick?: number;
  /** Time between ticks. Default 60 000 ms. */
  sweepEveryMs?: number;
  /** What "now" is. Default: the runtime's `wallClock`. */
  clock?: WallClock;
}

/** What one tick of the retention sweep did (`runtime.retention.sweep()`). */
export interface SweepReport {
  /** Conversations and sessions looked at in this tick. */
  examined: number;
  /** MessageLog conversations cleared. */
  cleared: string[];
  /** Recall sessions deleted, `[userId, sessionId]`. */
  deletedSessions: Array<[string, string]>;
  /** True when a walk reached its end in this tick (the next tick starts it over). */
  wrapped: boolean;
  /** Clears or deletes that failed (storage, or the user being erased): tried again on a later pass. */
  failed: number;
}

export interface SweepDeps {
  root: () => RootDatabase;
  /** The runtime's memory; `clearIfLastId` is the sweep's clear (conditional-clear.ts). */
  memory: MessageLog & ConditionalClear;
  ttls: ConversationTtls;
  /**
   * Deletes a recall session if its transcript's last id is still `ifLastId` (whether it did);
   * undefined: the runtime has no recall, sessions are not swept.
   */
  deleteSession: ((userId: string, sessionId: string, ifLastId: number) => Promise<boolean>) | undefined;
}

export const DEFAULT_PER_TICK = 1000;
export const DEFAULT_SWEEP_EVERY_MS = 60_000;

export function resolveRetentionOptions(options: RetentionOptions): Required<Omit<RetentionOptions, 'clock'>> {
  const positive = (name: string, value: unknown) => {
    if (!(typeof value === 'number' && Number.isSafeInteger(value) && value > 0)) {
      throw new InvalidInputError('invalid_option', `retention.${name} must be a positive integer, got ${String(value)}`, { option: `retention.${name}` });
    }
  };
  positive('idleTtlMs', options?.idleTtlMs);
  const perTick = options.perTick ?? DEFAULT_PER_TICK;
  const sweepEveryMs = options.sweepEveryMs ?? DEFAULT_SWEEP_EVERY_MS;
  positive('perTick', perTick);
  positive('sweepEveryMs', sweepEveryMs);
  return { idleTtlMs: options.idleTtlMs, perTick, sweepEveryMs };
}

/** The conversation-id ranges the first walk jumps over: [first id of the range, jump target]. */
const SKIPPED = ['session#', 'session/', SUMMARY_ID_PREFIX];

export function createRetentionSweep(deps: SweepDeps, options: { idleTtlMs: number; perTick: number; clock: WallClock }) {
  let conversationCursor: string | undefined;
  let sessionCursor: [string, string] | undefined;

  const ttlOf = (c: string): number | null => {
    const override = deps.ttls.get(c);
    return override === undefined ? options.idleTtlMs : override;
  };
  /** `c`'s last id if its last record is older than its TTL now (undefined: not expired, or empty). */
  const expiredAt = async (c: string): Promise<number | undefined> => {
    const ttl = ttlOf(c);
    if (ttl === null) return undefined;
    const [last] = await deps.memory.tail(c, 1);
    if (last === undefined) return undefined;
    const at = Date.parse(last.ts);
    return Number.isFinite(at) && options.clock.now() - at > ttl ? last.message_id : undefined;
  };

  async function walkConversations(report: SweepReport): Promise<void> {
    const messages = deps.root().openDB<unknown, Key>(MESSAGES_DB, {});
    for (let looked = 0; looked < options.perTick; ) {
      const c = nextConversation(messages, conversationCursor);
      if (c === undefined) {
        conversationCursor = undefined;
        report.wrapped = true;
        return;
      }
      const skip = SKIPPED.find((p) => c.startsWith(p));
      conversationCursor = skip === undefined ? c : skip + HIGH;
      looked++;
      report.examined++;
      if (skip !== undefined) continue;
      const lastId = await expiredAt(c);
      if (lastId !== undefined) {
        try {
          // Kept if anything was written since the read above.
          if (!(await deps.memory.clearIfLastId(c, lastId))) continue;
          await deps.memory.clear(summaryConversationId(c));
          await deps.ttls.set(c, undefined);
          report.cleared.push(c);
        } catch {
          report.failed++;
        }
      }
    }
  }

  async function walkSessions(report: SweepReport, deleteSession: (u: string, s: string, ifLastId: number) => Promise<boolean>): Promise<void> {
    const sessions = deps.root().openDB<unknown, [string, string]>(DB_NAMES.sessions, { encoding: 'json' });
    const range = sessionCursor === undefined ? { limit: options.perTick } : { start: [sessionCursor[0], sessionCursor[1], HIGH], limit: options.perTick };
    const batch = [...sessions.getKeys(range)];
    if (batch.length < options.perTick) report.wrapped = true;
    sessionCursor = batch.length < options.perTick ? undefined : batch.at(-1);
    for (const [userId, sessionId] of batch) {
      report.examined++;
      const c = sessionConversationId(userId, sessionId);
      const lastId = await expiredAt(c);
      if (lastId !== undefined) {
        try {
          if (!(await deleteSession(userId, sessionId, lastId))) continue;
          await deps.ttls.set(c, undefined);
          report.deletedSessions.push([userId, sessionId]);
        } catch {
          report.failed++;
        }
      }
    }
  }

  return {
    async tick(): Promise<SweepReport> {
      const report: SweepReport = { examined: 0, cleared: [], deletedSessions: [], wrapped: false, failed: 0 };
      await walkConversations(report);
      if (deps.deleteSession !== undefined) await walkSessions(report, deps.deleteSession);
      return report;
    },
  };
}

/** The first conversation id after `after` (from the start when undefined): one seek. */
function nextConversation(messages: Database<unknown, Key>, after: string | undefined): string | undefined {
  for (const key of messages.getKeys(after === undefined ? { limit: 1 } : { start: [after, HIGH], limit: 1 })) {
    if (Array.isArray(key) && typeof key[0] === 'string') return key[0];
  }
  return undefined;
}
