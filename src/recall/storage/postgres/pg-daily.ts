import type { PoolClient } from 'pg';
import type { DailyRecord, NewDailyRecord } from '../../records/records.ts';
import { dailyDoc } from '../../search/doc-numbers.ts';
import { clampLimit, normalizeKeyword } from '../../search/keyword-search.ts';
import type { PgJobQueue } from './pg-job-queue.ts';
import { dailyDocOf, indexDocs, unindexDocs } from './pg-ranked-index.ts';
import type { PgContext } from './pg-recall-context.ts';
import { dropEmbeds, queueEmbed } from './pg-vectors.ts';

/**
 * The daily view in PostgreSQL (`recall_daily`): per user and local day, ids 1, 2, 3, ... A
 * row's id is assigned inside the transaction that stores it, under the user's row lock
 * (pg-recall-context.ts), as one more than the day's highest id or its high-water mark
 * (`recall_daily_high`, kept when a deletion removes a day's last rows), so ids are never
 * shared, skipped by a race, or reused, across processes. The row's document is indexed and its
 * embedding queued in the same transaction; removing a session's rows unindexes them.
 *
 * KEYWORD SCANS match in JS (search/keyword-search.ts: case-folded substring on `content`,
 * JavaScript's `toLowerCase`, which PostgreSQL's `lower` does not equal for every script), newest
 * first, in pages, stopping at `limit` matches.
 */
export function storedDaily(r: NewDailyRecord): Omit<DailyRecord, 'day' | 'id'> {
  return {
    ts: r.ts,
    role: r.role,
    content: r.content,
    sessionId: r.sessionId,
    sessionMessageId: r.sessionMessageId,
    ...(r.toolCalls === undefined || r.toolCalls.length === 0 ? {} : { toolCalls: r.toolCalls }),
    ...(r.error === undefined ? {} : { error: r.error }),
    ...(r.imported === undefined ? {} : { imported: r.imported }),
  };
}

function toDaily(row: { day: string; id: string | number; record: string }): DailyRecord {
  return { day: row.day, id: Number(row.id), ...(JSON.parse(row.record) as Omit<DailyRecord, 'day' | 'id'>) };
}

const SELECT = 'day, id, record::text AS record';

/** Inside a write transaction holding the user's row: stores the row (`id` given: kept, an import), indexes it; its id. */
export async function putDaily(ctx: PgContext, queue: PgJobQueue, client: PoolClient, userId: string, row: NewDailyRecord, after: (fn: () => void) => void): Promise<number> {
  const stored = storedDaily(row);
  const { rows } = await client.query<{ id: string }>(
    `INSERT INTO ${ctx.s}.recall_daily (user_id, day, id, session_id, session_message_id, record)
     VALUES ($1, $2, COALESCE($3::bigint, GREATEST(
       (SELECT max(id) FROM ${ctx.s}.recall_daily WHERE user_id = $1 AND day = $2),
       (SELECT high FROM ${ctx.s}.recall_daily_high WHERE user_id = $1 AND day = $2), 0) + 1), $4, $5, $6::json)
     ON CONFLICT (user_id, day, id) DO UPDATE SET session_id = EXCLUDED.session_id, session_message_id = EXCLUDED.session_message_id, record = EXCLUDED.record
     RETURNING id`,
    [userId, row.day, row.id ?? null, row.sessionId, row.sessionMessageId, JSON.stringify(stored)],
  );
  const id = Number(rows[0]!.id);
  const doc = dailyDocOf({ day: row.day, id, content: row.content, ...(stored.toolCalls === undefined ? {} : { toolCalls: stored.toolCalls }) });
  if (doc !== null) {
    await indexDocs(ctx, client, userId, [doc]);
    await queueEmbed(ctx, queue, client, userId, 'd', doc.doc, after);
  }
  return id;
}

