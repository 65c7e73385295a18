import type { RootDatabase } from 'lmdb';
import { DB_NAMES, type DailyValue, type LongTermValue } from '../recall-dbs.ts';
import type { RankedDoc } from '../../recall-store.ts';
import { rankedDocs, type SearchReader } from '../search/bm25-query.ts';
import type { RankJob, RowTerms } from './rank-jobs.ts';
import { openSearchDbs } from '../search/search-dbs.ts';
import { storedRowText } from '../search/search-index.ts';
import { docTermArrays } from '../../../search/documents.ts';

/**
 * The ranked index's jobs inside a pool worker, on the worker's read-only handle of the
 * environment (search-worker.ts opens it and renews the snapshot per job).
 */
const readers = new WeakMap<RootDatabase, SearchReader>();

function readerOf(env: RootDatabase): SearchReader {
  let r = readers.get(env);
  if (!r) {
    r = {
      search: openSearchDbs(env),
      daily: env.openDB<DailyValue, [string, string, number]>(DB_NAMES.daily, { encoding: 'json' }),
      longTerm: env.openDB<LongTermValue, [string, number]>(DB_NAMES.longTerm, { encoding: 'json' }),
    };
    readers.set(env, r);
  }
  return r;
}

export function runRankJob(env: RootDatabase, job: RankJob): RankedDoc[] | RowTerms[] {
  const reader = readerOf(env);
  return job.kind === 'rank' ? rankedDocs(reader, job.query) : rowTerms(reader, job.userId, job.rows);
}

/** The documents of the daily rows `rows` (`[day, id]`), tokenized; a row deleted since is left out (no writes). */
export function rowTerms(reader: Pick<SearchReader, 'daily'>, userId: string, rows: readonly (readonly [string, number])[]): RowTerms[] {
  const out: RowTerms[] = [];
  for (const [day, id] of rows) {
    const value = reader.daily.get([userId, day, id]);
    if (value === undefined) continue;
    const doc = docTermArrays(storedRowText(value));
    out.push([day, id, doc.terms, doc.tfs, doc.length]);
  }
  return out;
}
