import type { MessageLog } from '../../../memory/contract/message-log.ts';
import { MESSAGES_DB } from '../../../memory/lmdb/lmdb-table.ts';
import type { StoredMessage } from '../../../message.ts';
import { systemWallClock, type WallClock } from '../../../wall-clock.ts';
import { sessionConversationId } from '../../recall-ids.ts';
import { clampLimit, normalizeKeyword } from '../../search/keyword-search.ts';
import { textContent } from '../../rows/session-row.ts';
import type { NearDoc, RankedDoc, RecallStore, VectorWrite, WriteGuard } from '../recall-store.ts';
import { StaleWriteError } from '../stale-write-error.ts';
import { dailyRowBound, dailyWindow, listDays, putDailyRow, readDay } from './daily-store.ts';
import { laggingSessions, repairLaggingSessions } from './daily-mirror.ts';
import { putLogRow, readLog } from './dialogue-log.ts';
import { backfillUser, isEmbedLive } from './embeddings/embed-backfill.ts';
import { hasStoredDocs } from './search/backfill-walk.ts';
import { vectorsChanged } from './embeddings/embed-dbs.ts';
import { itemText } from './embeddings/embed-source.ts';
import { VectorCache } from './embeddings/vector-cache.ts';
import { vectorCount, vectorRanking } from './embeddings/vector-query.ts';
import type { LmdbContext } from './lmdb-context.ts';
import { commitFacts, factEntries, factHistory, factsGeneration, factsState, longTermVersions } from './lmdb-facts.ts';
import { createLmdbJobQueue, type QueuedNote } from './lmdb-job-queue.ts';
import { appendTurn, deleteSession, fork, touch, turnKey } from './lmdb-turns.ts';
import { KeyedLocks } from './keyed-locks.ts';
import { incarnationTx } from './write-guards.ts';
import { appendSummary } from './lmdb-summaries.ts';
import { summaryConversationId, summaryEntry } from '../../../provider/summary-record.ts';
import type { SearchPool } from './pool/search-pool.ts';
import { commit, HIGH, openRawText, openRecallDbs, type RecallEnvironment } from './recall-dbs.ts';
import { fromDailyRecord, fromLogRecord, fromSessionEntry, toLogRecord, toSessionEntry } from './record-codec.ts';
import { postingEstimate, rankedDocs } from './search/bm25-query.ts';
import { docRecord, docRow } from './search/doc-rows.ts';
import { rebuildUserIndex } from './search/rebuild.ts';
import { deferringIndex } from './search/index-hooks.ts';
import { isLive } from './search/search-index.ts';
import { runScan, scanDaily, scanSession, SCAN_CHUNK, type ScanPosition } from './search/search-scan.ts';
import { putSessionDoc } from './session-docs.ts';
import { cutShortSessions, listCutShortSessions, sessionEntry, userSessions } from './sessions-index.ts';
import { eraseUserData } from './user-erasure.ts';
import { cosineWith, encodeVector, textHash } from '../../search/vector-codec.ts';
import { docRef } from '../../search/doc-numbers.ts';
import type { RankedFilters } from '../../search/rank-filters.ts';
import type { Key } from 'lmdb';
import { DEFAULT_LANGUAGE, languageOf, type LanguageSetting } from '../../../language.ts';
import { offlineTitle } from '../../rows/session-title.ts';

/**
 * The LMDB adapter of the storage port (recall-store.ts): the layered memory in named
 * databases of the runtime's LMDB environment (recall-dbs.ts has every db and key), beside the
 * session transcripts of the LMDB message store, so a turn's rows and what they imply commit in
 * one transaction. The format is the one earlier versions wrote: existing data opens as it is.
 *
 * One process owns a data directory (the memory layer's lock), so what other engines need a
 * database for is in memory here: a session's turn lock, job leases, the jobs' due order.
 *
 * AT OPEN, before any call is served: crash repair of what a killed process left (sessions
 * whose first turn it cut short are listed; session rows it left out of the daily view are
 * mirrored: daily-mirror.ts, sessions-index.ts). Every call waits for the repair. Best effort:
 * a failure leaves the marks for the next start, and a session's next turn catches up anyway.
 *
 * Large keyword scans, ranked queries and vector scans run on the search pool when one is
 * given (its workers read the environment directly); small ones inline.
 */
