import type { DailyValue, RecallDbs } from './recall-dbs.ts';
import { onSessionDocPut, onSessionDocRemove } from './search/index-hooks.ts';
import { sessionDocKey } from './search/doc-rows.ts';
import { SESSION_DOC } from './search/search-dbs.ts';

/**
 * Session documents: the ranked index's own copy of a session row that no daily row holds, so
 * ranked recall finds every row an imported folder holds. A chat turn's rows never need one
 * (each gets its daily row: daily-mirror.ts, and the daily row is its document); an imported
 * session's rows come with the folder's daily files, when it had them, and a row of the session
 * that its day's daily file does not hold (demo-import.ts decides) gets one here instead: its
 * text, role, `ts`, tool calls, session and anchor, under `[userId, SESSION_DOC, order, id]`
 * (search-dbs.ts: `order` is its session's creation order, `id` its anchor). They show in no
 * view (the daily view and an export stay the folder's): only in `recall.search`.
 *
 * Written inside the import's transactions, indexed and queued for embedding in the same ones
 * (index-hooks.ts); removed with their session (`deleteSession`, `removeSessionDocs`) or their
 * user (every key starts with the user id: user-erasure.ts). A rebuild of the user's index
 * reads them with the daily rows (search/rebuild.ts).
 */
export type SessionDocValue = DailyValue & { session_id: string; session_message_id: number };

/** Inside a write transaction: stores (and indexes) the document of session row `value`. */
export function putSessionDoc(dbs: RecallDbs, userId: string, order: number, value: SessionDocValue): void {
  onSessionDocPut(dbs, userId, order, value.session_message_id, value);
  dbs.search.sessionDocs.put(sessionDocKey(userId, order, value.session_message_id), value);
}

/** Inside a write transaction: removes (and unindexes) every document of the session created `order`-th. */
export function removeSessionDocs(dbs: RecallDbs, userId: string, order: number): number {
  const keys = [...dbs.search.sessionDocs.getKeys({ start: [userId, SESSION_DOC, order], end: [userId, SESSION_DOC, order, Infinity] })];
  for (const key of keys) {
    onSessionDocRemove(dbs, userId, order, key[3]);
    dbs.search.sessionDocs.remove(key);
  }
  return keys.length;
}

/** The user's session documents after `after` (exclusive; `null`: from the first), in key order, at most `limit`. */
export function sessionDocsAfter(
  dbs: Pick<RecallDbs, 'search'>,
  userId: string,
  after: [order: number, id: number] | null,
  limit: number,
): Array<{ order: number; id: number; value: DailyValue }> {
  const start = after === null ? [userId, SESSION_DOC, 0] : sessionDocKey(userId, after[0], after[1]);
  const out: Array<{ order: number; id: number; value: DailyValue }> = [];
  for (const { key, value } of dbs.search.sessionDocs.getRange({ start, end: [userId, SESSION_DOC, Infinity], exclusiveStart: after !== null, limit })) {
    out.push({ order: key[2], id: key[3], value });
  }
  return out;
}
