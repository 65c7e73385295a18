import { InvalidInputError } from '../../errors.ts';
import { DEFAULT_LANGUAGE, type Language } from '../../language.ts';
import { offlineTitle, untitled } from './session-title.ts';
import { commit, HIGH, nextCounter, type RecallDbs, type SessionEntry } from './recall-dbs.ts';
import type { RecallDeps } from '../recall-deps.ts';
import { sessionConversationId } from '../recall-ids.ts';
import { toSessionRow } from './session-row.ts';

/**
 * The sessions index (the demo's `conversations.json`), one LMDB key per session, so turns of
 * two sessions never rewrite each other's entries. A session is listed from the end of its
 * first turn; its title is fixed then, `updated_at` is refreshed by every turn. The list is
 * newest `updated_at` first; ties (turns in the same second) keep creation order, as the
 * demo's stable sort kept file order.
 */
export interface SessionSummary {
  session_id: string;
  title: string;
  updated_at: string;
}

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
export function registerSession(dbs: RecallDbs, userId: string, sessionId: string, now: string): SessionEntry {
  const existing = dbs.sessions.get([userId, sessionId]);
  if (existing) return existing;
  const entry: SessionEntry = { title: '', updated_at: now, order: nextCounter(dbs, 'session-order', userId), listed: false };
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
): SessionEntry {
  const existing = registerSession(dbs, userId, sessionId, updatedAt);
  const entry: SessionEntry = { ...existing, title: existing.title || title, updated_at: updatedAt, listed: true };
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
export async function listCutShortSessions(deps: RecallDeps, sessions: Array<[string, string]>): Promise<number> {
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
        touchSession(dbs, userId, sessionId, offlineTitle(toSessionRow(first).content, deps.language), toSessionRow(last).ts);
        listed++;
      } else {
        dbs.counters.remove(firstTurnKey(userId, sessionId));
      }
    });
  }
  return listed;
}

export function sessionEntry(dbs: RecallDbs, userId: string, sessionId: string): SessionEntry | undefined {
  return dbs.sessions.get([userId, sessionId]);
}

/** How far the session's anchors are from its record ids (0 but for some imported sessions). */
export function sessionIdShift(dbs: RecallDbs, userId: string, sessionId: string): number {
  return sessionEntry(dbs, userId, sessionId)?.demoIds?.shift ?? 0;
}

/**
 * `now` stands in for a missing `updated_at` (imported entries), as the demo did, and the
 * language's untitled title (`新对话` in Chinese, the Demo's) for a missing title.
 */
export function listSessions(dbs: RecallDbs, userId: string, now: string, language: Language = DEFAULT_LANGUAGE): SessionSummary[] {
  return sortedSessions(dbs, userId, now, language).map(summary);
}

/** One page of `listSessions`: the next `limit` after `cursor` (`listSessionsPage`'s, opaque). */
export interface SessionsPage {
  items: SessionSummary[];
  /** Where the next page starts; `null` after the last. */
  nextCursor: string | null;
}

/**
 * The sessions in `listSessions`' order, `limit` at a time (keyset paging on `updated_at` and
 * creation order): a session that gets a turn between two pages moves to the front, so a walk
 * through the pages does not show it again (nor, if it was not shown yet, at all). A cursor that
 * is not one of ours is `InvalidInputError('invalid_cursor')`.
 */
export function listSessionsPage(dbs: RecallDbs, userId: string, now: string, language: Language, limit: number, cursor?: string): SessionsPage {
  const after = cursor === undefined ? undefined : decodeSessionCursor(cursor);
  const rows = sortedSessions(dbs, userId, now, language);
  const start = after === undefined ? 0 : rows.findIndex((r) => r.updated_at < after[0] || (r.updated_at === after[0] && r.order > after[1]));
  const page = start < 0 ? [] : rows.slice(start, start + limit);
  const last = page[page.length - 1];
  const more = start >= 0 && start + limit < rows.length;
  return { items: page.map(summary), nextCursor: more && last !== undefined ? encodeSessionCursor(last.updated_at, last.order) : null };
}

interface SortedSession extends SessionSummary {
  order: number;
}

function sortedSessions(dbs: RecallDbs, userId: string, now: string, language: Language): SortedSession[] {
  const none = untitled(language);
  const rows: SortedSession[] = [];
  for (const { key, value } of dbs.sessions.getRange({ start: [userId], end: [userId, HIGH] })) {
    if (!value.listed) continue;
    rows.push({ session_id: key[1], title: value.title || none, updated_at: value.updated_at || now, order: value.order });
  }
  rows.sort((a, b) => (a.updated_at === b.updated_at ? a.order - b.order : a.updated_at < b.updated_at ? 1 : -1));
  return rows;
}

const summary = ({ session_id, title, updated_at }: SortedSession): SessionSummary => ({ session_id, title, updated_at });

function encodeSessionCursor(updatedAt: string, order: number): string {
  return Buffer.from(JSON.stringify(['s', updatedAt, order])).toString('base64url');
}

function decodeSessionCursor(cursor: string): [string, number] {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    value = undefined;
  }
  if (!Array.isArray(value) || value.length !== 3 || value[0] !== 's' || typeof value[1] !== 'string' || !Number.isSafeInteger(value[2])) {
    throw new InvalidInputError('invalid_cursor', 'cursor is not one this list gave out', { field: 'cursor' });
  }
  return [value[1], value[2] as number];
}