/**
 * Inside a write transaction holding the user's row: stores imported rows (each with its `id`)
 * in one statement, indexes them in one more, and queues their embeddings. A row repeated in the
 * batch is stored once, as its last occurrence. Rows without an id take `putDaily`, one by one,
 * in order (their ids depend on the rows before them).
 */
export async function importDaily(ctx: PgContext, queue: PgJobQueue, client: PoolClient, userId: string, rows: readonly NewDailyRecord[], after: (fn: () => void) => void): Promise<void> {
  if (rows.some((r) => r.id === undefined)) {
    for (const row of rows) await putDaily(ctx, queue, client, userId, row, after);
    return;
  }
  const last = new Map<string, NewDailyRecord & { id: number }>();
  for (const row of rows) last.set(`${row.day}\n${row.id}`, row as NewDailyRecord & { id: number });
  const kept = [...last.values()];
  if (kept.length === 0) return;
  const stored = kept.map(storedDaily);
  await client.query(
    `INSERT INTO ${ctx.s}.recall_daily (user_id, day, id, session_id, session_message_id, record)
     SELECT $1, x.day, x.id, x.sid, x.smid, x.record::json FROM unnest($2::text[], $3::bigint[], $4::text[], $5::bigint[], $6::text[]) AS x(day, id, sid, smid, record)
     ON CONFLICT (user_id, day, id) DO UPDATE SET session_id = EXCLUDED.session_id, session_message_id = EXCLUDED.session_message_id, record = EXCLUDED.record`,
    [userId, kept.map((r) => r.day), kept.map((r) => r.id), kept.map((r) => r.sessionId), kept.map((r) => r.sessionMessageId), stored.map((r) => JSON.stringify(r))],
  );
  const docs = kept.map((r, i) => dailyDocOf({ day: r.day, id: r.id, content: r.content, ...(stored[i]!.toolCalls === undefined ? {} : { toolCalls: stored[i]!.toolCalls }) })).filter((d) => d !== null);
  await indexDocs(ctx, client, userId, docs);
  for (const doc of docs) await queueEmbed(ctx, queue, client, userId, 'd', doc.doc, after);
}

/** Inside a write transaction: whether the session's row `sessionMessageId` has its daily mirror. */
export async function mirrored(ctx: PgContext, client: PoolClient, userId: string, sessionId: string, sessionMessageId: number): Promise<boolean> {
  const { rowCount } = await client.query(`SELECT 1 FROM ${ctx.s}.recall_daily WHERE user_id = $1 AND session_id = $2 AND session_message_id = $3 LIMIT 1`, [
    userId,
    sessionId,
    sessionMessageId,
  ]);
  return (rowCount ?? 0) > 0;
}

/** Inside a write transaction: removes every daily row of the session (keeping each day's high-water mark); how many. */
export async function removeSessionDaily(ctx: PgContext, client: PoolClient, userId: string, sessionId: string): Promise<number> {
  const { rows } = await client.query<{ day: string; id: string; record: string }>(`SELECT ${SELECT} FROM ${ctx.s}.recall_daily WHERE user_id = $1 AND session_id = $2`, [userId, sessionId]);
  if (rows.length === 0) return 0;
  const days = [...new Set(rows.map((r) => r.day))];
  await client.query(
    `INSERT INTO ${ctx.s}.recall_daily_high (user_id, day, high)
     SELECT $1, d.day, (SELECT max(id) FROM ${ctx.s}.recall_daily WHERE user_id = $1 AND day = d.day) FROM unnest($2::text[]) AS d(day)
     ON CONFLICT (user_id, day) DO UPDATE SET high = GREATEST(${ctx.s}.recall_daily_high.high, EXCLUDED.high)`,
    [userId, days],
  );
  const records = rows.map(toDaily);
  await unindexDocs(
    ctx,
    client,
    userId,
    records.map((r) => dailyDocOf(r)).filter((d) => d !== null),
  );
  await dropEmbeds(
    ctx,
    client,
    userId,
    'd',
    records.map((r) => dailyDoc(r.day, r.id)).filter((d) => d !== null),
  );
  await client.query(`DELETE FROM ${ctx.s}.recall_daily WHERE user_id = $1 AND session_id = $2`, [userId, sessionId]);
  return rows.length;
}