export interface LmdbRecallStoreOptions {
  /** The environment: the runtime's, or one from the memory layer's `acquireEnvironment`. */
  env: RecallEnvironment;
  /** The session transcripts: the LMDB message store of this same environment. */
  transcripts: MessageLog;
  /** Read session rows straight from the `messages` db (and on the pool). Default true; false reads them through `transcripts` (tests of that path). */
  directReads?: boolean;
  /**
   * Worker threads for large scans (`createSearchPool`); its owner closes it, before the
   * environment. Default none: every scan inline.
   */
  pool?: SearchPool | undefined;
  /** Rows in scope above which a keyword scan goes to the pool. Default 20 000. */
  poolThreshold?: number;
  /** Postings a ranked query reads above which it goes to the pool. Default 200 000. */
  rankPoolThreshold?: number;
  /** Vectors of a user above which a vector scan goes to the pool. Default 20 000. */
  vectorPoolThreshold?: number;
  /** Stored items queue embedding jobs. Default false. */
  embeddings?: boolean;
  /** Time of the job queue (due times, leases). Default: the system clock. */
  clock?: WallClock;
  /** Of the offline title a session gets when a killed process cut its first turn short (`'auto'`: its message's). Default `'zh'`. */
  language?: LanguageSetting;
}

export const DEFAULT_POOL_THRESHOLD = 20_000;
export const DEFAULT_RANK_POOL_THRESHOLD = 200_000;

/**
 * The LMDB recall store over `options.env` (see `LmdbRecallStoreOptions`). Opens its named
 * databases synchronously; crash repair runs before the first call is served. `close()` leaves the
 * environment, the transcripts and the pool open: they are the caller's.
 */
