import type { PoolClient } from 'pg';
import type { NewDailyRecord } from '../../records/records.ts';
import { averageLength, bm25Idf, bm25Term } from '../../search/bm25.ts';
import { dailyDoc, docRef, longTermDoc, sessionDoc } from '../../search/doc-numbers.ts';
import { dailyRowText, docTerms, longTermLines } from '../../search/documents.ts';
import { dayPasses, hasFilters, longTermPasses, rowPasses, type RankedFilters } from '../../search/rank-filters.ts';
import { topK } from '../../search/top-k.ts';
import type { RankedDoc } from '../recall-store.ts';
import { num, type PgContext } from './pg-recall-context.ts';

/**
 * The ranked index in PostgreSQL: `recall_docs(user_id, doc, length)` and
 * `recall_postings(user_id, term, doc, tf, length)`, with the user's totals (BM25's N and total
 * length) in their `recall_users` row. Written INSIDE the transaction that writes or removes the
 * rows they index (the caller holds the user's row lock: totals are read and written under it),
 * so rows and postings commit together. Documents and their numbers are the domain's
 * (search/documents.ts, search/doc-numbers.ts), terms the domain tokenizer's, computed in JS.
 *
 * `rank` reads the query terms' postings (an index-only scan of the key, which INCLUDEs tf and
 * length) and the totals in ONE statement (one snapshot) and
 * scores in JS exactly as search/bm25.ts defines it, summing each document's terms in query
 * order (as the LMDB adapter does, so the floating-point sums are equal), then walks the
 * candidates best first (ties: lower doc first, as search/top-k.ts) reading their rows a page at
 * a time until `limit` pass the filters.
 */
export interface IndexedDoc {
  doc: number;
  text: string;
}

/** Inside a write transaction: indexes the documents (one already indexed is skipped). */
export async function indexDocs(ctx: PgContext, client: PoolClient, userId: string, docs: readonly IndexedDoc[]): Promise<number> {
  const kept: { doc: number; length: number; terms: Map<string, number> }[] = [];
  for (const { doc, text } of docs) {
    const t = docTerms(text);
    if (t.length > 0) kept.push({ doc, length: t.length, terms: t.terms });
  }
  if (kept.length === 0) return 0;
  const terms: string[] = [];
  const ids: number[] = [];
  const tfs: number[] = [];
  for (const d of kept) {
    for (const [term, tf] of d.terms) {
      terms.push(term);
      ids.push(d.doc);
      tfs.push(tf);
    }
  }
  // One round trip: the documents not yet indexed (a retry's are), their postings, and the
  // user's corpus statistics. The CTEs share one snapshot; the postings join what `fresh` inserted.
  const { rows } = await client.query<{ n: string }>(
    `WITH fresh AS (
       INSERT INTO ${ctx.s}.recall_docs (user_id, doc, length) SELECT $1, d, l FROM unnest($2::bigint[], $3::int[]) AS x(d, l)
       ON CONFLICT DO NOTHING RETURNING doc, length
     ), postings AS (
       INSERT INTO ${ctx.s}.recall_postings (user_id, term, doc, tf, length)
       SELECT $1, p.t, p.d, p.f, fresh.length FROM unnest($4::text[], $5::bigint[], $6::int[]) AS p(t, d, f) JOIN fresh ON fresh.doc = p.d
     ), stats AS (
       UPDATE ${ctx.s}.recall_users SET index_docs = index_docs + (SELECT count(*) FROM fresh), index_length = index_length + (SELECT COALESCE(sum(length), 0) FROM fresh)
       WHERE user_id = $1 AND EXISTS (SELECT 1 FROM fresh)
     )
     SELECT count(*) AS n FROM fresh`,
    [userId, kept.map((d) => d.doc), kept.map((d) => d.length), terms, ids, tfs],
  );
  return Number(rows[0]!.n);
}

/** Inside a write transaction: removes the documents (whose texts are given: their terms find the postings). No-op for one not indexed. */
export async function unindexDocs(ctx: PgContext, client: PoolClient, userId: string, docs: readonly IndexedDoc[]): Promise<void> {
  if (docs.length === 0) return;
  const removed = await client.query<{ doc: string; length: number }>(
    `DELETE FROM ${ctx.s}.recall_docs WHERE user_id = $1 AND doc = ANY($2::bigint[]) RETURNING doc, length`,
    [userId, docs.map((d) => d.doc)],
  );
  if (removed.rows.length === 0) return;
  const gone = new Set(removed.rows.map((r) => Number(r.doc)));
  const terms: string[] = [];
  const ids: number[] = [];
  for (const { doc, text } of docs) {
    if (!gone.has(doc)) continue;
    for (const term of docTerms(text).terms.keys()) {
      terms.push(term);
      ids.push(doc);
    }
  }
  await client.query(
    `DELETE FROM ${ctx.s}.recall_postings p USING unnest($2::text[], $3::bigint[]) AS x(t, d) WHERE p.user_id = $1 AND p.term = x.t AND p.doc = x.d`,
    [userId, terms, ids],
  );
  const length = removed.rows.reduce((sum, r) => sum + Number(r.length), 0);
  await client.query(`UPDATE ${ctx.s}.recall_users SET index_docs = index_docs - $2, index_length = index_length - $3 WHERE user_id = $1`, [
    userId,
    removed.rows.length,
    length,
  ]);
}

