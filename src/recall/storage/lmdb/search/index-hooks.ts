import type { DailyValue, RecallDbs } from '../recall-dbs.ts';
import { indexDailyRow, indexSessionDoc, isLive, reindexLongTerm, setLive, unindexDailyRow, unindexSessionDoc } from './search-index.ts';
import { embedDailyRowPut, embedDailyRowRemove, embedLongTermChange, embedSessionDocPut, embedSessionDocRemove } from '../embeddings/embed-hooks.ts';
import { sessionDocKey } from './doc-rows.ts';
import { hasStoredDocs } from './backfill-walk.ts';

/**
 * Where the stores call the index: each hook runs inside the store's own write transaction
 * (see search-index.ts for why rows and postings commit together).
 *
 * A user's writes are indexed once the user is live: a user with nothing stored yet becomes
 * live at their first write; a user with rows from before the index (or an older Mnemo) is
 * not indexed row by row but rebuilt whole (rebuild.ts) at the first search. Removals apply
 * for a live user (removing a document that was never indexed is a no-op); a user not live
 * has their whole index dropped by that rebuild, and its postings are never read before.
 *
 * Session documents (store/session-docs.ts) count as rows here and are hooked alike.
 *
 * The same hooks queue the rows for embedding, when configured (embeddings/embed-hooks.ts).
 *
 * A Demo folder import into a user who is not live (`deferringIndex`): the user is not made
 * live by the import's first row, so its rows are stored unindexed, like rows from before the
 * index, and the import's last step builds the index in bulk (rebuild.ts: a term's postings
 * written once per ~25 000 rows, not through the pending log per row). A search meanwhile
 * rebuilds first, as for any user not live; from then on the import's rows index themselves.
 */
function liveOrFresh(dbs: RecallDbs, userId: string): boolean {
  if (isLive(dbs.search, userId)) return true;
  if (deferring.has(userId) || hasStoredDocs(dbs, userId)) return false;
  setLive(dbs.search, userId);
  return true;
}

/** Users whose import transaction runs now (synchronous bodies only: see `deferringIndex`). */
const deferring = new Set<string>();

/**
 * Runs `body` (a write transaction's synchronous body) with `userId`'s index deferred: a user
 * not live stays so, and the rows it writes wait for a rebuild. A live user indexes as always.
 */
export function deferringIndex<T>(userId: string, body: () => T): T {
  deferring.add(userId);
  try {
    return body();
  } finally {
    deferring.delete(userId);
  }
}

/** Before the daily row's counter is bumped: the row `[userId, day, id]` was just put. */
export function onDailyRowPut(dbs: RecallDbs, userId: string, day: string, id: number, value: DailyValue): void {
  if (liveOrFresh(dbs, userId)) indexDailyRow(dbs.search, userId, day, id, value);
  embedDailyRowPut(dbs, userId, day, id);
}

/** Before the row is removed (its text is needed to find its postings). Not live: the rebuild drops them all. */
export function onDailyRowRemove(dbs: RecallDbs, userId: string, day: string, id: number): void {
  if (!isLive(dbs.search, userId)) return;
  const value = dbs.daily.get([userId, day, id]);
  if (value !== undefined) unindexDailyRow(dbs.search, userId, day, id, value);
  embedDailyRowRemove(dbs, userId, day, id);
}

/** Before the session document `[userId, order, id]` is put (store/session-docs.ts). */
export function onSessionDocPut(dbs: RecallDbs, userId: string, order: number, id: number, value: DailyValue): void {
  if (liveOrFresh(dbs, userId)) indexSessionDoc(dbs.search, userId, order, id, value);
  embedSessionDocPut(dbs, userId, order, id);
}

/** Before the session document is removed. */
export function onSessionDocRemove(dbs: RecallDbs, userId: string, order: number, id: number): void {
  const value = isLive(dbs.search, userId) ? dbs.search.sessionDocs.get(sessionDocKey(userId, order, id)) : undefined;
  if (value !== undefined) unindexSessionDoc(dbs.search, userId, order, id, value);
  embedSessionDocRemove(dbs, userId, order, id);
}

/** Before the new version is put (`before`: the current document, `''` when none). */
export function onLongTermWrite(dbs: RecallDbs, userId: string, before: string, after: string): void {
  if (liveOrFresh(dbs, userId)) reindexLongTerm(dbs.search, userId, before, after);
  embedLongTermChange(dbs, userId, before, after);
}

/** After an undo removed the newest version. */
export function onLongTermUndo(dbs: RecallDbs, userId: string, before: string, after: string): void {
  if (isLive(dbs.search, userId)) reindexLongTerm(dbs.search, userId, before, after);
  embedLongTermChange(dbs, userId, before, after);
}
