import { InvalidInputError } from '../errors.ts';
import { SUMMARY_ID_PREFIX } from '../provider/summary-record.ts';
import { sessionConversationId } from '../recall/recall-ids.ts';
import type { SweepPayload } from '../recall/storage/job-queue.ts';
import type { WallClock } from '../wall-clock.ts';

/**
 * One tick of the retention sweep (the sweeper process, retention-sweeper.ts, runs one
 * every `sweepEveryMs`; `runtime.retention.sweep()` runs one now).
 *
 * A conversation EXPIRES when its last record's `ts` (stamped by the runtime's wall clock on
 * every append) is older than its TTL: its override (`runtime.retention.setTtl`, `null` =
 * never) or else `idleTtlMs`. Last activity costs one reverse seek (`tail(1)`), so nothing
 * is written on the append path for retention.
 *
 * The rules are here; what they read and clear is a port (`RetentionStorage`, one adapter per
 * engine), and where a tick resumes is a cursor the caller keeps (the sweeper, retention-
 * sweeper.ts: in its memory on LMDB, whose directory one process owns; in the one recurring
 * `sweep` job of recall's queue on PostgreSQL, so that of many processes on one database one
 * runs each round, under its lease, from where the last round stopped).
 *
 * Two walks, each wrapping around at its end and examining at most `perTick` items per tick, so
 * a tick's cost is bounded whatever the data's size:
 * - the MessageLog's conversations, by a seek to the next conversation id. An expired one is
 *   cleared with its summaries' companion. The ranges of recall's sessions (`session/`,
 *   `session#`) and of summary companions (`mnemo.summary`) are jumped over in one seek each:
 *   they go with their owners.
 * - recall's sessions (when the runtime has recall), by the sessions index `[user, session]`.
 *   An expired session is deleted as `deleteSession` deletes it: transcript, summaries, daily
 *   rows, log rows, index entry, and so it leaves search. A session with no transcript is
 *   left alone. It goes through recall's gate, so a user being erased is not touched (the
 *   delete fails, counted in `failed`), and on PostgreSQL it takes the user's row lock, so it
 *   runs wholly before an erasure or finds nothing after it.
 *
 * The check and the clear are one step: an expired conversation is cleared on condition that
 * its last id is still the one the walk read (`clearIfLastId`: in the conversation's actor on
 * LMDB, under its counter row's lock on PostgreSQL), so a write landing at any point after the
 * walk read the conversation keeps it. A session's transcript is cleared under the same
 * condition before the rest of the session is deleted.
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

/** Where each walk resumes (absent: from the start): a recurring sweep job's payload (job-queue.ts). */
export type SweepCursor = SweepPayload;

/**
 * What the sweep reads and clears, one adapter per engine (src/recall/storage/lmdb/lmdb-retention.ts,
 * src/recall/storage/postgres/pg-retention.ts): the domain's rules above never see a database.
 */
export interface RetentionStorage {
  /** The first conversation id after `after` in the store's order (from the start when undefined): one seek. */
  conversationAfter(after: string | undefined): Promise<string | undefined>;
  /** The conversation's last record (its id and `ts`); undefined when it is empty. */
  last(conversationId: string): Promise<{ id: number; ts: string } | undefined>;
  /**
   * Clears the conversation and its summaries' companion if its last id is still `lastId`,
   * decided where no write of it can land between the check and the clear; whether it did.
   */
  clearIfLastId(conversationId: string, lastId: number): Promise<boolean>;
  /** Up to `limit` recall sessions after `after` (from the start when undefined), in `[user, session]` order. */
  sessionsAfter(after: readonly [string, string] | undefined, limit: number): Promise<Array<[string, string]>>;
}

/** Per-conversation TTL overrides (`runtime.retention.setTtl`): `null` never expires; undefined: the default. */
export interface TtlOverrides {
  get(conversationId: string): number | null | undefined | Promise<number | null | undefined>;
  set(conversationId: string, ms: number | null | undefined): Promise<void>;
}

export interface SweepDeps {
  storage: RetentionStorage;
  ttls: TtlOverrides;
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

/** The conversation-id ranges the first walk jumps over (they go with their owners). */
const SKIPPED = ['session#', 'session/', SUMMARY_ID_PREFIX];
/** No id holds U+10FFFF (a noncharacter): `prefix + HIGH` sorts after every id of the range. */
const HIGH = '\u{10FFFF}';

/**
 * One tick from `from`: the report and where the next tick resumes. The cursor is the caller's
 * to keep (in memory on one process, in the sweep job's payload on a shared database).
 */
export function createRetentionSweep(deps: SweepDeps, options: { idleTtlMs: number; perTick: number; clock: WallClock }) {
  const ttlOf = async (c: string): Promise<number | null> => {
    const override = await deps.ttls.get(c);
    return override === undefined ? options.idleTtlMs : override;
  };
  /** `c`'s last id if its last record is older than its TTL now (undefined: not expired, or empty). */
  const expiredAt = async (c: string): Promise<number | undefined> => {
    const ttl = await ttlOf(c);
    if (ttl === null) return undefined;
    const last = await deps.storage.last(c);
    if (last === undefined) return undefined;
    const at = Date.parse(last.ts);
    return Number.isFinite(at) && options.clock.now() - at > ttl ? last.id : undefined;
  };

  async function walkConversations(report: SweepReport, from: string | undefined): Promise<string | undefined> {
    let cursor = from;
    for (let looked = 0; looked < options.perTick; ) {
      const c = await deps.storage.conversationAfter(cursor);
      if (c === undefined) {
        report.wrapped = true;
        return undefined;
      }
      const skip = SKIPPED.find((p) => c.startsWith(p));
      cursor = skip === undefined ? c : skip + HIGH;
      looked++;
      report.examined++;
      if (skip !== undefined) continue;
      const lastId = await expiredAt(c);
      if (lastId !== undefined) {
        try {
          // Kept if anything was written since the read above.
          if (!(await deps.storage.clearIfLastId(c, lastId))) continue;
          await deps.ttls.set(c, undefined);
          report.cleared.push(c);
        } catch {
          report.failed++;
        }
      }
    }
    return cursor;
  }

  async function walkSessions(
    report: SweepReport,
    from: [string, string] | undefined,
    deleteSession: (u: string, s: string, ifLastId: number) => Promise<boolean>,
  ): Promise<[string, string] | undefined> {
    const batch = await deps.storage.sessionsAfter(from, options.perTick);
    if (batch.length < options.perTick) report.wrapped = true;
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
    return batch.length < options.perTick ? undefined : batch.at(-1);
  }

  return {
    async tick(from: SweepCursor): Promise<{ report: SweepReport; next: SweepCursor }> {
      const report: SweepReport = { examined: 0, cleared: [], deletedSessions: [], wrapped: false, failed: 0 };
      const conversations = await walkConversations(report, from.conversations);
      const sessions = deps.deleteSession === undefined ? undefined : await walkSessions(report, from.sessions, deps.deleteSession);
      return { report, next: { ...(conversations === undefined ? {} : { conversations }), ...(sessions === undefined ? {} : { sessions }) } };
    },
  };
}
