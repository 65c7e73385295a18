import type { PoolClient } from 'pg';
import { InvalidInputError } from '../../../errors.ts';
import { ForkError } from '../../../memory/contract/fork.ts';
import { createPostgresStore, postgresStoreInternals, type PostgresConnectionOption, type PostgresStore } from '../../../memory/postgres/postgres-store.ts';
import type { StoredMessage } from '../../../message.ts';
import { summaryConversationId, summaryEntry, SUMMARY_ID_PREFIX, toSummaryRecord, type SummaryRecord } from '../../../provider/summary-record.ts';
import { sessionConversationId, sessionConversationPrefix } from '../../recall-ids.ts';
import type { LogRecord, NewLogRecord, TurnKeyRecord } from '../../records/records.ts';
import { textContent } from '../../rows/session-row.ts';
import { isCalendarDay } from '../../rows/calendar-day.ts';
import { clampLimit, normalizeKeyword } from '../../search/keyword-search.ts';
import type { ErasureReport, ImportBatch, RecallStore, TurnAppend, TurnAppended, WriteGuard } from '../recall-store.ts';
import { StaleWriteError } from '../stale-write-error.ts';
import { dailyDay, dailyWindow, days, importDaily, mirrored, putDaily, removeSessionDaily, scanDaily, storedDaily } from './pg-daily.ts';
import { commitFacts, factEntries, factHistory, factsGeneration, factsState, longTermVersions } from './pg-facts.ts';
import { createPgJobQueue, type PgJobQueue } from './pg-job-queue.ts';
import { dailyDocOf, indexDocs, longTermDocs, rank, sessionDocOf, unindexDocs } from './pg-ranked-index.ts';
import { checkGuard, createPgContext, lockUser, num, type PgContext } from './pg-recall-context.ts';
import { createSessionLocks } from './pg-session-lock.ts';
import { cutShortSessions, listCutShort, putSession, registerSession, session, sessionIn, sessions, touchSession } from './pg-sessions.ts';
import { DEFAULT_LANGUAGE, languageOf, type LanguageSetting } from '../../../language.ts';
import { offlineTitle } from '../../rows/session-title.ts';
import { backfill, dropEmbeds, itemText, nearest, putVectors, queueEmbed } from './pg-vectors.ts';
import { USER_TABLES } from './recall-schema.ts';
import { DEFAULT_HNSW_RULE, startHnswBuild, type HnswRule } from './pgvector.ts';

/**
 * The PostgreSQL adapter of the storage port (recall-store.ts): the layered memory in tables
 * `recall_*` (recall-schema.ts) beside the message store's, in the same schema, for any number
 * of processes on one database.
 *
 * - ONE TRANSACTION per write. A turn's rows go through the message store's own append
 *   statements (postgres-store.ts internals: its numbering, idempotency keys and forks), run on
 *   this adapter's client inside the transaction that also writes their daily mirror, postings,
 *   log row, jobs, turn key and the session's listing; a crash commits all of it or none. So
 *   there is no crash repair to do at open (the LMDB adapter's watermarks have no counterpart).
 * - ORDER from the database: every write of a user first locks the user's `recall_users` row
 *   (pg-recall-context.ts), which numbers daily rows, log rows, sessions and facts, and orders
 *   erasure with everything; `lockSession` is an advisory lock on a dedicated connection
 *   (pg-session-lock.ts); jobs lease with `FOR UPDATE SKIP LOCKED` on the database's clock
 *   (pg-job-queue.ts).
 * - GUARDS (incarnation, job lease) are checked inside the write's transaction; a write whose
 *   guard no longer holds rolls back and rejects with `StaleWriteError`.
 * - ERASURE: everything of the user (their transcripts and summaries through the message store's
 *   erase statements, every `recall_*` row, leased jobs too) in one transaction, which also
 *   deletes the user's row: the next write makes a new incarnation, so guards taken before fail.
 * - RANKING: BM25 as search/bm25.ts (pg-ranked-index.ts); vectors by pgvector's `<=>` where the
 *   extension is installed, exact per user, HNSW when large (pgvector.ts), else cosine in JS
 *   (pg-vectors.ts). Keyword scans page newest first and match in JS.
 *
 * What it does not do (LMDB only): online compaction, the search pool. (The retention sweep
 * runs on PostgreSQL as a job of this store's queue: src/retention/.)
 */
