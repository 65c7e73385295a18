import { open, type RootDatabase } from 'lmdb';
import { MESSAGES_DB } from '../../../../memory/lmdb/lmdb-table.ts';
import type { StoredMessage } from '../../../../message.ts';
import type { DailyRecord } from '../../../records/records.ts';
import type { RankedDoc } from '../../recall-store.ts';
import { DB_NAMES, openRawText, type DailyValue } from '../recall-dbs.ts';
import type { SearchJob } from './search-job.ts';
import { runRankJob } from './rank-worker.ts';
import type { RankJob, RowTerms } from './rank-jobs.ts';
import { runVectorJob, type VectorJob } from './vector-job.ts';
import { runThrough, scanDaily, scanSession, type RawSessionRecord, type ScanSource } from '../search/search-scan.ts';

/**
 * The pool worker: runs one keyword scan against the LMDB environment, read-only, and returns
 * the rows. lmdb-js keeps one environment per path per process and shares it across threads,
 * so opening the path here attaches to the environment the main thread writes. Each job starts
 * from the latest committed snapshot. The handle is kept for the worker's life.
 */
interface Opened {
  env: RootDatabase;
  daily: ScanSource<[string, string, number], DailyValue>;
  messages: ScanSource<[string, number], RawSessionRecord>;
}

const opened = new Map<string, Opened>();

function attach(path: string): Opened {
  let o = opened.get(path);
  if (!o) {
    const env = open({ path, noSubdir: false, readOnly: true, maxDbs: 32 });
    o = {
      env,
      daily: { json: env.openDB(DB_NAMES.daily, { encoding: 'json' }), text: openRawText(env, DB_NAMES.daily) },
      messages: { json: env.openDB(MESSAGES_DB, { encoding: 'json' }), text: openRawText(env, MESSAGES_DB) },
    };
    opened.set(path, o);
  }
  return o;
}

export default function search(job: SearchJob | RankJob | VectorJob): DailyRecord[] | StoredMessage[] | RankedDoc[] | RowTerms[] | [number, number][] {
  const o = attach(job.path);
  // lmdb-js renews its read snapshot on event turns; a pooled thread may not have had one
  // since the main thread's last commit, so start every job from the latest snapshot.
  o.env.resetReadTxn();
  if (job.kind === 'rank' || job.kind === 'terms') return runRankJob(o.env, job);
  if (job.kind === 'vector') return runVectorJob(o.env, job);
  return job.kind === 'daily'
    ? runThrough(scanDaily(o.daily, job.userId, job.day, job.keyword, job.limit, job.after && { key: job.after, exclusive: true }))
    : runThrough(scanSession(o.messages, job.conversationId, job.keyword, job.limit, job.before));
}
