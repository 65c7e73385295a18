import type { SessionEntry } from '../../records/records.ts';
import { commit, HIGH, nextCounter, type RecallDbs, type StoredSession } from './recall-dbs.ts';
import type { LmdbContext } from './lmdb-context.ts';
import { toSessionEntry } from './record-codec.ts';
import { sessionConversationId } from '../../recall-ids.ts';
import { toSessionRow } from '../../rows/session-row.ts';

/**
 * The sessions index (the Demo's `conversations.json`) in LMDB, one key per session, so turns
 * of two sessions never rewrite each other's entries. A session is listed from the end of its
 * first turn; its title is fixed then, `updated_at` is refreshed by every turn. (The listing's
 * order is the domain's: sessions/session-list.ts.)
 */
/**
 * A session whose first turn has not finished: registered, not listed yet. A process that dies
 * in that turn leaves the mark behind, and the next start lists the session
 * (`listCutShortSessions`), which would otherwise stay out of the list with its rows. Counters
 * keys outside every user's range (no id starts with a control character), so the start
 * reads only these. (Before ids allowed `~`, the prefix was `'~first-turn'`; a mark an older
 * version left there when it was killed in a first turn is not listed.)
 */
const FIRST_TURN = '\u0001first-turn';
const firstTurnKey = (userId: string, sessionId: string) => [FIRST_TURN, userId, sessionId];

/** Inside a write transaction: registers the session (unlisted) unless it is known. */
export function registerSession(dbs: RecallDbs, userId: string, sessionId: string, now: string): StoredSession {
  const existing = dbs.sessions.get([userId, sessionId]);
  if (existing) return existing;
  const entry: StoredSession = { title: '', updated_at: now, order: nextCounter(dbs, 'session-order', userId), listed: false };
  dbs.sessions.put([userId, sessionId], entry);
  dbs.counters.put(firstTurnKey(userId, sessionId), 0);
  return entry;
}

/**
 * Inside a write transaction, at the end of a turn: lists the session, keeps a title it
 * already has (the first turn to finish sets it) or takes `title`, and refreshes `updated_at`.
 */
export function touchSession(
  dbs: RecallDbs,
  userId: string,
  sessionId: string,
  title: string,
  updatedAt: string,
): StoredSession {
  const existing = registerSession(dbs, userId, sessionId, updatedAt);
  const entry: StoredSession = { ...existing, title: existing.title || title, updated_at: updatedAt, listed: true };
  dbs.sessions.put([userId, sessionId], entry);
  if (!existing.listed) dbs.counters.remove(firstTurnKey(userId, sessionId));
  return entry;
}

/** Inside a write transaction: the session is deleted. */
export function removeSession(dbs: RecallDbs, userId: string, sessionId: string): void {
  dbs.sessions.remove([userId, sessionId]);
  dbs.counters.remove(firstTurnKey(userId, sessionId));
}

/** The sessions whose first turn a previous process left unfinished. Read before any turn runs. */
export function cutShortSessions(dbs: RecallDbs): Array<[userId: string, sessionId: string]> {
  return [...dbs.counters.getKeys({ start: [FIRST_TURN], end: [FIRST_TURN, HIGH] })].map((key) => [key[1]!, key[2]!]);
}

/**
 * Lists sessions whose first turn was cut short after it stored rows, titled from their first
 * message (the offline title in the server's language, as a failed turn gets) and dated by
 * their last row; forgets the
 * marks of those that stored none. Returns how many it listed.
 */
export async function listCutShortSessions(deps: LmdbContext, sessions: Array<[string, string]>): Promise<number> {
  const { dbs } = deps;
  let listed = 0;
  for (const [userId, sessionId] of sessions) {
    const conversationId = sessionConversationId(userId, sessionId);
    const unlisted = sessionEntry(dbs, userId, sessionId)?.listed === false;
    const [first] = unlisted ? await deps.memory.range(conversationId, { limit: 1 }) : [];
    const [last] = first === undefined ? [] : await deps.memory.tail(conversationId, 1);
    await commit(dbs, () => {
      // A turn that started since may have finished the session's first turn itself.
      if (first !== undefined && last !== undefined && sessionEntry(dbs, userId, sessionId)?.listed === false) {
        touchSession(dbs, userId, sessionId, deps.titleOf(toSessionRow(first).content), toSessionRow(last).ts);
        listed++;
      } else {
        dbs.counters.remove(firstTurnKey(userId, sessionId));
      }
    });
  }
  return listed;
}

export function sessionEntry(dbs: RecallDbs, userId: string, sessionId: string): StoredSession | undefined {
  return dbs.sessions.get([userId, sessionId]);
}

/** Every entry of the user, in creation order. */
export function userSessions(dbs: RecallDbs, userId: string): SessionEntry[] {
  const out: SessionEntry[] = [];
  for (const { key, value } of dbs.sessions.getRange({ start: [userId], end: [userId, HIGH] })) out.push(toSessionEntry(key[1], value));
  return out.sort((a, b) => a.order - b.order);
}
