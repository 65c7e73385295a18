import { UNTITLED } from './conversation-title.ts';
import { HIGH, nextCounter, type RecallDbs, type SessionEntry } from './recall-dbs.ts';

/**
 * The sessions index (the demo's `conversations.json`), one LMDB key per session, so turns of
 * two sessions never rewrite each other's entries. A session is listed from the end of its
 * first turn; its title is fixed then, `updated_at` is refreshed by every turn. The list is
 * newest `updated_at` first; ties (turns in the same second) keep creation order, as the
 * demo's stable sort kept file order.
 */
export interface ConversationSummary {
  session_id: string;
  title: string;
  updated_at: string;
}

/** Inside a write transaction: registers the session (unlisted) unless it is known. */
export function registerSession(dbs: RecallDbs, userId: string, sessionId: string, now: string): SessionEntry {
  const existing = dbs.sessions.get([userId, sessionId]);
  if (existing) return existing;
  const entry: SessionEntry = { title: '', updated_at: now, order: nextCounter(dbs, 'session-order', userId), listed: false };
  dbs.sessions.put([userId, sessionId], entry);
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
  return entry;
}

export function sessionEntry(dbs: RecallDbs, userId: string, sessionId: string): SessionEntry | undefined {
  return dbs.sessions.get([userId, sessionId]);
}

/** `now` stands in for a missing `updated_at` (imported entries), as the demo did. */
export function listSessions(dbs: RecallDbs, userId: string, now: string): ConversationSummary[] {
  const rows: (ConversationSummary & { order: number })[] = [];
  for (const { key, value } of dbs.sessions.getRange({ start: [userId], end: [userId, HIGH] })) {
    if (!value.listed) continue;
    rows.push({ session_id: key[1], title: value.title || UNTITLED, updated_at: value.updated_at || now, order: value.order });
  }
  rows.sort((a, b) => (a.updated_at === b.updated_at ? a.order - b.order : a.updated_at < b.updated_at ? 1 : -1));
  return rows.map(({ session_id, title, updated_at }) => ({ session_id, title, updated_at }));
}
