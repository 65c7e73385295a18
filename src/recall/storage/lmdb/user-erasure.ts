import type { Database, Key } from 'lmdb';
import { CONVERSATION_DBS, FORKS_DB } from '../../../memory/lmdb/lmdb-table.ts';
import { summaryConversationId, SUMMARY_ID_PREFIX } from '../../../provider/summary-record.ts';
import type { ErasureReport } from '../recall-store.ts';
import type { LmdbContext } from './lmdb-context.ts';
import { sessionConversationId, sessionConversationPrefix } from '../../recall-ids.ts';
import { commitRemoval, HIGH, MARKER_START, type RecallDbs } from './recall-dbs.ts';
import { noteLiveRemoval } from './search/rebuild-watch.ts';

/**
 * `eraseUser(userId)`: everything of one user, gone in ONE LMDB transaction.
 *
 * WHAT. (1) In every db of recall's schema (`DB_NAMES`: sessions and titles, daily rows, long-
 * term memory and its versions, the dialogue log, counters and marks, and whatever db is added
 * there later: a search index, embeddings, facts, idempotency keys), the ranges `[user] ..
 * [user, HIGH]` and `[marker, user] .. [marker, user, HIGH]` (recall-dbs.ts: every key starts
 * with the user id, or a marker then the user id). It knows no db by its content, so a new one
 * is covered by being named. (2) Each of the user's conversations in the MessageLog, with its
 * summaries' companion conversation (`mnemo.summary/...`): its range in every db keyed by
 * conversation (`CONVERSATION_DBS`: messages, the system-message index, TTL overrides). The
 * conversations are found twice over, so none is missed: from the user's session ids in the
 * sessions index, the daily view and the log, AND by a range scan of the `messages` db over the
 * user's conversation prefix `session/{user}/` (and `mnemo.summary/session/{user}/`), which
 * finds a transcript whatever the index says, and of the `forks` db's links over the same
 * prefixes, which find a fork with no rows of its own (its link is all it has).
 *
 * ONE TRANSACTION, AND THE ACTORS. The transcripts live in the same environment (the LMDB
 * store's `messages` db), so this transaction removes them directly, not through the
 * conversation actors: an actor's writes are its own transactions, and one transaction across
 * many actors is not possible through them. The actors keep a cached last id, though, which must
 * not outlive the erasure (a next turn would number from 57, not 1). So, in order: (a) the caller
 * (recall's user gate) holds the user: nothing of theirs runs; and the erasure holds the user's
 * lock (lmdb-summaries.ts), so no summary job's append runs beside it, and one after it finds
 * the user's incarnation gone; (b) the one transaction, which also removes the user's jobs, so a job
 * still running loses its lease and its writes (which check it inside their transactions) store
 * nothing; (c) each erased conversation gets a `clear` through the MessageLog (the
 * conversation's actor, or the standalone store's lane), which finds nothing left to delete and
 * resets the cached last id to 0. A crash between (b) and (c) loses nothing: the caches are in
 * memory, and a new process reads last ids from storage.
 *
 * Gone from every read path, not from the file: LMDB frees the erased pages (their bytes stay
 * until reused), and a branch page keeps a deleted key as its separator. `{ compact: true }`
 * rebuilds the environment after (runtime.ts: `compact({ copy: 'rebuild' })`), which writes
 * only what is left: no byte of the user (test/recall/user-erasure.test.ts checks a rebuilt
 * copy for every marker string and id of the user).
 */
/** Runs once the caller holds the user (no call of theirs is running or can start). */
export async function eraseUserData(ctx: LmdbContext, userId: string): Promise<ErasureReport> {
  // A summary job's append (not a call of the user's) waits, then finds the user gone (lmdb-summaries.ts).
  const release = await ctx.userLocks.lock(userId);
  try {
    return await eraseLocked(ctx, userId);
  } finally {
    await release();
  }
}

