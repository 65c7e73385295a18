import type { PoolClient } from 'pg';
import { factSeq, type DocTemplate, type FactEntry } from '../../records/fact-entry.ts';
import type { LongTermRecord } from '../../records/records.ts';
import type { FactsChange, FactsState, WriteGuard } from '../recall-store.ts';
import { StaleWriteError } from '../stale-write-error.ts';
import type { PgJobQueue } from './pg-job-queue.ts';
import { reindexLongTerm } from './pg-ranked-index.ts';
import { leaseHeld, lockUser, num, type PgContext } from './pg-recall-context.ts';
import { dropEmbeds, embedLongTermChange, queueEmbed } from './pg-vectors.ts';

/**
 * Long-term memory and its facts in PostgreSQL: `recall_long_term` (every version of the
 * document), `recall_facts` (every entry ever written; `current` and `key` columns, with a
 * UNIQUE index on the current entries' keys: at most one current entry per key is the
 * database's rule), the document's shape and the generation in the user's `recall_users` row.
 *
 * `commitFacts` takes the user's row lock, then compares the generation, the incarnation and
 * the job's lease INSIDE that transaction: of two changes computed from one state, exactly one
 * applies (in any process), the other is told to read again. Entries are written ended first,
 * so a key passes from an old entry to its successor without tripping the unique index.
 * Long-term versions written here reindex the document's lines and queue their embeddings in
 * the same transaction.
 */
interface LongTermRow {
  version: string;
  record: string;
}

function toLongTerm(row: LongTermRow): LongTermRecord {
  const v = JSON.parse(row.record) as Omit<LongTermRecord, 'version'>;
  return { version: num(row.version), ...v };
}

export async function longTermVersions(ctx: PgContext, userId: string): Promise<LongTermRecord[]> {
  return (await ctx.read<LongTermRow>(`SELECT version, record::text AS record FROM ${ctx.s}.recall_long_term WHERE user_id = $1 ORDER BY version`, [userId])).map(toLongTerm);
}

export async function factsGeneration(ctx: PgContext, userId: string): Promise<string> {
  const rows = await ctx.read<{ facts_gen: string }>(`SELECT facts_gen FROM ${ctx.s}.recall_users WHERE user_id = $1`, [userId]);
  return rows[0]?.facts_gen ?? '';
}

export async function factsState(ctx: PgContext, userId: string): Promise<FactsState> {
  // One statement: the generation and what it guards, from one snapshot.
  const rows = await ctx.read<{ gen: string | null; seq: string | null; doc: string | null; entries: string | null; lt: string | null; ltv: string | null }>(
    `SELECT u.facts_gen AS gen, u.fact_seq AS seq, u.fact_doc::text AS doc,
            (SELECT json_agg(f.entry ORDER BY f.seq)::text FROM ${ctx.s}.recall_facts f WHERE f.user_id = $1 AND f.current) AS entries,
            (SELECT l.record::text FROM ${ctx.s}.recall_long_term l WHERE l.user_id = $1 ORDER BY l.version DESC LIMIT 1) AS lt,
            (SELECT l.version FROM ${ctx.s}.recall_long_term l WHERE l.user_id = $1 ORDER BY l.version DESC LIMIT 1) AS ltv
     FROM (SELECT 1) one LEFT JOIN ${ctx.s}.recall_users u ON u.user_id = $1`,
    [userId],
  );
  const r = rows[0]!;
  const doc = r.doc === null ? undefined : (JSON.parse(r.doc) as DocTemplate);
  const longTerm = r.lt === null ? undefined : toLongTerm({ version: r.ltv!, record: r.lt });
  return {
    generation: r.gen ?? '',
    current: r.entries === null ? [] : (JSON.parse(r.entries) as FactEntry[]),
    nextSeq: num(r.seq) + 1,
    ...(doc === undefined ? {} : { doc }),
    ...(longTerm === undefined ? {} : { longTerm }),
  };
}

export async function factEntries(ctx: PgContext, userId: string, seqs: readonly number[]): Promise<(FactEntry | undefined)[]> {
  if (seqs.length === 0) return [];
  const rows = await ctx.read<{ seq: string; entry: string }>(`SELECT seq, entry::text AS entry FROM ${ctx.s}.recall_facts WHERE user_id = $1 AND seq = ANY($2::bigint[])`, [
    userId,
    [...seqs],
  ]);
  const bySeq = new Map(rows.map((r) => [num(r.seq), JSON.parse(r.entry) as FactEntry]));
  return seqs.map((seq) => bySeq.get(seq));
}