export type PostgresRecallStoreOptions = (
  | {
      /**
       * The session transcripts: a store made by `createPostgresStore` (its schema holds the
       * recall tables too). `close()` leaves it open: it is the caller's.
       */
      transcripts: PostgresStore;
      /** Not with `transcripts`. */
      connectionString?: never;
      /** Not with `transcripts`. */
      pool?: never;
    }
  | (PostgresConnectionOption & {
      /** Not with a connection: the store makes its own `createPostgresStore` (closed by `close()`). */
      transcripts?: never;
    })
) & {
  /** With a connection: the schema of both stores' tables. Default `'mnemo'`. */
  schema?: string;
  /** Stored items queue embedding jobs. Default false. */
  embeddings?: boolean;
  /** Connections held by `lockSession` at most (a pool of their own). Default 10. */
  lockConnections?: number;
  /**
   * With pgvector (pgvector.ts): when the table's HNSW index is built (`tableRows` vectors of one
   * dimension) and when a user's search goes through it (`userRows` vectors of one item); below,
   * search is exact. Default `{ tableRows: 100_000, userRows: 10_000 }`. Ignored without pgvector.
   */
  hnsw?: {
    /** Vectors of one dimension in the table before its HNSW index is built. Default 100,000. */
    tableRows?: number;
    /** A user's vectors of one item (documents or facts) before their search goes through it. Default 10,000. */
    userRows?: number;
  };
  /** Of the offline title a session gets when a killed process cut its first turn short (`'auto'`: its message's). Default `'zh'`. */
  language?: LanguageSetting;
};

/** Rows of a session transcript a keyword scan reads at most per statement. */
const SCAN_CHUNK = 2048;

/**
 * The PostgreSQL recall store (see `PostgresRecallStoreOptions`). Connects lazily: the first
 * call creates the tables if missing (ordered migrations, safe from many processes at once).
 *
 * @throws `InvalidInputError` `invalid_option` for `transcripts` that are not a PostgreSQL store,
 * a `lockConnections` that is not a positive integer, or without a connection.
 *
 * @example
 * ```ts
 * import { createPostgresRecallStore, createPostgresStore } from 'mnemo/postgres';
 *
 * const transcripts = createPostgresStore({ connectionString: 'postgres://postgres@127.0.0.1:5432/mnemo' });
 * const store = createPostgresRecallStore({ transcripts });
 * console.log(await store.sessions('alice'));
 * await store.close();
 * await transcripts.close();
 * ```
 */
