import type { Key, RangeOptions } from 'lmdb';
import { HIGH, type RecallDbs } from '../recall-dbs.ts';
import { hasSessionDocs } from './doc-rows.ts';
import { SESSION_DOC } from './search-dbs.ts';
import { dailyDoc, sessionDoc } from '../../../search/doc-numbers.ts';

/**
 * The one backfill of the LMDB adapter. What the adapter derives from a user's rows (the ranked
 * index's postings, the embedding queue) is kept by hooks inside every write once the user is
 * live for it (index-hooks.ts, lmdb/embeddings/embed-hooks.ts). What was stored before (by an
 * older Mnemo, a Demo folder import, or before embeddings were turned on) is brought in by this
 * walk over the user's stored documents: the daily rows in key order, then the session
 * documents (lmdb/session-docs.ts), as batches of keys with their document numbers
 * (recall/search/doc-numbers.ts). Each batch is sought afresh after the last key of the one before,
 * so writes may land between batches. The long-term document is one read (`currentLongTerm`).
 *
 * Two consumers, which differ in what they make of a batch:
 * - rebuild.ts reads and tokenizes the batch's rows (on the search pool when there is
 *   one: the CPU half of a rebuild) and indexes them, in transactions gathered by postings;
 * - lmdb/embeddings/embed-backfill.ts queues an embedding job per document (keys only: the drain
 *   reads the texts), then the user's current facts.
 *
 * Each consumer runs at most once per user at a time in a process (`joinPerUser`).
 */

/**
 * Whether the user has a document for the walk to find (a daily row, a session document, a
 * long-term version): a user without one is made live at their first write, with nothing to backfill.
 */
export function hasStoredDocs(dbs: Pick<RecallDbs, 'counters' | 'longTerm' | 'search'>, userId: string): boolean {
  if ((dbs.counters.get([userId, 'daily-rows']) ?? 0) > 0 || hasSessionDocs(dbs, userId)) return true;
  for (const _ of dbs.longTerm.getKeys({ start: [userId], end: [userId, HIGH], limit: 1 })) return true;
  return false;
}

/** A batch of the walk: rows of one kind, in key order. */
export type DocBatch =
  | { kind: 'daily'; rows: Array<{ doc: number; day: string; id: number }> }
  | { kind: 'session'; rows: Array<{ doc: number; order: number; id: number }> };

/** The user's stored documents, `size` keys a batch (a row without a document number is passed over). */
export function* storedDocBatches(dbs: Pick<RecallDbs, 'daily' | 'search'>, userId: string, size: number): Generator<DocBatch> {
  for (const keys of keyBatches(dbs.daily, [userId], [userId, HIGH], size)) {
    const rows: Array<{ doc: number; day: string; id: number }> = [];
    for (const [, day, id] of keys) {
      const doc = dailyDoc(day, id);
      if (doc !== null) rows.push({ doc, day, id });
    }
    if (rows.length > 0) yield { kind: 'daily', rows };
  }
  for (const keys of keyBatches(dbs.search.sessionDocs, [userId, SESSION_DOC, 0], [userId, SESSION_DOC, Infinity], size)) {
    const rows: Array<{ doc: number; order: number; id: number }> = [];
    for (const [, , order, id] of keys) {
      const doc = sessionDoc(order, id);
      if (doc !== null) rows.push({ doc, order, id });
    }
    if (rows.length > 0) yield { kind: 'session', rows };
  }
}

/** The keys of `db` from `start` to `end`, `size` a batch, each batch sought after the last key of the one before. */
function* keyBatches<K extends Key[]>(db: { getKeys(range: RangeOptions): Iterable<K> }, start: Key[], end: Key[], size: number): Generator<K[]> {
  for (let from = start, exclusiveStart = false; ; exclusiveStart = true) {
    const keys = [...db.getKeys({ start: from, end, exclusiveStart, limit: size })];
    if (keys.length === 0) return;
    yield keys;
    from = keys[keys.length - 1]!;
  }
}

/** A second call for a user whose run has not ended joins that run instead of starting another. */
export function joinPerUser<T>(): (userId: string, start: () => Promise<T>) => Promise<T> {
  const running = new Map<string, Promise<T>>();
  return (userId, start) => {
    let job = running.get(userId);
    if (!job) {
      job = start().finally(() => running.delete(userId));
      running.set(userId, job);
    }
    return job;
  };
}
