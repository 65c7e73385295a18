import type { PoolClient } from 'pg';
import { dailyDoc, docRef, sessionDoc } from '../../search/doc-numbers.ts';
import { dailyRowText, longTermLines } from '../../search/documents.ts';
import { hasFilters, type RankedFilters } from '../../search/rank-filters.ts';
import type { NewDailyRecord } from '../../records/records.ts';
import { cosineWith, encodeVector, textHash, unit, vectorHash } from '../../search/vector-codec.ts';
import type { NearDoc, VectorWrite } from '../recall-store.ts';
import type { PgJobQueue } from './pg-job-queue.ts';
import { currentLongTerm, docRows, ranked, walkCandidates } from './pg-ranked-index.ts';
import { leaseHeld, lockUser, type PgContext } from './pg-recall-context.ts';
import { hashBytes, nearestRows, vectorLiteral, type ReadRows } from './pgvector.ts';

/**
 * Embeddings in PostgreSQL: `recall_vectors(user_id, item, id, vector bytea)`, the bytes
 * `encodeVector` makes (the text's hash, then the floats), or with pgvector the hash alone and the
 * floats in `embedding` (pgvector.ts), and their jobs in the one job queue.
 *
 * - HOOKS run inside the write transaction of the item they follow (when the store was opened
 *   with embeddings): a stored row, session document, long-term line or fact queues its `embed`
 *   job; a removed one takes its vector, job and dead letter with it.
 * - `nearest` orders by cosine, best first (ties: higher id for facts, lower doc for documents,
 *   as the LMDB adapter orders them), filtered as rank-filters.ts says. With pgvector, in SQL by
 *   `<=>` (pgvector.ts `nearestRows`), fetching more candidates while filters leave fewer than
 *   `limit`; the FALLBACK reads the user's vectors and scores them in JS (vector-codec.ts).
 * - `putVectors` stores a vector only while its job is still held (its row locked) and the item's
 *   text is still the one embedded (its hash), and completes the job, in one transaction.
 */
export async function queueEmbed(ctx: PgContext, queue: PgJobQueue, client: PoolClient, userId: string, item: 'd' | 'f', id: number | null, after: (fn: () => void) => void): Promise<void> {
  if (!ctx.embeddings || id === null) return;
  await queue.enqueueTx(client, { kind: 'embed', userId, payload: { item, id } }, after);
}

/** Inside a write transaction: the items' vectors, jobs and dead letters go. */
export async function dropEmbeds(ctx: PgContext, client: PoolClient, userId: string, item: 'd' | 'f', ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  await client.query(`DELETE FROM ${ctx.s}.recall_vectors WHERE user_id = $1 AND item = $2 AND id = ANY($3::bigint[])`, [userId, item, [...ids]]);
  const keys = ids.map((id) => `${item}:${id}`);
  await client.query(`DELETE FROM ${ctx.s}.recall_jobs WHERE kind = 'embed' AND user_id = $1 AND key = ANY($2::text[])`, [userId, keys]);
  await client.query(`DELETE FROM ${ctx.s}.recall_dead_jobs WHERE kind = 'embed' AND user_id = $1 AND key = ANY($2::text[])`, [userId, keys]);
}

/** Inside a write transaction: the long-term document changed; changed lines queued again, lines gone dropped. */
export async function embedLongTermChange(ctx: PgContext, queue: PgJobQueue, client: PoolClient, userId: string, before: string, after: string, done: (fn: () => void) => void): Promise<void> {
  const old = new Map(longTermLines(before).map((l) => [l.line, l.text]));
  const now = new Map(longTermLines(after).map((l) => [l.line, l.text]));
  await dropEmbeds(ctx, client, userId, 'd', [...old.keys()].filter((line) => !now.has(line)));
  if (!ctx.embeddings) return;
  for (const [line, text] of now) {
    if (old.get(line) === text) {
      const { rowCount } = await client.query(`SELECT 1 FROM ${ctx.s}.recall_vectors WHERE user_id = $1 AND item = 'd' AND id = $2`, [userId, line]);
      if ((rowCount ?? 0) > 0) continue;
    }
    await queueEmbed(ctx, queue, client, userId, 'd', line, done);
  }
}