export function createPostgresRecallStore(options: PostgresRecallStoreOptions): RecallStore {
  // Checked before anything is opened.
  const lockConnections = options.lockConnections ?? 10;
  if (!Number.isSafeInteger(lockConnections) || lockConnections < 1) {
    throw new InvalidInputError('invalid_option', 'lockConnections must be a positive integer', { option: 'lockConnections' });
  }
  if (options.transcripts !== undefined && postgresStoreInternals(options.transcripts) === undefined) {
    throw new InvalidInputError('invalid_option', 'createPostgresRecallStore needs transcripts made by createPostgresStore', { option: 'transcripts' });
  }
  const owned =
    options.transcripts === undefined
      ? createPostgresStore({
          ...(options.pool !== undefined ? { pool: options.pool } : { connectionString: options.connectionString! }),
          ...(options.schema === undefined ? {} : { schema: options.schema }),
        })
      : undefined;
  const transcripts = options.transcripts ?? owned!;
  const internals = postgresStoreInternals(transcripts)!;
  const hnsw: HnswRule = { tableRows: options.hnsw?.tableRows ?? DEFAULT_HNSW_RULE.tableRows, userRows: options.hnsw?.userRows ?? DEFAULT_HNSW_RULE.userRows };
  for (const [name, value] of Object.entries(hnsw)) {
    if (!Number.isSafeInteger(value) || value < 1) throw new InvalidInputError('invalid_option', `hnsw.${name} must be a positive integer`, { option: `hnsw.${name}` });
  }
  const embeddings = options.embeddings ?? false;
  const ctx = createPgContext(internals, embeddings, hnsw);
  const queue = createPgJobQueue(ctx);
  let locks: ReturnType<typeof createSessionLocks> | undefined;
  const sessionLocks = () => (locks ??= createSessionLocks(internals.newPool(lockConnections), internals.schema));
  let closing: Promise<void> | undefined;
  // At open, in the background: sessions whose first turn a killed process cut short are listed
  // (pg-sessions.ts), each only while no turn of it runs anywhere (its lock is free). Best effort:
  // a failure leaves the marks for the next store to open.
  const language = options.language ?? DEFAULT_LANGUAGE;
  const titleOf = (first: string) => offlineTitle(first, languageOf(language, first));
  const repaired = (async () => {
    for (const [userId, sessionId] of await cutShortSessions(ctx)) {
      const release = await sessionLocks().tryLock(userId, sessionId);
      if (release === undefined) continue;
      try {
        await listCutShort(ctx, userId, sessionId, titleOf);
      } finally {
        await release();
      }
    }
  })().catch(() => undefined);
  // At open, in the background, with pgvector: the HNSW indexes the table has grown to need
  // (pgvector.ts), on a connection of their own that `close` drops (a build cut short is redone).
  const indexing = (async () => {
    await ctx.ready();
    const mode = ctx.vectors();
    if (mode.kind === 'pgvector') return startHnswBuild(internals.newPool(1), internals.schema, mode.ext, hnsw);
    return undefined;
  })().catch(() => undefined);

  return {
    engine: 'postgres',
    transcripts,
    jobs: queue,
    embeddings,
    users: async () => {
      // Every user with data has a row (their first write made it; erasure deletes it): a few
      // index probes per user, not a scan of every row.
      const rows = await ctx.read<{ user_id: string }>(
        `SELECT u.user_id FROM ${ctx.s}.recall_users u WHERE ${USERS_WITH_DATA.map((t) => `EXISTS (SELECT 1 FROM ${ctx.s}.${t} x WHERE x.user_id = u.user_id)`).join(' OR ')}`,
      );
      return rows.map((r) => r.user_id).sort();
    },
    hasData: async (userId) => {
      const rows = await ctx.read<{ found: boolean }>(
        `SELECT ${USERS_WITH_DATA.map((t) => `EXISTS (SELECT 1 FROM ${ctx.s}.${t} WHERE user_id = $1)`).join(' OR ')} AS found`,
        [userId],
      );
      return rows[0]?.found === true;
    },
    eraseUser: (userId) => eraseUser(ctx, userId),
    session: (userId, sessionId) => session(ctx, userId, sessionId),
    sessions: (userId) => sessions(ctx, userId),
    touchSession: (userId, sessionId, change, guard) =>
      ctx.tx(async (client) => {
        const user = await lockUser(ctx, client, userId);
        await checkGuard(ctx, client, userId, user, guard);
        return touchSession(ctx, client, userId, sessionId, change.title, change.updatedAt);
      }),
    forkSession: (userId, f) => forkSession(ctx, userId, f),
    deleteSession: (userId, sessionId, o) => deleteSession(ctx, userId, sessionId, o?.ifLastId),
    lockSession: async (userId, sessionId) => {
      internals.checkOpen();
      return sessionLocks().lock(userId, sessionId);
    },
    appendTurn: (a, guard) => appendTurn(ctx, queue, a, guard),
    appendSummary: (userId, sessionId, summary, guard) =>
      ctx.tx(async (client): Promise<SummaryRecord | undefined> => {
        const user = await lockUser(ctx, client, userId);
        await checkGuard(ctx, client, userId, user, guard);
        if ((await sessionIn(ctx, client, userId, sessionId))?.order !== guard.sessionOrder) throw new StaleWriteError('session_gone', userId);
        const companion = summaryConversationId(sessionConversationId(userId, sessionId));
        const [last] = await internals.tail(client, companion, 1);
        const latest = last === undefined ? undefined : toSummaryRecord(last);
        if ((latest?.id ?? null) !== summary.previous) return undefined;
        const [[stored]] = (await internals.append(client, [{ conversationId: companion, entries: [summaryEntry(summary)] }])) as [StoredMessage[]];
        return toSummaryRecord(stored!);
      }),
    turnKey: async (userId, sessionId, key) => {
      const rows = await ctx.read<{ value: string }>(`SELECT value::text AS value FROM ${ctx.s}.recall_turn_keys WHERE user_id = $1 AND session_id = $2 AND key = $3`, [
        userId,
        sessionId,
        key,
      ]);
      return rows[0] === undefined ? undefined : (JSON.parse(rows[0].value) as TurnKeyRecord);
    },
    dailyDay: (userId, day) => dailyDay(ctx, userId, day),
    dailyWindow: (userId, day, anchor, before, after) => dailyWindow(ctx, userId, day, anchor, before, after),
    days: (userId) => days(ctx, userId),
    scanDaily: (userId, q) => scanDaily(ctx, userId, q),
    scanSession: (userId, sessionId, q) => scanSession(transcripts, userId, sessionId, q.keyword, q.limit),
    dialogueLog: async (userId, sessionId) => {
      const rows = await ctx.read<{ seq: string; record: string }>(
        `SELECT seq, record::text AS record FROM ${ctx.s}.recall_log WHERE user_id = $1 AND ($2::text IS NULL OR session_id = $2) ORDER BY seq`,
        [userId, sessionId ?? null],
      );
      return rows.map((r): LogRecord => ({ seq: num(r.seq), ...(JSON.parse(r.record) as NewLogRecord) }));
    },
    longTermVersions: (userId) => longTermVersions(ctx, userId),
    factsState: (userId) => factsState(ctx, userId),
    factsGeneration: (userId) => factsGeneration(ctx, userId),
    factEntries: (userId, seqs) => factEntries(ctx, userId, seqs),
    factHistory: (userId) => factHistory(ctx, userId),
    commitFacts: (userId, change, guard) => commitFacts(ctx, queue, userId, change, guard),
    rank: (userId, q) => rank(ctx, userId, q),
    rebuildIndex: (userId) => rebuildIndex(ctx, userId),
    nearest: (userId, q) => nearest(ctx, userId, q),
    putVectors: (userId, vectors) => putVectors(ctx, userId, vectors),
    backfillEmbeddings: (userId) => backfill(ctx, queue, userId),
    itemText: (userId, item, id) => itemText(ctx, userId, item, id),
    importBatch: (userId, batch) => importBatch(ctx, queue, userId, batch),
    close(): Promise<void> {
      closing ??= (async () => {
        await repaired;
        await (await indexing)?.close();
        await queue.close();
        await locks?.close();
        await owned?.close();
      })();
      return closing;
    },
  };
}