/** A daily row's document (`null`: it cannot have one). */
export function dailyDocOf(row: { day: string; id: number; content: string; toolCalls?: NewDailyRecord['toolCalls'] }): IndexedDoc | null {
  const doc = dailyDoc(row.day, row.id);
  return doc === null ? null : { doc, text: dailyRowText(row) };
}

/** A session document's (`null`: it cannot have one). */
export function sessionDocOf(order: number, id: number, row: Pick<NewDailyRecord, 'content' | 'toolCalls'>): IndexedDoc | null {
  const doc = sessionDoc(order, id);
  return doc === null ? null : { doc, text: dailyRowText(row) };
}

/** The documents of a long-term document's lines. */
export function longTermDocs(content: string): IndexedDoc[] {
  const out: IndexedDoc[] = [];
  for (const { line, text } of longTermLines(content)) {
    const doc = longTermDoc(line);
    if (doc !== null) out.push({ doc, text });
  }
  return out;
}

/** Inside a write transaction: the long-term document changed from `before` to `after`. */
export async function reindexLongTerm(ctx: PgContext, client: PoolClient, userId: string, before: string, after: string): Promise<void> {
  await unindexDocs(ctx, client, userId, longTermDocs(before));
  await indexDocs(ctx, client, userId, longTermDocs(after));
}

/** Document → BM25 score over the query's terms (in their order), from one snapshot. */
export async function scoreTerms(ctx: PgContext, userId: string, terms: readonly string[]): Promise<Map<number, number>> {
  // A term's postings come packed in one bytea (doc int8, tf int4, length int4 each, as
  // int8send/int4send write them: big-endian): one value to parse a term, not a row a posting.
  const rows = await ctx.read<{ term: string; postings: Buffer | null; n: string; total: string }>(
    `SELECT x.term, u.index_docs AS n, u.index_length AS total,
       (SELECT string_agg(int8send(p.doc) || int4send(p.tf) || int4send(p.length), ''::bytea) FROM ${ctx.s}.recall_postings p WHERE p.user_id = u.user_id AND p.term = x.term) AS postings
     FROM ${ctx.s}.recall_users u, unnest($2::text[]) AS x(term)
     WHERE u.user_id = $1`,
    [userId, [...terms]],
  );
  const scores = new Map<number, number>();
  if (rows.length === 0) return scores;
  const n = num(rows[0]!.n);
  if (n === 0) return scores;
  const avgdl = averageLength(n, num(rows[0]!.total));
  const byTerm = new Map<string, Buffer>();
  for (const r of rows) if (r.postings !== null) byTerm.set(r.term, r.postings);
  for (const term of terms) {
    const packed = byTerm.get(term);
    if (packed === undefined || packed.length === 0) continue;
    const idf = bm25Idf(n, packed.length / POSTING_BYTES);
    for (let at = 0; at < packed.length; at += POSTING_BYTES) {
      const doc = packed.readUInt32BE(at) * 2 ** 32 + packed.readUInt32BE(at + 4);
      scores.set(doc, (scores.get(doc) ?? 0) + bm25Term(idf, packed.readInt32BE(at + 8), packed.readInt32BE(at + 12), avgdl));
    }
  }
  return scores;
}

/** A packed posting's bytes: doc (int8), tf (int4), the document's length (int4). */
const POSTING_BYTES = 16;

/** The row a document stands for, as `RankedDoc.row` shows it (daily: with its id; session document: without). */
export interface DocRowFound {
  row: NewDailyRecord;
  day: string;
}

/** The rows of these documents (daily rows and session documents; long-term lines are not rows). */
export async function docRows(ctx: PgContext, userId: string, docs: readonly number[]): Promise<Map<number, DocRowFound>> {
  const days: string[] = [];
  const dayIds: number[] = [];
  const orders: number[] = [];
  const orderIds: number[] = [];
  for (const doc of docs) {
    const ref = docRef(doc);
    if (ref.kind === 'daily') {
      days.push(ref.day);
      dayIds.push(ref.id);
    } else if (ref.kind === 'session') {
      orders.push(ref.order);
      orderIds.push(ref.id);
    }
  }
  const out = new Map<number, DocRowFound>();
  if (days.length > 0) {
    const rows = await ctx.read<{ day: string; id: string; record: string }>(
      `SELECT d.day, d.id, d.record::text AS record FROM ${ctx.s}.recall_daily d JOIN unnest($2::text[], $3::bigint[]) AS x(day, id) ON d.day = x.day COLLATE "C" AND d.id = x.id
       WHERE d.user_id = $1`,
      [userId, days, dayIds],
    );
    for (const r of rows) {
      const id = Number(r.id);
      out.set(dailyDoc(r.day, id)!, { row: { day: r.day, id, ...JSON.parse(r.record) }, day: r.day });
    }
  }
  if (orders.length > 0) {
    const rows = await ctx.read<{ ord: string; id: string; record: string }>(
      `SELECT d.ord, d.id, d.record::text AS record FROM ${ctx.s}.recall_session_docs d JOIN unnest($2::bigint[], $3::bigint[]) AS x(ord, id) ON d.ord = x.ord AND d.id = x.id
       WHERE d.user_id = $1`,
      [userId, orders, orderIds],
    );
    for (const r of rows) {
      const row = JSON.parse(r.record) as NewDailyRecord;
      out.set(sessionDoc(Number(r.ord), Number(r.id))!, { row, day: row.day });
    }
  }
  return out;
}

