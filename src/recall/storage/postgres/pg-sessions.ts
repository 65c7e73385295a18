import type { PoolClient } from 'pg';
import type { SessionEntry } from '../../records/records.ts';
import { sessionConversationId } from '../../recall-ids.ts';
import { toSessionRow } from '../../rows/session-row.ts';
import { lockUser, num, type PgContext } from './pg-recall-context.ts';

/**
 * The sessions index in PostgreSQL (`recall_sessions`, one row per session): a session is
 * registered unlisted by its first write with the user's next creation order
 * (`recall_users.session_order`, bumped under the user's row lock), listed by `touch` at the end
 * of a turn (the first title to land stays). Its fork link, Demo ids and imported entry ride in
 * `extra` (json). Every function here runs inside a write transaction holding the user's row.
 *
 * Unlike LMDB, the rows a turn writes and the session's registration commit in one
 * transaction, so no crash leaves rows without their daily mirror. A process killed between a
 * first turn's user row and its reply leaves the session registered, unlisted and marked
 * (`first_turn`): a store opening later lists it (`listCutShortSessions`), unless a turn of it
 * is running in some process (it holds the session's lock), as the LMDB adapter does at start.
 */
interface SessionRow {
  session_id: string;
  title: string;
  updated_at: string;
  ord: string | number;
  listed: boolean;
  extra: string | null;
}

const SELECT = 'session_id, title::text AS title, updated_at, ord, listed, extra::text AS extra';

export function toSessionEntry(row: SessionRow): SessionEntry {
  const extra = row.extra === null ? {} : (JSON.parse(row.extra) as Pick<SessionEntry, 'fork' | 'demoIds' | 'imported'>);
  return { sessionId: row.session_id, title: JSON.parse(row.title) as string, updatedAt: row.updated_at, order: num(row.ord), listed: row.listed, ...extra };
}

function extraOf(entry: Pick<SessionEntry, 'fork' | 'demoIds' | 'imported'>): string | null {
  const extra = {
    ...(entry.fork === undefined ? {} : { fork: entry.fork }),
    ...(entry.demoIds === undefined ? {} : { demoIds: entry.demoIds }),
    ...(entry.imported === undefined ? {} : { imported: entry.imported }),
  };
  return Object.keys(extra).length === 0 ? null : JSON.stringify(extra);
}

export async function sessionIn(ctx: PgContext, client: PoolClient, userId: string, sessionId: string): Promise<SessionEntry | undefined> {
  const { rows } = await client.query<SessionRow>(`SELECT ${SELECT} FROM ${ctx.s}.recall_sessions WHERE user_id = $1 AND session_id = $2`, [userId, sessionId]);
  return rows[0] === undefined ? undefined : toSessionEntry(rows[0]);
}

export async function session(ctx: PgContext, userId: string, sessionId: string): Promise<SessionEntry | undefined> {
  const rows = await ctx.read<SessionRow>(`SELECT ${SELECT} FROM ${ctx.s}.recall_sessions WHERE user_id = $1 AND session_id = $2`, [userId, sessionId]);
  return rows[0] === undefined ? undefined : toSessionEntry(rows[0]);
}

export async function sessions(ctx: PgContext, userId: string): Promise<SessionEntry[]> {
  return (await ctx.read<SessionRow>(`SELECT ${SELECT} FROM ${ctx.s}.recall_sessions WHERE user_id = $1 ORDER BY ord, session_id`, [userId])).map(toSessionEntry);
}

/** Registers the session (unlisted) unless it is known; the entry. */
export async function registerSession(ctx: PgContext, client: PoolClient, userId: string, sessionId: string, now: string, extra?: Pick<SessionEntry, 'fork'>): Promise<SessionEntry> {
  const known = await sessionIn(ctx, client, userId, sessionId);
  if (known !== undefined) return known;
  const { rows } = await client.query<{ session_order: string }>(`UPDATE ${ctx.s}.recall_users SET session_order = session_order + 1 WHERE user_id = $1 RETURNING session_order`, [userId]);
  const order = num(rows[0]!.session_order);
  const entry: SessionEntry = { sessionId, title: '', updatedAt: now, order, listed: false, ...(extra?.fork === undefined ? {} : { fork: extra.fork }) };
  await putSession(ctx, client, userId, entry);
  // Marked until its first turn ends (touch): a process killed in between leaves the mark.
  await client.query(`UPDATE ${ctx.s}.recall_sessions SET first_turn = true WHERE user_id = $1 AND session_id = $2`, [userId, sessionId]);
  return entry;
}