/** The tables whose rows make a user "have data" (recall-store.ts `hasData`). */
const USERS_WITH_DATA = ['recall_sessions', 'recall_daily', 'recall_long_term', 'recall_log', 'recall_facts'] as const;

async function appendLog(ctx: PgContext, client: PoolClient, userId: string, sessionId: string, record: NewLogRecord): Promise<void> {
  const { error, imported, ...rest } = record;
  const stored = { ...rest, ...(error === undefined ? {} : { error }), ...(imported === undefined ? {} : { imported }) };
  // Numbered from the user's counter (its row is locked by this transaction), in one statement.
  await client.query(
    `WITH seq AS (UPDATE ${ctx.s}.recall_users SET log_seq = log_seq + 1 WHERE user_id = $1 RETURNING log_seq)
     INSERT INTO ${ctx.s}.recall_log (user_id, seq, session_id, record) SELECT $1, log_seq, $2, $3::json FROM seq`,
    [userId, sessionId, JSON.stringify(stored)],
  );
}

async function appendTurn(ctx: PgContext, queue: PgJobQueue, a: TurnAppend, guard: WriteGuard | undefined): Promise<TurnAppended> {
  const { userId, sessionId } = a;
  return ctx.tx(async (client, after) => {
    const user = await lockUser(ctx, client, userId);
    await checkGuard(ctx, client, userId, user, guard);
    if (a.opens !== undefined) await registerSession(ctx, client, userId, sessionId, a.opens.now);
    const conversationId = sessionConversationId(userId, sessionId);
    const [records] = (await ctx.log.append(client, [{ conversationId, entries: a.entries, key: a.idempotencyKey }])) as [StoredMessage[]];
    const side = a.with(records);
    for (const row of side.daily) {
      // A retried keyed append: its rows' mirrors are there already. (Only then: rows of a
      // transcript cleared behind recall's back are numbered from 1 again, and are new.)
      if (row.sessionMessageId === null) continue;
      if (a.idempotencyKey !== undefined && (await mirrored(ctx, client, userId, sessionId, row.sessionMessageId))) continue;
      const { id: _id, ...fresh } = row;
      await putDaily(ctx, queue, client, userId, fresh, after);
    }
    if (side.log !== undefined) await appendLog(ctx, client, userId, sessionId, side.log);
    for (const job of side.jobs ?? []) await queue.enqueueTx(client, job, after);
    if (side.turnKey !== undefined) {
      await client.query(
        `INSERT INTO ${ctx.s}.recall_turn_keys (user_id, session_id, key, value) VALUES ($1, $2, $3, $4::json)
         ON CONFLICT (user_id, session_id, key) DO UPDATE SET value = EXCLUDED.value`,
        [userId, sessionId, side.turnKey.key, JSON.stringify(side.turnKey.value)],
      );
    }
    const touched = side.touch === undefined ? undefined : await touchSession(ctx, client, userId, sessionId, side.touch.title, side.touch.updatedAt);
    return { records, ...(touched === undefined ? {} : { session: touched }), guard: { ...guard, incarnation: user.incarnation } };
  });
}

