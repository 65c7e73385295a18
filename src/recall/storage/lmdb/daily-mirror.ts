import { putDailyRow, type NewDailyRow } from './daily-store.ts';
import { commit, commitRemoval, HIGH, type RecallDbs } from './recall-dbs.ts';
import type { LmdbContext } from './lmdb-context.ts';
import { fromDailyRecord } from './record-codec.ts';
import { sessionConversationId } from '../../recall-ids.ts';
import { dailyMirrorOf } from '../../rows/session-row.ts';

/**
 * The daily view mirrors the rows chat turns write to a session. The two live in different
 * stores (the session in the MessageLog, through its conversation actor; the daily view in the
 * recall dbs), so a turn writes them in two transactions, and a crash between them would leave a
 * session row the daily view never shows. A per-session watermark closes that gap:
 *
 * - `[userId, 'daily-mirrored', sessionId]` (counters db) is the highest session id mirrored;
 *   a session starts with 0 when registered; one without a mark (imported, whose rows come with
 *   their own daily files, or older than marks) gets one at its current last id before its
 *   next turn: nothing is known missing there;
 * - a turn mirrors its rows with `mirrorSessionRow`, which skips a row at or below the mark and
 *   raises it, inside the daily commit;
 * - before a turn, `catchUpDaily` mirrors what a crash left behind: the session's rows above
 *   the mark, each on the day of its own local `ts`, exactly as its turn would have. Checking
 *   costs a last-id read and one counter read.
 *
 * Both run inside LMDB write transactions, which are serialized, so a row a parallel turn is
 * about to mirror is mirrored once, by whichever comes first, with the same content.
 *
 * A session that gets no next turn would lag for good, so the start repairs those too, at a
 * cost that grows with the lagging sessions only, not with the data:
 * - `['\u0001daily-pending', userId, sessionId]` (counters db) counts the turns of that
 *   session that may have session rows not yet mirrored. A turn raises it (`rowsPending`) in a
 *   commit BEFORE it appends its user row, and lowers it (`rowsSettled`) in the commit that
 *   mirrors its last row (the reply or the error row); the key goes at 0. A kill in between
 *   leaves it above 0. Keys outside every user's range (no id starts with a control
 *   character), so the start reads exactly these (`laggingSessions`).
 * - at start, before any call runs, `repairLaggingSessions` catches each such session up and
 *   drops its key (one process per data directory: no turn of a live process is in flight).
 */
const MARK = 'daily-mirrored';
const PENDING = '\u0001daily-pending';

const markKey = (userId: string, sessionId: string) => [userId, MARK, sessionId];
const pendingKey = (userId: string, sessionId: string) => [PENDING, userId, sessionId];

/** Inside a write transaction, before a turn appends session rows: one more turn in flight. */
export function rowsPending(dbs: RecallDbs, userId: string, sessionId: string): void {
  dbs.counters.put(pendingKey(userId, sessionId), (dbs.counters.get(pendingKey(userId, sessionId)) ?? 0) + 1);
}

/** Inside the write transaction that mirrors a turn's last row: that turn is settled. */
export function rowsSettled(dbs: RecallDbs, userId: string, sessionId: string): void {
  const n = dbs.counters.get(pendingKey(userId, sessionId)) ?? 0;
  if (n <= 1) dbs.counters.remove(pendingKey(userId, sessionId));
  else dbs.counters.put(pendingKey(userId, sessionId), n - 1);
}

/** The sessions a previous process may have left with unmirrored rows. Read before any turn runs. */
export function laggingSessions(dbs: RecallDbs): Array<[userId: string, sessionId: string]> {
  return [...dbs.counters.getKeys({ start: [PENDING], end: [PENDING, HIGH] })].map((key) => [key[1]!, key[2]!]);
}

/** At start: mirrors what each lagging session lacks and drops its key; returns the rows mirrored. */
export async function repairLaggingSessions(deps: LmdbContext, sessions: Array<[string, string]>): Promise<number> {
  let rows = 0;
  for (const [userId, sessionId] of sessions) {
    rows += await catchUpDaily(deps, userId, sessionId);
    await commitRemoval(deps.dbs, () => deps.dbs.counters.remove(pendingKey(userId, sessionId)));
  }
  return rows;
}

/** Inside a write transaction: the daily row of session row `row.session_message_id`, unless
 * mirrored already; says whether it wrote one. */
export function mirrorSessionRow(dbs: RecallDbs, userId: string, sessionId: string, row: NewDailyRow & { session_message_id: number }): boolean {
  const mark = dbs.counters.get(markKey(userId, sessionId)) ?? 0;
  if (row.session_message_id <= mark) return false;
  putDailyRow(dbs, userId, row);
  dbs.counters.put(markKey(userId, sessionId), row.session_message_id);
  return true;
}

/** Inside a write transaction: a new session, with nothing mirrored yet (or, for a branched
 * session, nothing after its branch point `from`). */
export function startMirror(dbs: RecallDbs, userId: string, sessionId: string, from = 0): void {
  dbs.counters.put(markKey(userId, sessionId), from);
}

/** Inside a write transaction: forget the session's mark (the session is deleted). */
export function forgetMirror(dbs: RecallDbs, userId: string, sessionId: string): void {
  dbs.counters.remove(markKey(userId, sessionId));
  dbs.counters.remove(pendingKey(userId, sessionId));
}

/** Mirrors the session rows a crash left out of the daily view; returns how many. */
export async function catchUpDaily(deps: LmdbContext, userId: string, sessionId: string): Promise<number> {
  const { dbs } = deps;
  const conversationId = sessionConversationId(userId, sessionId);
  const last = await deps.memory.lastId(conversationId);
  const mark = dbs.counters.get(markKey(userId, sessionId));
  if (mark === last) return 0;
  if (mark === undefined || mark > last) {
    // No mark (imported, or from before marks): nothing is known to be missing. Above the last
    // id: the transcript was cleared. Start from here.
    await commit(dbs, () => dbs.counters.put(markKey(userId, sessionId), last));
    return 0;
  }
  const missing = await deps.memory.range(conversationId, { from: mark + 1, to: last });
  // A parallel turn may have mirrored some of them since: mirrorSessionRow skips those.
  return commit(dbs, () => missing.filter((record) => mirrorSessionRow(dbs, userId, sessionId, mirrorOf(record, sessionId))).length);
}

/** The daily row a turn writes for a session record (rows/session-row.ts `dailyMirrorOf`), as stored. */
function mirrorOf(record: Parameters<typeof dailyMirrorOf>[0], sessionId: string): NewDailyRow & { session_message_id: number } {
  const row = dailyMirrorOf(record, sessionId);
  return { day: row.day, ...fromDailyRecord(row), session_message_id: record.message_id };
}