/** Stores the entry as given (an import keeps its `order`; the user's counter is raised to it). */
export async function putSession(ctx: PgContext, client: PoolClient, userId: string, entry: SessionEntry): Promise<void> {
  await client.query(
    `INSERT INTO ${ctx.s}.recall_sessions (user_id, session_id, title, updated_at, ord, listed, extra) VALUES ($1, $2, $3::json, $4, $5, $6, $7::json)
     ON CONFLICT (user_id, session_id) DO UPDATE SET title = EXCLUDED.title, updated_at = EXCLUDED.updated_at, ord = EXCLUDED.ord, listed = EXCLUDED.listed, extra = EXCLUDED.extra`,
    [userId, entry.sessionId, JSON.stringify(entry.title), entry.updatedAt, entry.order, entry.listed, extraOf(entry)],
  );
  await client.query(`UPDATE ${ctx.s}.recall_users SET session_order = GREATEST(session_order, $2) WHERE user_id = $1`, [userId, entry.order]);
}

/** Lists the session, keeps a title it has or takes `title`, refreshes `updatedAt` (registers it first if unknown). */
export async function touchSession(ctx: PgContext, client: PoolClient, userId: string, sessionId: string, title: string, updatedAt: string): Promise<SessionEntry> {
  await registerSession(ctx, client, userId, sessionId, updatedAt);
  const { rows } = await client.query<SessionRow>(
    `UPDATE ${ctx.s}.recall_sessions SET title = CASE WHEN title::text = '""' THEN $3::json ELSE title END, updated_at = $4, listed = true, first_turn = false
     WHERE user_id = $1 AND session_id = $2 RETURNING ${SELECT}`,
    [userId, sessionId, JSON.stringify(title), updatedAt],
  );
  return toSessionEntry(rows[0]!);
}

/** Sessions whose first turn has not ended (a turn in flight, or one a killed process left). */
export async function cutShortSessions(ctx: PgContext): Promise<Array<[userId: string, sessionId: string]>> {
  return (await ctx.read<{ user_id: string; session_id: string }>(`SELECT user_id, session_id FROM ${ctx.s}.recall_sessions WHERE first_turn ORDER BY user_id, session_id`)).map((r) => [
    r.user_id,
    r.session_id,
  ]);
}

/**
 * Lists a session whose first turn was cut short after it stored rows (titled from its first
 * message, as a failed turn is, dated by its last row), or forgets the mark of one with none.
 * The caller holds the session's lock (no turn of it runs anywhere). Whether it listed it.
 */
export async function listCutShort(ctx: PgContext, userId: string, sessionId: string, titleOf: (first: string) => string): Promise<boolean> {
  return ctx.tx(async (client) => {
    await lockUser(ctx, client, userId);
    const { rows } = await client.query<{ listed: boolean }>(`SELECT listed FROM ${ctx.s}.recall_sessions WHERE user_id = $1 AND session_id = $2 AND first_turn`, [userId, sessionId]);
    if (rows[0] === undefined) return false;
    const conversationId = sessionConversationId(userId, sessionId);
    const [first] = rows[0].listed ? [] : await ctx.log.range(client, conversationId, 1, Number.MAX_SAFE_INTEGER, 1);
    const [last] = first === undefined ? [] : await ctx.log.tail(client, conversationId, 1);
    if (first === undefined || last === undefined) {
      await client.query(`UPDATE ${ctx.s}.recall_sessions SET first_turn = false WHERE user_id = $1 AND session_id = $2`, [userId, sessionId]);
      return false;
    }
    await touchSession(ctx, client, userId, sessionId, titleOf(toSessionRow(first).content), toSessionRow(last).ts);
    return true;
  });
}