export async function dailyDay(ctx: PgContext, userId: string, day: string): Promise<DailyRecord[]> {
  return (await ctx.read<{ day: string; id: string; record: string }>(`SELECT ${SELECT} FROM ${ctx.s}.recall_daily WHERE user_id = $1 AND day = $2 ORDER BY id`, [userId, day])).map(toDaily);
}

export async function dailyWindow(ctx: PgContext, userId: string, day: string, anchor: number, before: number, after: number): Promise<DailyRecord[]> {
  // One statement, one snapshot: the anchor and its neighbours.
  const rows = await ctx.read<{ day: string; id: string; record: string; part: number }>(
    `WITH a AS (SELECT ${SELECT} FROM ${ctx.s}.recall_daily WHERE user_id = $1 AND day = $2 AND id = $3)
     SELECT *, 0 AS part FROM a
     UNION ALL (SELECT ${SELECT}, -1 AS part FROM ${ctx.s}.recall_daily WHERE EXISTS (SELECT 1 FROM a) AND user_id = $1 AND day = $2 AND id < $3 ORDER BY id DESC LIMIT $4)
     UNION ALL (SELECT ${SELECT}, 1 AS part FROM ${ctx.s}.recall_daily WHERE EXISTS (SELECT 1 FROM a) AND user_id = $1 AND day = $2 AND id > $3 ORDER BY id LIMIT $5)`,
    [userId, day, anchor, Math.max(0, before), Math.max(0, after)],
  );
  return rows.map(toDaily).sort((x, y) => x.id - y.id);
}

export async function days(ctx: PgContext, userId: string): Promise<string[]> {
  // A skip scan: one index probe per day, so the cost grows with days, not rows.
  const rows = await ctx.read<{ day: string }>(
    `WITH RECURSIVE d(day) AS (
       (SELECT day FROM ${ctx.s}.recall_daily WHERE user_id = $1 ORDER BY day LIMIT 1)
       UNION ALL
       SELECT (SELECT n.day FROM ${ctx.s}.recall_daily n WHERE n.user_id = $1 AND n.day > d.day ORDER BY n.day LIMIT 1) FROM d WHERE d.day IS NOT NULL
     )
     SELECT day FROM d WHERE day IS NOT NULL`,
    [userId],
  );
  return rows.map((r) => r.day);
}

/** Rows scanned per page, newest first. */
const SCAN_PAGE = 500;

export async function scanDaily(ctx: PgContext, userId: string, q: { day: string | null; keyword: string; limit: number }): Promise<DailyRecord[]> {
  const key = normalizeKeyword(q.keyword);
  const want = clampLimit(q.limit);
  const found: DailyRecord[] = [];
  // Keyset pages down the (day, id) order: each page a short index range scan.
  let before: [string, number] = ['\u{10FFFF}', Number.MAX_SAFE_INTEGER];
  for (;;) {
    const page = key === null ? want - found.length : SCAN_PAGE;
    const rows = await ctx.read<{ day: string; id: string; record: string }>(
      `SELECT ${SELECT} FROM ${ctx.s}.recall_daily WHERE user_id = $1 AND ($2::text IS NULL OR day = $2) AND (day, id) < ($3::text COLLATE "C", $4::bigint)
       ORDER BY day DESC, id DESC LIMIT $5`,
      [userId, q.day, before[0], before[1], page],
    );
    for (const row of rows) {
      const record = toDaily(row);
      if (key === null || record.content.toLowerCase().includes(key)) found.push(record);
      if (found.length >= want) return found.reverse();
    }
    if (rows.length < page) return found.reverse();
    const last = rows[rows.length - 1]!;
    before = [last.day, Number(last.id)];
  }
}