async function forkSession(ctx: PgContext, userId: string, f: { sourceId: string; messageId: number; targetId: string; title: string; now: string }): Promise<void> {
  await ctx.tx(async (client) => {
    await lockUser(ctx, client, userId);
    if ((await sessionIn(ctx, client, userId, f.targetId)) !== undefined) {
      throw new ForkError('fork_target_exists', `session ${f.targetId} already exists`, { sessionId: f.targetId });
    }
    const source = sessionConversationId(userId, f.sourceId);
    const target = sessionConversationId(userId, f.targetId);
    const refused = await ctx.log.fork(client, target, source, f.messageId);
    if (refused !== undefined) throw refused;
    // The target starts with the source's summaries that cover no row after the branch point.
    let at = 0;
    const companion = summaryConversationId(source);
    for (const stored of await ctx.log.range(client, companion, 1, Number.MAX_SAFE_INTEGER, 1_000_000)) {
      const summary = toSummaryRecord(stored);
      if (summary === undefined) continue;
      if (summary.to > f.messageId) break;
      at = summary.id;
    }
    if (at > 0) {
      const refusedSummary = await ctx.log.fork(client, summaryConversationId(target), companion, at);
      if (refusedSummary !== undefined) throw refusedSummary;
    }
    await registerSession(ctx, client, userId, f.targetId, f.now, { fork: { sessionId: f.sourceId, messageId: f.messageId } });
    await touchSession(ctx, client, userId, f.targetId, f.title, f.now);
  });
}

async function deleteSession(ctx: PgContext, userId: string, sessionId: string, ifLastId: number | undefined): Promise<'deleted' | 'missing' | 'changed'> {
  return ctx.tx(async (client) => {
    if (ifLastId === undefined) await lockUser(ctx, client, userId);
    else {
      // The retention sweep's form: a user with no row (never written, or erased since the
      // sweep read the session) has no session to delete, and gets no row from it.
      const { rowCount } = await client.query(`SELECT 1 FROM ${ctx.s}.recall_users WHERE user_id = $1 FOR UPDATE`, [userId]);
      if (rowCount === 0) return 'missing';
    }
    const conversationId = sessionConversationId(userId, sessionId);
    const entry = await sessionIn(ctx, client, userId, sessionId);
    // Locked: an append to the transcript (through the runtime's memory, say) cannot slip in
    // between this check and the deletion.
    const last = await ctx.log.lastId(client, conversationId, true);
    if (ifLastId !== undefined && last !== ifLastId) return 'changed';
    const existed = entry !== undefined || last > 0;
    await ctx.log.clear(client, conversationId);
    await ctx.log.clear(client, summaryConversationId(conversationId));
    let removed = 0;
    if (entry !== undefined) removed += await removeSessionDocs(ctx, client, userId, entry.order);
    removed += await removeSessionDaily(ctx, client, userId, sessionId);
    await client.query(`DELETE FROM ${ctx.s}.recall_log WHERE user_id = $1 AND session_id = $2`, [userId, sessionId]);
    await client.query(`DELETE FROM ${ctx.s}.recall_turn_keys WHERE user_id = $1 AND session_id = $2`, [userId, sessionId]);
    await client.query(`DELETE FROM ${ctx.s}.recall_sessions WHERE user_id = $1 AND session_id = $2`, [userId, sessionId]);
    return existed || removed > 0 ? 'deleted' : 'missing';
  });
}