export function createLmdbRecallStore(options: LmdbRecallStoreOptions): RecallStore {
  const opened = openRecallDbs(options.env);
  const clock = options.clock ?? systemWallClock;
  const queue = createLmdbJobQueue(opened, clock);
  const dbs = Object.assign(opened, {
    notes: { take: () => queue.takeNotes(), committed: (taken: unknown) => queue.noteQueued(taken as QueuedNote[]) },
  });
  const embeddings = options.embeddings ?? false;
  if (embeddings) {
    dbs.embed.enabled = true;
    dbs.embed.onQueued = (key) => queue.notedTx('embed', key[0], `${key[1]}:${key[2]}`);
  }
  const direct = options.directReads ?? true;
  const ctx: LmdbContext = {
    dbs,
    memory: options.transcripts,
    sessionScan: direct ? { json: options.env.root.openDB(MESSAGES_DB, { encoding: 'json' }), text: openRawText(options.env.root, MESSAGES_DB) } : undefined,
    journal: options.env.ahead,
    pool: options.pool,
    poolThreshold: options.poolThreshold ?? DEFAULT_POOL_THRESHOLD,
    rankPoolThreshold: options.rankPoolThreshold ?? DEFAULT_RANK_POOL_THRESHOLD,
    queue,
    clock,
    vectors: new VectorCache(),
    titleOf: (first) => offlineTitle(first, languageOf(options.language ?? DEFAULT_LANGUAGE, first)),
    userLocks: new KeyedLocks(),
  };
  const vectorPoolThreshold = options.vectorPoolThreshold ?? DEFAULT_POOL_THRESHOLD;
  const locks = new KeyedLocks();
  const repaired = repairAtOpen(ctx);
  const ready = <A extends unknown[], R>(f: (...args: A) => R | Promise<R>) => async (...args: A): Promise<R> => {
    await repaired;
    return f(...args);
  };

  return {
    engine: 'lmdb',
    transcripts: options.transcripts,
    jobs: queue,
    embeddings,
    users: ready(async () => knownUsers(ctx)),
    hasData: ready(async (userId) => {
      const range = { start: [userId], end: [userId, HIGH], limit: 1 };
      return [dbs.sessions, dbs.daily, dbs.longTerm, dbs.log, dbs.facts].some((db) => [...db.getKeys(range as never)].length > 0);
    }),
    eraseUser: ready((userId) => eraseUserData(ctx, userId)),
    session: ready(async (userId, sessionId) => {
      const entry = sessionEntry(dbs, userId, sessionId);
      return entry === undefined ? undefined : toSessionEntry(sessionId, entry);
    }),
    sessions: ready(async (userId) => userSessions(dbs, userId)),
    touchSession: ready((userId, sessionId, change, guard) => touch(ctx, userId, sessionId, change, guard)),
    forkSession: ready((userId, f) => fork(ctx, userId, f)),
    deleteSession: ready((userId, sessionId, o) => deleteSession(ctx, userId, sessionId, o?.ifLastId)),
    lockSession: (userId, sessionId) => locks.lock(JSON.stringify([userId, sessionId])),
    appendTurn: ready((a, guard) => appendTurn(ctx, a, guard)),
    appendSummary: ready((userId, sessionId, summary, guard, trace) => appendSummary(ctx, userId, sessionId, summary, guard, trace)),
    turnKey: ready(async (userId, sessionId, key) => turnKey(ctx, userId, sessionId, key)),
    dailyDay: ready(async (userId, day) => readDay(dbs, userId, day)),
    dailyWindow: ready(async (userId, day, anchor, before, after) => dailyWindow(dbs, userId, day, { anchor, before, after })),
    days: ready(async (userId) => listDays(dbs, userId)),
    scanDaily: ready((userId, q) => scanDailyRows(ctx, userId, q.day, q.keyword, q.limit)),
    scanSession: ready((userId, sessionId, q) => scanSessionRows(ctx, userId, sessionId, q.keyword, q.limit)),
    dialogueLog: ready(async (userId, sessionId) => readLog(dbs, userId, sessionId).map(toLogRecord)),
    longTermVersions: ready(async (userId) => longTermVersions(dbs, userId)),
    factsState: ready(async (userId) => factsState(dbs, userId)),
    factsGeneration: ready(async (userId) => factsGeneration(dbs, userId)),
    factEntries: ready(async (userId, seqs) => factEntries(dbs, userId, seqs)),
    factHistory: ready(async (userId) => factHistory(dbs, userId)),
    commitFacts: ready((userId, change, guard) => commitFacts(ctx, userId, change, guard)),
    rank: ready((userId, q) => rank(ctx, userId, q)),
    rebuildIndex: ready((userId) => rebuildUserIndex(ctx, userId)),
    nearest: ready((userId, q) => nearest(ctx, userId, q, vectorPoolThreshold)),
    putVectors: ready((userId, vectors) => putVectors(ctx, userId, vectors)),
    backfillEmbeddings: ready(async (userId) => {
      if (!isEmbedLive(dbs, userId)) await backfillUser(dbs, userId);
    }),
    itemText: ready(async (userId, item, id) => itemText(dbs, userId, item, id)),
    importBatch: ready(async (userId, batch) => {
      if (batch.sessions !== undefined || batch.daily !== undefined || batch.log !== undefined || batch.sessionDocs !== undefined) {
        // The index waits for the import's end (`complete`) when the user is not live yet (index-hooks.ts).
        await commit(dbs, () => deferringIndex(userId, () => {
          incarnationTx(dbs, userId);
          if (batch.sessions !== undefined) {
            // High-water marks left by deleted sessions would shift the imported days' numbering.
            for (const key of [...dbs.counters.getKeys({ start: [userId, 'daily-high'], end: [userId, 'daily-high', HIGH] })]) dbs.counters.remove(key);
            let order = dbs.counters.get([userId, 'session-order']) ?? 0;
            for (const entry of batch.sessions) {
              dbs.sessions.put([userId, entry.sessionId], fromSessionEntry(entry));
              order = Math.max(order, entry.order);
            }
            dbs.counters.put([userId, 'session-order'], order);
          }
          for (const row of batch.daily ?? []) putDailyRow(dbs, userId, { day: row.day, ...fromDailyRecord(row) }, row.id);
          for (const row of batch.log ?? []) putLogRow(dbs, userId, row.sessionId, fromLogRecord(row, 0));
          for (const doc of batch.sessionDocs ?? []) {
            const order = sessionEntry(dbs, userId, doc.sessionId)?.order;
            if (order !== undefined) putSessionDoc(dbs, userId, order, { ...fromDailyRecord(doc), session_id: doc.sessionId, session_message_id: doc.sessionMessageId });
          }
        }));
      }
      if (batch.transcript !== undefined) await options.transcripts.append(sessionConversationId(userId, batch.transcript.sessionId), batch.transcript.entries);
      if (batch.summaries !== undefined) {
        await options.transcripts.append(summaryConversationId(sessionConversationId(userId, batch.summaries.sessionId)), batch.summaries.entries.map(summaryEntry));
      }
      if (batch.complete === true && !isLive(dbs.search, userId) && hasStoredDocs(dbs, userId)) await rebuildUserIndex(ctx, userId);
    }),
    async close() {
      await repaired;
    },
  };
}

