import type { RootDatabase } from 'lmdb';
import { DB_NAMES, HIGH, type DailyValue, type LongTermValue } from '../recall-dbs.ts';
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
  return job.kind === 'rank' ? rankedDocs(reader, job.query) : rowTerms(reader, job.userId, job.after, job.limit);
}

/** The documents of the next `limit` daily rows after `after`, tokenized (no writes). */
export function rowTerms(reader: Pick<SearchReader, 'daily'>, userId: string, after: [string, number] | null, limit: number): RowTerms[] {
  const out: RowTerms[] = [];
  const start = after === null ? [userId] : [userId, after[0], after[1]];
  for (const { key, value } of reader.daily.getRange({ start, end: [userId, HIGH], exclusiveStart: after !== null, limit })) {
    const doc = docTermArrays(storedRowText(value));
    out.push([key[1], key[2], doc.terms, doc.tfs, doc.length]);
  }
  return out;
}
