import type { RootDatabase } from 'lmdb';
import type { RankedFilters } from '../../../search/rank-filters.ts';
import { DB_NAMES, type DailyValue, type LongTermValue } from '../recall-dbs.ts';
import { EMBED_DB_NAMES, type ItemKey } from '../embeddings/embed-dbs.ts';
import { openSearchDbs } from '../search/search-dbs.ts';
import { vectorRanking, type VectorReader } from '../embeddings/vector-query.ts';

/**
 * A large brute-force vector scan for the search pool's workers (search/search-worker.ts hands
 * it here): the query vector travels as a plain number array, the answer is `[doc, cosine]`.
 */
export interface VectorJob {
  kind: 'vector';
  path: string;
  userId: string;
  query: number[];
  filters: RankedFilters;
  n: number;
}

const readers = new WeakMap<RootDatabase, VectorReader>();

export function runVectorJob(env: RootDatabase, job: VectorJob): [number, number][] {
  let r = readers.get(env);
  if (!r) {
    r = {
      vectors: env.openDB<Buffer, ItemKey>(EMBED_DB_NAMES.vectors, { encoding: 'binary' }),
      daily: env.openDB<DailyValue, [string, string, number]>(DB_NAMES.daily, { encoding: 'json' }),
      sessionDocs: openSearchDbs(env).sessionDocs,
      longTerm: env.openDB<LongTermValue, [string, number]>(DB_NAMES.longTerm, { encoding: 'json' }),
    };
    readers.set(env, r);
  }
  return vectorRanking(r, job.userId, Float32Array.from(job.query), job.filters, job.n);
}