/** Every user with keys in the dbs that hold a user's data: one seek per user, not per key. */
function knownUsers(ctx: LmdbContext): string[] {
  const { dbs } = ctx;
  const users = new Set<string>();
  for (const db of [dbs.sessions, dbs.daily, dbs.longTerm, dbs.log, dbs.facts] as unknown as Array<{ getKeys(o: object): Iterable<Key[]> }>) {
    let from: Key[] = [''];
    for (;;) {
      let next: string | undefined;
      for (const key of db.getKeys({ start: from, limit: 1 })) next = key[0] as string;
      if (next === undefined) break;
      users.add(next);
      // Past every key of this user, not past every id it prefixes (`alice` < `alice2`).
      from = [next, HIGH];
    }
  }
  return [...users].sort();
}

async function repairAtOpen(ctx: LmdbContext): Promise<void> {
  // Read now, before a turn of this process can mark a session.
  const cutShort = cutShortSessions(ctx.dbs);
  const lagging = laggingSessions(ctx.dbs);
  if (cutShort.length > 0) await listCutShortSessions(ctx, cutShort).catch(() => undefined);
  if (lagging.length > 0) await repairLaggingSessions(ctx, lagging).catch(() => undefined);
}

async function rank(ctx: LmdbContext, userId: string, q: { terms: readonly string[]; filters: RankedFilters; limit: number }): Promise<RankedDoc[]> {
  const { dbs, pool } = ctx;
  if (q.terms.length === 0) return [];
  if (!isLive(dbs.search, userId) && hasStoredDocs(dbs, userId)) await rebuildUserIndex(ctx, userId);
  const query = { userId, terms: [...q.terms], filters: q.filters, limit: q.limit };
  if (pool && !pool.closed && postingEstimate(dbs.search, userId, q.terms) > ctx.rankPoolThreshold) {
    return pool.run({ kind: 'rank', path: dbs.path, query });
  }
  return rankedDocs(dbs, query);
}


async function nearest(
  ctx: LmdbContext,
  userId: string,
  q: { item: 'd' | 'f'; vector: Float32Array; filters: RankedFilters; limit: number },
  poolThreshold: number,
): Promise<NearDoc[]> {
  const { dbs, pool } = ctx;
  if (q.item === 'f') {
    const scored: NearDoc[] = [];
    for (const { key, value } of dbs.embed.vectors.getRange({ start: [userId, 'f'], end: [userId, 'f', HIGH] as never })) {
      scored.push({ id: key[2], similarity: cosineWith(value, q.vector) });
    }
    return scored.sort((a, b) => b.similarity - a.similarity || b.id - a.id).slice(0, q.limit);
  }
  const reader = { vectors: dbs.embed.vectors, daily: dbs.daily, longTerm: dbs.longTerm, sessionDocs: dbs.search.sessionDocs };
  const cached = ctx.vectors.matrix(dbs.embed.vectors, userId, dbs.counters.get([userId, 'embed-version']));
  const ranked =
    pool && !pool.closed && cached === undefined && vectorCount(dbs.embed.vectors, userId) > poolThreshold
      ? await pool.run({ kind: 'vector', path: dbs.path, userId, query: [...q.vector], filters: q.filters, n: q.limit })
      : vectorRanking(reader, userId, q.vector, q.filters, q.limit, cached);
  const rowReader = { daily: dbs.daily, sessionDocs: dbs.search.sessionDocs };
  return ranked.map(([doc, similarity]) => {
    const ref = docRef(doc);
    const found = ref.kind === 'long_term' ? undefined : docRow(rowReader, userId, ref);
    return { id: doc, similarity, ...(found === undefined ? {} : { row: docRecord(found) }) };
  });
}

