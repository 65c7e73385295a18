import type { Database, RootDatabase } from 'lmdb';
import { DB_NAMES, openRawText, type DailyValue, type LongTermValue } from '../recall-dbs.ts';
import type { RankedDoc } from '../../recall-store.ts';
import { rankedDocs, type SearchReader } from '../search/bm25-query.ts';
import type { RankJob, RowTerms } from './rank-jobs.ts';
import { openSearchDbs } from '../search/search-dbs.ts';
import { rawRowText } from '../search/raw-row-text.ts';
import { docTermArrays } from '../../../search/documents.ts';

/**
 * The ranked index's jobs inside a pool worker, on the worker's read-only handle of the
 * environment (search-worker.ts opens it and renews the snapshot per job).
 */
type Reader = SearchReader & RowReader;
const readers = new WeakMap<RootDatabase, Reader>();

/** What `rowTerms` reads: the daily db as raw JSON text (recall-dbs.ts `openRawText`). */
export interface RowReader {
  dailyText: Database<string, [string, string, number]>;
}

function readerOf(env: RootDatabase): Reader {
  let r = readers.get(env);
  if (!r) {
    r = {
      search: openSearchDbs(env),
      daily: env.openDB<DailyValue, [string, string, number]>(DB_NAMES.daily, { encoding: 'json' }),
      longTerm: env.openDB<LongTermValue, [string, number]>(DB_NAMES.longTerm, { encoding: 'json' }),
      dailyText: openRawText(env, DB_NAMES.daily),
    };
    readers.set(env, r);
  }
  return r;
}

export function runRankJob(env: RootDatabase, job: RankJob): RankedDoc[] | RowTerms[] {
  const reader = readerOf(env);
  return job.kind === 'rank' ? rankedDocs(reader, job.query) : rowTerms(reader, job.userId, job.rows);
}

/**
 * The documents of the daily rows `rows` (`[day, id]`, in key order), tokenized; a row deleted
 * since is left out (no writes). One range read over the batch, not a lookup a row (a third
 * less CPU), of the rows' raw JSON, whose content alone is decoded (raw-row-text.ts); a row
 * written since inside the range is not the batch's, and is passed over.
 */
export function rowTerms(reader: RowReader, userId: string, rows: readonly (readonly [string, number])[]): RowTerms[] {
  const out: RowTerms[] = [];
  if (rows.length === 0) return out;
  const [firstDay, firstId] = rows[0]!;
  const [lastDay, lastId] = rows[rows.length - 1]!;
  let i = 0;
  for (const { key, value } of reader.dailyText.getRange({ start: [userId, firstDay, firstId], end: [userId, lastDay, lastId], inclusiveEnd: true })) {
    const [, day, id] = key;
    // Days are ASCII: `<` orders them as LMDB does.
    while (i < rows.length && (rows[i]![0] < day || (rows[i]![0] === day && rows[i]![1] < id))) i++;
    if (i === rows.length) break;
    if (rows[i]![0] !== day || rows[i]![1] !== id) continue;
    const doc = docTermArrays(rawRowText(value));
    out.push([day, id, doc.terms, doc.tfs, doc.length]);
  }
  return out;
}