async function removeSessionDocs(ctx: PgContext, client: PoolClient, userId: string, order: number): Promise<number> {
  const { rows } = await client.query<{ id: string; record: string }>(`DELETE FROM ${ctx.s}.recall_session_docs WHERE user_id = $1 AND ord = $2 RETURNING id, record::text AS record`, [
    userId,
    order,
  ]);
  const docs = rows.map((r) => sessionDocOf(order, Number(r.id), JSON.parse(r.record))).filter((d) => d !== null);
  await unindexDocs(ctx, client, userId, docs);
  await dropEmbeds(ctx, client, userId, 'd', docs.map((d) => d.doc));
  return rows.length;
}

async function eraseUser(ctx: PgContext, userId: string): Promise<ErasureReport> {
  return ctx.tx(async (client) => {
    // The user's row first (as every write takes it): writes in flight finish before, later ones
    // find no row and make a new incarnation.
    await client.query(`SELECT 1 FROM ${ctx.s}.recall_users WHERE user_id = $1 FOR UPDATE`, [userId]);
    const ids = new Set<string>();
    const named = await client.query<{ session_id: string }>(
      `SELECT session_id FROM ${ctx.s}.recall_sessions WHERE user_id = $1
       UNION SELECT session_id FROM ${ctx.s}.recall_daily WHERE user_id = $1 AND session_id IS NOT NULL
       UNION SELECT session_id FROM ${ctx.s}.recall_log WHERE user_id = $1 AND session_id <> ''`,
      [userId],
    );
    for (const { session_id } of named.rows) {
      const c = sessionConversationId(userId, session_id);
      ids.add(c);
      ids.add(summaryConversationId(c));
    }
    // And whatever transcript the index does not name (the prefixes find it).
    const prefixes = [sessionConversationPrefix(userId), `${SUMMARY_ID_PREFIX}/${sessionConversationPrefix(userId)}`];
    const found = await client.query<{ conversation_id: string }>(
      `SELECT conversation_id FROM ${ctx.s}.conversations WHERE EXISTS (
         SELECT 1 FROM unnest($1::text[]) AS p(prefix) WHERE conversation_id >= p.prefix AND conversation_id < p.prefix || chr(1114111))`,
      [prefixes],
    );
    for (const { conversation_id } of found.rows) ids.add(conversation_id);
    await ctx.log.erase(client, [...ids], prefixes);
    let keys = 0;
    for (const table of USER_TABLES) keys += (await client.query(`DELETE FROM ${ctx.s}.${table} WHERE user_id = $1`, [userId])).rowCount ?? 0;
    // The incarnation ends with the row: guards taken before fail.
    await client.query(`DELETE FROM ${ctx.s}.recall_users WHERE user_id = $1`, [userId]);
    return { conversations: ids.size, keys };
  });
}

async function rebuildIndex(ctx: PgContext, userId: string): Promise<number> {
  return ctx.tx(async (client) => {
    await lockUser(ctx, client, userId);
    await client.query(`DELETE FROM ${ctx.s}.recall_postings WHERE user_id = $1`, [userId]);
    await client.query(`DELETE FROM ${ctx.s}.recall_docs WHERE user_id = $1`, [userId]);
    await client.query(`UPDATE ${ctx.s}.recall_users SET index_docs = 0, index_length = 0 WHERE user_id = $1`, [userId]);
    const lt = await client.query<{ record: string }>(`SELECT record::text AS record FROM ${ctx.s}.recall_long_term WHERE user_id = $1 ORDER BY version DESC LIMIT 1`, [userId]);
    if (lt.rows[0] !== undefined) await indexDocs(ctx, client, userId, longTermDocs((JSON.parse(lt.rows[0].record) as { content: string }).content));
    const daily = await client.query<{ day: string; id: string; record: string }>(`SELECT day, id, record::text AS record FROM ${ctx.s}.recall_daily WHERE user_id = $1 ORDER BY day, id`, [userId]);
    const docs = daily.rows.map((r) => dailyDocOf({ day: r.day, id: Number(r.id), ...JSON.parse(r.record) })).filter((d) => d !== null);
    const sessionDocs = await client.query<{ ord: string; id: string; record: string }>(`SELECT ord, id, record::text AS record FROM ${ctx.s}.recall_session_docs WHERE user_id = $1 ORDER BY ord, id`, [userId]);
    docs.push(...sessionDocs.rows.map((r) => sessionDocOf(Number(r.ord), Number(r.id), JSON.parse(r.record))).filter((d) => d !== null));
    return indexDocs(ctx, client, userId, docs);
  });
}