/** The user's newest long-term document, with the day it was written. */
export async function currentLongTerm(ctx: PgContext, userId: string): Promise<{ content: string; day: string } | undefined> {
  const rows = await ctx.read<{ record: string }>(`SELECT record::text AS record FROM ${ctx.s}.recall_long_term WHERE user_id = $1 ORDER BY version DESC LIMIT 1`, [userId]);
  if (rows[0] === undefined) return undefined;
  const v = JSON.parse(rows[0].record) as { content: string; ts: string };
  return { content: v.content, day: v.ts.slice(0, 10) };
}

/** Best first, ties by lower doc (search/top-k.ts's order). */
export function ranked(scores: ReadonlyMap<number, number>): [number, number][] {
  return [...scores].sort((a, b) => b[1] - a[1] || a[0] - b[0]);
}

/**
 * Walks `candidates` (best first) reading rows a page at a time, keeping those that pass the
 * filters (search/rank-filters.ts), until `limit`. `keepLongTerm` decides a long-term line.
 */
export async function walkCandidates(
  ctx: PgContext,
  userId: string,
  candidates: readonly [number, number][],
  filters: RankedFilters,
  limit: number,
  keepLongTerm: (doc: number, line: number, current: { content: string; day: string } | undefined) => boolean,
  needRows: boolean,
): Promise<{ doc: number; score: number; row?: NewDailyRecord }[]> {
  const out: { doc: number; score: number; row?: NewDailyRecord }[] = [];
  const filtered = hasFilters(filters);
  let longTerm: { content: string; day: string } | undefined | null = null;
  let page = filtered ? Math.max(limit * 8, 64) : limit + 4;
  for (let at = 0; at < candidates.length && out.length < limit; at += page, page *= 4) {
    const slice = candidates.slice(at, at + page);
    const rows = needRows || filtered ? await docRows(ctx, userId, slice.map(([doc]) => doc)) : new Map<number, DocRowFound>();
    for (const [doc, score] of slice) {
      if (out.length >= limit) break;
      const ref = docRef(doc);
      if (ref.kind === 'long_term') {
        if (longTerm === null) longTerm = await currentLongTerm(ctx, userId);
        if (!keepLongTerm(doc, ref.line, longTerm)) continue;
        if (filtered && (longTerm === undefined || !longTermPasses(filters, longTerm.day))) continue;
        out.push({ doc, score });
        continue;
      }
      if (ref.kind === 'daily' && !dayPasses(filters, ref.day)) continue;
      const found = rows.get(doc);
      if (found === undefined) {
        if (needRows || filtered) continue;
        out.push({ doc, score });
        continue;
      }
      if (!dayPasses(filters, found.day) || !rowPasses(filters, found.row as Parameters<typeof rowPasses>[1])) continue;
      out.push({ doc, score, row: found.row });
    }
  }
  return out;
}

/** `rank` (recall-store.ts): BM25 best first, ties by doc, filtered. */
export async function rank(ctx: PgContext, userId: string, q: { terms: readonly string[]; filters: RankedFilters; limit: number }): Promise<RankedDoc[]> {
  if (q.terms.length === 0 || q.limit <= 0) return [];
  const scores = await scoreTerms(ctx, userId, q.terms);
  if (scores.size === 0) return [];
  const keep = (_doc: number, line: number, current: { content: string; day: string } | undefined) => current !== undefined && longTermLines(current.content).some((l) => l.line === line);
  // The best few by a bounded heap (no sort of every candidate); the whole ranking only when
  // filters or missing rows leave fewer than `limit` among them.
  const few = hasFilters(q.filters) ? Math.max(q.limit * 8, 64) : q.limit + 4;
  if (scores.size > few) {
    const found = await walkCandidates(ctx, userId, topK(scores, few), q.filters, q.limit, keep, true);
    if (found.length >= q.limit) return found;
  }
  return walkCandidates(ctx, userId, ranked(scores), q.filters, q.limit, keep, true);
}