async function putVectors(ctx: LmdbContext, userId: string, vectors: readonly VectorWrite[]): Promise<number> {
  const { dbs } = ctx;
  return commit(dbs, () => {
    let n = 0;
    for (const v of vectors) {
      if (!ctx.queue.heldTx(v.job)) continue;
      const key = [userId, v.item, v.id] as [string, 'd' | 'f', number];
      // Queued meanwhile for newer text, or gone: the vector of this text is not stored.
      const now = itemText(dbs, userId, v.item, v.id);
      if (now === undefined || textHash(now) !== v.hash) continue;
      dbs.embed.vectors.put(key, encodeVector(v.hash, v.vector));
      ctx.queue.completeTx(v.job);
      n++;
    }
    if (n > 0) vectorsChanged(dbs.counters, userId);
    return n;
  });
}

async function scanDailyRows(ctx: LmdbContext, userId: string, day: string | null, keyword: string, limit: number) {
  const { dbs, pool } = ctx;
  const bound = dailyRowBound(dbs, userId, day);
  if (bound === 0) return [];
  const position: ScanPosition<Key> = { key: day === null ? [userId, HIGH] : [userId, day, HIGH], exclusive: false };
  const job = scanDaily({ json: dbs.daily, text: dbs.dailyText }, userId, day, keyword, limit, position);
  return runScan(job, bound, pool !== undefined && bound > ctx.poolThreshold, (wanted) =>
    // A chunk was seen before the pool is asked: the position is a row's key.
    pool!.run({ kind: 'daily', path: dbs.path, userId, day, keyword, limit: wanted, after: position.key as [string, string, number] }),
    limit,
  );
}

async function scanSessionRows(ctx: LmdbContext, userId: string, sessionId: string, keyword: string, limit: number): Promise<StoredMessage[]> {
  const conversationId = sessionConversationId(userId, sessionId);
  const last = await ctx.memory.lastId(conversationId);
  if (last === 0) return [];
  const { sessionScan: source, pool } = ctx;
  // A branched session's prefix lives in its source's rows: only the MessageLog stitches them.
  if (source !== undefined && sessionEntry(ctx.dbs, userId, sessionId)?.fork === undefined) {
    await ctx.journal?.settle(); // appends acknowledged but not yet in LMDB
    const position: ScanPosition<Key> = { key: [conversationId, Infinity], exclusive: true };
    const job = scanSession(source, conversationId, keyword, limit, Infinity, position);
    return runScan(job, last, pool !== undefined && last > ctx.poolThreshold, (wanted) =>
      pool!.run({ kind: 'session', path: ctx.dbs.path, conversationId, keyword, limit: wanted, before: (position.key as [string, number])[1] }),
      limit,
    );
  }
  // Through the MessageLog, newest chunk first (ids are contiguous: a chunk is an id range). A
  // range read materializes its rows, so chunks start small (a common keyword is answered by
  // the newest rows) and double up to SCAN_CHUNK; the event loop turns between them.
  const key = normalizeKeyword(keyword);
  const want = clampLimit(limit);
  const found: StoredMessage[] = [];
  let size = Math.min(SCAN_CHUNK, want * 4);
  for (let to = last; to >= 1 && found.length < want; to -= size, size = Math.min(SCAN_CHUNK, size * 2)) {
    await new Promise<void>((resolve) => setImmediate(resolve));
    const chunk = await ctx.memory.range(conversationId, { from: Math.max(1, to - size + 1), to });
    for (let i = chunk.length - 1; i >= 0 && found.length < want; i--) {
      const record = chunk[i]!;
      if (key === null || textContent(record.message).toLowerCase().includes(key)) found.push(record);
    }
  }
  return found.reverse();
}