async function importBatch(ctx: PgContext, queue: PgJobQueue, userId: string, batch: ImportBatch): Promise<void> {
  await ctx.tx(async (client, after) => {
    await lockUser(ctx, client, userId);
    if (batch.sessions !== undefined) {
      // High-water marks left by deleted sessions would shift the imported days' numbering.
      await client.query(`DELETE FROM ${ctx.s}.recall_daily_high WHERE user_id = $1`, [userId]);
      for (const entry of batch.sessions) await putSession(ctx, client, userId, entry);
    }
    await importDaily(ctx, queue, client, userId, batch.daily ?? [], after);
    for (const row of batch.log ?? []) await appendLog(ctx, client, userId, row.sessionId, row);
    for (const doc of batch.sessionDocs ?? []) {
      const entry = await sessionIn(ctx, client, userId, doc.sessionId);
      if (entry === undefined) continue;
      const { id: _id, ...row } = doc;
      // Dated by its own `ts` (no daily row holds it), as on every engine ('': no day filter passes it).
      const tsDay = doc.ts.slice(0, 10);
      const stored = { ...storedDaily({ ...row, sessionId: doc.sessionId, sessionMessageId: doc.sessionMessageId }), day: isCalendarDay(tsDay) ? tsDay : '' };
      await client.query(
        `INSERT INTO ${ctx.s}.recall_session_docs (user_id, ord, id, session_id, record) VALUES ($1, $2, $3, $4, $5::json)
         ON CONFLICT (user_id, ord, id) DO UPDATE SET session_id = EXCLUDED.session_id, record = EXCLUDED.record`,
        [userId, entry.order, doc.sessionMessageId, doc.sessionId, JSON.stringify(stored)],
      );
      const indexed = sessionDocOf(entry.order, doc.sessionMessageId, stored);
      if (indexed !== null) {
        await indexDocs(ctx, client, userId, [indexed]);
        await queueEmbed(ctx, queue, client, userId, 'd', indexed.doc, after);
      }
    }
    if (batch.transcript !== undefined) {
      await ctx.log.append(client, [{ conversationId: sessionConversationId(userId, batch.transcript.sessionId), entries: batch.transcript.entries }]);
    }
    if (batch.summaries !== undefined) {
      await ctx.log.append(client, [
        { conversationId: summaryConversationId(sessionConversationId(userId, batch.summaries.sessionId)), entries: batch.summaries.entries.map(summaryEntry) },
      ]);
    }
  });
}

/**
 * Keyword scan of a session transcript, through the message store (a branched session's prefix
 * is its source's rows: only the MessageLog stitches them), newest chunk first, chunks growing to
 * `SCAN_CHUNK`.
 */
async function scanSession(transcripts: PostgresStore, userId: string, sessionId: string, keyword: string, limit: number): Promise<StoredMessage[]> {
  const conversationId = sessionConversationId(userId, sessionId);
  const last = await transcripts.lastId(conversationId);
  if (last === 0) return [];
  const key = normalizeKeyword(keyword);
  const want = clampLimit(limit);
  const found: StoredMessage[] = [];
  let size = Math.min(SCAN_CHUNK, want * 4);
  for (let to = last; to >= 1 && found.length < want; to -= size, size = Math.min(SCAN_CHUNK, size * 2)) {
    const chunk = await transcripts.range(conversationId, { from: Math.max(1, to - size + 1), to });
    for (let i = chunk.length - 1; i >= 0 && found.length < want; i--) {
      const record = chunk[i]!;
      if (key === null || textContent(record.message).toLowerCase().includes(key)) found.push(record);
    }
  }
  return found.reverse();
}

/** Whether `log` is a store made by `createPostgresStore` (the transcripts this adapter needs). */
export function isPostgresStore(log: unknown): log is PostgresStore {
  return postgresStoreInternals(log) !== undefined;
}
