import type { StoredMessage } from '../../message.ts';
import { putDailyRow, type NewDailyRow } from './daily-store.ts';
import { commit, type RecallDbs } from './recall-dbs.ts';
import type { RecallDeps } from '../recall-deps.ts';
import { sessionConversationId } from '../recall-ids.ts';
import { toSessionRow } from './session-row.ts';

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
 */
const MARK = 'daily-mirrored';

const markKey = (userId: string, sessionId: string) => [userId, MARK, sessionId];

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
}

/** Mirrors the session rows a crash left out of the daily view; returns how many. */
export async function catchUpDaily(deps: RecallDeps, userId: string, sessionId: string): Promise<number> {
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
  return commit(dbs, () => missing.filter((record) => mirrorSessionRow(dbs, userId, sessionId, dailyRowOf(record, sessionId))).length);
}

/** The daily row a turn writes for a session record (see chat-service.ts). */
function dailyRowOf(record: StoredMessage, sessionId: string): NewDailyRow & { session_message_id: number } {
  const row = toSessionRow(record);
  return {
    day: row.ts.slice(0, 10),
    ts: row.ts,
    role: row.role,
    content: row.content,
    session_id: sessionId,
    session_message_id: record.message_id,
    ...(row.error !== undefined ? { error: row.error } : {}),
    ...(row.tool_calls.length > 0 ? { tool_calls: row.tool_calls } : {}),
  };
}