/** The text an embedding job embeds now (recall-store.ts `itemText`); `undefined`: the item is gone. */
export async function itemText(ctx: PgContext, userId: string, item: 'd' | 'f', id: number, client?: PoolClient): Promise<string | undefined> {
  const q = async (text: string, values: unknown[]) => (client === undefined ? ctx.read<{ t: string }>(text, values) : (await client.query<{ t: string }>(text, values)).rows);
  if (item === 'f') {
    const rows = await q(`SELECT entry::text AS t FROM ${ctx.s}.recall_facts WHERE user_id = $1 AND seq = $2 AND current`, [userId, id]);
    const text = rows[0] === undefined ? undefined : (JSON.parse(rows[0].t) as { text?: string }).text;
    return text === undefined || text.trim() === '' ? undefined : text;
  }
  const ref = docRef(id);
  if (ref.kind === 'long_term') {
    const rows = await q(`SELECT record::text AS t FROM ${ctx.s}.recall_long_term WHERE user_id = $1 ORDER BY version DESC LIMIT 1`, [userId]);
    const content = rows[0] === undefined ? '' : (JSON.parse(rows[0].t) as { content: string }).content;
    return longTermLines(content).find((l) => l.line === ref.line)?.text;
  }
  const rows =
    ref.kind === 'daily'
      ? await q(`SELECT record::text AS t FROM ${ctx.s}.recall_daily WHERE user_id = $1 AND day = $2 AND id = $3`, [userId, ref.day, ref.id])
      : await q(`SELECT record::text AS t FROM ${ctx.s}.recall_session_docs WHERE user_id = $1 AND ord = $2 AND id = $3`, [userId, ref.order, ref.id]);
  if (rows[0] === undefined) return undefined;
  const text = dailyRowText(JSON.parse(rows[0].t));
  return text.trim() === '' ? undefined : text;
}

/** The fallback: every `(id, similarity)` of the user's vectors of `item`, scored in JS. */
async function scoreVectors(ctx: PgContext, userId: string, item: 'd' | 'f', query: Float32Array): Promise<{ scores: Map<number, number>; hashes: Map<number, number> }> {
  const rows = await ctx.read<{ id: string; vector: Buffer }>(`SELECT id, vector FROM ${ctx.s}.recall_vectors WHERE user_id = $1 AND item = $2`, [userId, item]);
  const scores = new Map<number, number>();
  const hashes = new Map<number, number>();
  for (const r of rows) {
    const id = Number(r.id);
    scores.set(id, cosineWith(r.vector, query));
    hashes.set(id, vectorHash(r.vector));
  }
  return { scores, hashes };
}

export async function nearest(ctx: PgContext, userId: string, q: { item: 'd' | 'f'; vector: Float32Array; filters: RankedFilters; limit: number }): Promise<NearDoc[]> {
  await ctx.ready();
  const mode = ctx.vectors();
  if (mode.kind === 'pgvector') return nearestInSql(ctx, mode.ext, userId, q);
  const { scores, hashes } = await scoreVectors(ctx, userId, q.item, q.vector);
  if (q.item === 'f') {
    return [...scores].map(([id, similarity]) => ({ id, similarity })).sort((a, b) => b.similarity - a.similarity || b.id - a.id).slice(0, q.limit);
  }
  if (scores.size === 0 || q.limit <= 0) return [];
  return withRows(ctx, userId, await walkCandidates(ctx, userId, ranked(scores), q.filters, q.limit, currentLine(hashes), false));
}

/** A long-term line's vector counts only while it embeds the line's current text. */
const currentLine =
  (hashes: ReadonlyMap<number, number>) =>
  (doc: number, line: number, current: { content: string; day: string } | undefined): boolean => {
    const text = current === undefined ? undefined : longTermLines(current.content).find((l) => l.line === line)?.text;
    return text !== undefined && hashes.get(doc) === textHash(text);
  };

/** With pgvector: the nearest `n` from SQL, `n` growing while the filters (or stale lines) leave fewer than `limit`. */
async function nearestInSql(ctx: PgContext, ext: string, userId: string, q: { item: 'd' | 'f'; vector: Float32Array; filters: RankedFilters; limit: number }): Promise<NearDoc[]> {
  if (q.limit <= 0) return [];
  const read: ReadRows = (text, values) => ctx.read(text, values);
  const near = (n: number) =>
    nearestRows(
      read,
      (body) => ctx.tx((client) => body(async (text, values) => (await client.query(text, values)).rows)),
      ctx.s,
      ext,
      ctx.hnsw,
      userId,
      q.item,
      q.vector,
      n,
      q.item === 'f' ? 'desc' : 'asc',
    );
  if (q.item === 'f') return (await near(q.limit)).map(({ id, similarity }) => ({ id, similarity }));
  for (let n = hasFilters(q.filters) ? Math.max(q.limit * 8, 64) : q.limit + 4; ; n *= 4) {
    const rows = await near(n);
    const hashes = new Map(rows.map((r) => [r.id, r.hash]));
    const found = await walkCandidates(ctx, userId, rows.map((r) => [r.id, r.similarity]), q.filters, q.limit, currentLine(hashes), false);
    if (found.length >= q.limit || rows.length < n) return withRows(ctx, userId, found);
  }
}