export async function factHistory(ctx: PgContext, userId: string): Promise<FactEntry[]> {
  return (await ctx.read<{ entry: string }>(`SELECT entry::text AS entry FROM ${ctx.s}.recall_facts WHERE user_id = $1 ORDER BY seq`, [userId])).map((r) => JSON.parse(r.entry) as FactEntry);
}

export async function commitFacts(ctx: PgContext, queue: PgJobQueue, userId: string, change: FactsChange, guard: WriteGuard & { generation: string }): Promise<boolean> {
  return ctx.tx(async (client, after) => {
    const user = await lockUser(ctx, client, userId);
    if (user.facts_gen !== guard.generation) return false;
    if (guard.incarnation !== undefined && user.incarnation !== guard.incarnation) throw new StaleWriteError('erased', userId);
    if (guard.job !== undefined && !(await leaseHeld(ctx, client, guard.job))) throw new StaleWriteError('lease_lost', userId);
    const ordered = [...change.entries].sort((a, b) => Number(a.validTo === undefined) - Number(b.validTo === undefined));
    let highest = num(user.fact_seq);
    for (const entry of ordered) {
      const seq = factSeq(entry.id)!;
      const current = entry.validTo === undefined;
      const { rows } = await client.query<{ fresh: boolean }>(
        `INSERT INTO ${ctx.s}.recall_facts AS f (user_id, seq, entry, current, key) VALUES ($1, $2, $3::json, $4, $5)
         ON CONFLICT (user_id, seq) DO UPDATE SET entry = EXCLUDED.entry, current = EXCLUDED.current, key = EXCLUDED.key
         RETURNING (xmax = 0) AS fresh`,
        [userId, seq, JSON.stringify(entry), current, entry.key ?? null],
      );
      if (current && rows[0]?.fresh === true) await queueEmbed(ctx, queue, client, userId, 'f', seq, after);
      if (!current) await dropEmbeds(ctx, client, userId, 'f', [seq]);
      highest = Math.max(highest, seq);
    }
    await client.query(`UPDATE ${ctx.s}.recall_users SET fact_seq = $2, facts_gen = $3, fact_doc = COALESCE($4::json, fact_doc) WHERE user_id = $1`, [
      userId,
      highest,
      change.generation,
      change.doc === undefined ? null : JSON.stringify(change.doc),
    ]);
    if (change.longTerm === 'undo') await undoLongTerm(ctx, queue, client, userId, after);
    else if (change.longTerm !== undefined) await writeLongTerm(ctx, queue, client, userId, change.longTerm, after);
    return true;
  });
}

async function newestLongTerm(ctx: PgContext, client: PoolClient, userId: string): Promise<LongTermRecord | undefined> {
  const { rows } = await client.query<LongTermRow>(`SELECT version, record::text AS record FROM ${ctx.s}.recall_long_term WHERE user_id = $1 ORDER BY version DESC LIMIT 1`, [userId]);
  return rows[0] === undefined ? undefined : toLongTerm(rows[0]);
}

/** Inside a write transaction holding the user's row: a new version, numbered on from the newest (content trimmed), its lines reindexed. */
export async function writeLongTerm(ctx: PgContext, queue: PgJobQueue, client: PoolClient, userId: string, v: Omit<LongTermRecord, 'version'>, after: (fn: () => void) => void): Promise<void> {
  const content = v.content.trim();
  const top = await newestLongTerm(ctx, client, userId);
  const value = { content, ts: v.ts, source: v.source, ...(v.raw === undefined ? {} : { raw: v.raw }) };
  await client.query(`INSERT INTO ${ctx.s}.recall_long_term (user_id, version, record) VALUES ($1, $2, $3::json)`, [userId, (top?.version ?? 0) + 1, JSON.stringify(value)]);
  await reindexLongTerm(ctx, client, userId, top?.content ?? '', content);
  await embedLongTermChange(ctx, queue, client, userId, top?.content ?? '', content, after);
}

async function undoLongTerm(ctx: PgContext, queue: PgJobQueue, client: PoolClient, userId: string, after: (fn: () => void) => void): Promise<void> {
  const top = await newestLongTerm(ctx, client, userId);
  if (top === undefined) return;
  await client.query(`DELETE FROM ${ctx.s}.recall_long_term WHERE user_id = $1 AND version = $2`, [userId, top.version]);
  const now = (await newestLongTerm(ctx, client, userId))?.content ?? '';
  await reindexLongTerm(ctx, client, userId, top.content, now);
  await embedLongTermChange(ctx, queue, client, userId, top.content, now, after);
}