async function eraseLocked(ctx: LmdbContext, userId: string): Promise<ErasureReport> {
  const { dbs } = ctx;
  const prefixes = [sessionConversationPrefix(userId), `${SUMMARY_ID_PREFIX}/${sessionConversationPrefix(userId)}`];
  const erased = new Set<string>();
  for (const s of userSessionIds(dbs, userId)) {
    const c = sessionConversationId(userId, s);
    erased.add(c);
    erased.add(summaryConversationId(c));
  }
  // Appends acknowledged through the journal go to LMDB first, where the erasure removes them.
  await ctx.journal?.settle();
  const conversationDbs = CONVERSATION_DBS.map((name) => dbs.env.openDB<unknown, Key>(name, {}));
  const keys = await commitRemoval(dbs, () => {
    noteLiveRemoval(userId); // a rebuild running for the user writes none of the rows it read
    let removed = 0;
    for (const db of dbs.all.values()) removed += removeUserKeys(db, userId);
    const [messages] = conversationDbs;
    // Fork links are keyed by role, not by conversation (lmdb-table.ts): `['of', fork]` and
    // `['by', source, fork]`. A fork with no rows of its own is in no db but this one, so the
    // user's forks are found by their links too.
    const forks = dbs.env.openDB<{ source: string } | number, Key>(FORKS_DB, { encoding: 'json' });
    for (const prefix of prefixes) {
      for (const c of conversationsWithPrefix(messages!, prefix)) erased.add(c);
      for (const key of forks.getKeys({ start: ['of', prefix], end: ['of', prefix + HIGH] })) {
        if (Array.isArray(key) && typeof key[1] === 'string' && key[1].startsWith(prefix)) erased.add(key[1]);
      }
    }
    for (const c of erased) for (const db of conversationDbs) removeRange(db, [c], [c, HIGH]);
    // An erased fork leaves its source's list; an erased source, its own.
    for (const c of erased) {
      const link = forks.get(['of', c]);
      if (typeof link === 'object' && link !== null) {
        forks.remove(['of', c]);
        forks.remove(['by', link.source, c]);
      }
      removeRange(forks as Database<unknown, Key>, ['by', c], ['by', c, HIGH]);
    }
    return removed;
  });
  ctx.queue.forgetUser(userId);
  // And the journal's copies of them (its records are in LMDB now): zeroed.
  await ctx.journal?.scrub();
  // Reset the conversation actors' cached last ids (see ONE TRANSACTION above); nothing is left to delete.
  for (const c of erased) await ctx.memory.clear(c);
  return { conversations: erased.size, keys };
}

/** Every session id the user's recall keys name: the index, the daily view, the log. */
function userSessionIds(dbs: RecallDbs, userId: string): Set<string> {
  const ids = new Set<string>();
  for (const key of dbs.sessions.getKeys({ start: [userId], end: [userId, HIGH] })) ids.add(key[1]);
  for (const key of dbs.dailyBySession.getKeys({ start: [userId], end: [userId, HIGH] })) ids.add(key[1]);
  for (const key of dbs.log.getKeys({ start: [userId], end: [userId, HIGH] })) if (key[1] !== '') ids.add(key[1]);
  return ids;
}

/** Removes the user's range, and the user's range under every marker. Inside a transaction. */
function removeUserKeys(db: Database<unknown, Key>, userId: string): number {
  let removed = removeRange(db, [userId], [userId, HIGH]);
  // Markers are few (one per kind of mark): hop from one to the next.
  let from: Key = [MARKER_START];
  for (;;) {
    const next: Key | undefined = [...db.getKeys({ start: from, end: ['\u0002'], limit: 1 })][0];
    if (!Array.isArray(next) || typeof next[0] !== 'string') break;
    const marker: string = next[0];
    removed += removeRange(db, [marker, userId], [marker, userId, HIGH]);
    from = [marker, HIGH];
  }
  return removed;
}

function removeRange(db: Database<unknown, Key>, start: Key, end: Key): number {
  // Collected first: removing under a live range iterator is not safe.
  const keys = [...db.getKeys({ start, end })];
  for (const key of keys) db.remove(key);
  return keys.length;
}

/** The distinct conversation ids of `messages` keys `[id, n]` starting with `prefix`. */
function conversationsWithPrefix(messages: Database<unknown, Key>, prefix: string): string[] {
  const found: string[] = [];
  let from: Key = [prefix];
  for (;;) {
    const next: Key | undefined = [...messages.getKeys({ start: from, end: [prefix + HIGH], limit: 1 })][0];
    if (!Array.isArray(next) || typeof next[0] !== 'string' || !next[0].startsWith(prefix)) break;
    found.push(next[0]);
    from = [next[0], HIGH];
  }
  return found;
}