async function withRows(ctx: PgContext, userId: string, found: { doc: number; score: number; row?: NewDailyRecord }[]): Promise<NearDoc[]> {
  // Unfiltered walks read no rows: each hit's row, for the caller.
  const missing = found.filter((f) => f.row === undefined && docRef(f.doc).kind !== 'long_term').map((f) => f.doc);
  const rows = missing.length === 0 ? new Map() : await docRows(ctx, userId, missing);
  return found.map((f) => {
    const row = f.row ?? rows.get(f.doc)?.row;
    return { id: f.doc, similarity: f.score, ...(row === undefined ? {} : { row }) };
  });
}

export async function putVectors(ctx: PgContext, userId: string, vectors: readonly VectorWrite[]): Promise<number> {
  if (vectors.length === 0) return 0;
  return ctx.tx(async (client) => {
    await lockUser(ctx, client, userId);
    let n = 0;
    for (const v of vectors) {
      if (!(await leaseHeld(ctx, client, v.job))) continue;
      // Queued meanwhile for newer text, or gone: the vector of this text is not stored.
      const now = await itemText(ctx, userId, v.item, v.id, client);
      if (now === undefined || textHash(now) !== v.hash) continue;
      const mode = ctx.vectors();
      if (mode.kind === 'pgvector') {
        // The unit vector's floats as the fallback stores them; none (no length): no embedding.
        const floats = unit(v.vector);
        await client.query(
          `INSERT INTO ${ctx.s}.recall_vectors (user_id, item, id, vector, embedding) VALUES ($1, $2, $3, $4, $5::${mode.ext}.vector)
           ON CONFLICT (user_id, item, id) DO UPDATE SET vector = EXCLUDED.vector, embedding = EXCLUDED.embedding`,
          [userId, v.item, v.id, hashBytes(v.hash), floats.length === 0 ? null : vectorLiteral(floats)],
        );
      } else {
        await client.query(
          `INSERT INTO ${ctx.s}.recall_vectors (user_id, item, id, vector) VALUES ($1, $2, $3, $4) ON CONFLICT (user_id, item, id) DO UPDATE SET vector = EXCLUDED.vector`,
          [userId, v.item, v.id, encodeVector(v.hash, v.vector)],
        );
      }
      await client.query(`DELETE FROM ${ctx.s}.recall_jobs WHERE kind = $1 AND user_id = $2 AND key = $3 AND token = $4`, [v.job.kind, v.job.userId, v.job.key, v.job.token]);
      n++;
    }
    return n;
  });
}

/** Queues every item of the user that has neither a vector nor a job (rows, session documents, long-term lines, current facts). */
export async function backfill(ctx: PgContext, queue: PgJobQueue, userId: string): Promise<void> {
  if (!ctx.embeddings) return;
  await ctx.tx(async (client, after) => {
    await lockUser(ctx, client, userId);
    const items: Array<['d' | 'f', number]> = [];
    for (const r of (await client.query<{ day: string; id: string }>(`SELECT day, id FROM ${ctx.s}.recall_daily WHERE user_id = $1`, [userId])).rows) {
      const doc = dailyDoc(r.day, Number(r.id));
      if (doc !== null) items.push(['d', doc]);
    }
    for (const r of (await client.query<{ ord: string; id: string }>(`SELECT ord, id FROM ${ctx.s}.recall_session_docs WHERE user_id = $1`, [userId])).rows) {
      const doc = sessionDoc(Number(r.ord), Number(r.id));
      if (doc !== null) items.push(['d', doc]);
    }
    const lt = await currentLongTermIn(ctx, client, userId);
    for (const { line } of longTermLines(lt)) items.push(['d', line]);
    for (const r of (await client.query<{ seq: string }>(`SELECT seq FROM ${ctx.s}.recall_facts WHERE user_id = $1 AND current`, [userId])).rows) items.push(['f', Number(r.seq)]);
    const have = new Set(
      (
        await client.query<{ k: string }>(
          `SELECT item || ':' || id AS k FROM ${ctx.s}.recall_vectors WHERE user_id = $1 UNION SELECT key FROM ${ctx.s}.recall_jobs WHERE kind = 'embed' AND user_id = $1`,
          [userId],
        )
      ).rows.map((r) => r.k),
    );
    for (const [item, id] of items) if (!have.has(`${item}:${id}`)) await queueEmbed(ctx, queue, client, userId, item, id, after);
  });
}

async function currentLongTermIn(ctx: PgContext, client: PoolClient, userId: string): Promise<string> {
  const rows = (await client.query<{ t: string }>(`SELECT record::text AS t FROM ${ctx.s}.recall_long_term WHERE user_id = $1 ORDER BY version DESC LIMIT 1`, [userId])).rows;
  return rows[0] === undefined ? '' : (JSON.parse(rows[0].t) as { content: string }).content;
}

export { currentLongTerm };
