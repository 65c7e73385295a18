import type { MessageLog } from '../../../memory/contract/message-log.ts';
import type { WriteAhead } from '../../../memory/lmdb/write-ahead.ts';
import type { WallClock } from '../../../wall-clock.ts';
import type { LmdbJobQueue } from './lmdb-job-queue.ts';
import type { SearchPool } from './pool/search-pool.ts';
import type { RecallDbs } from './recall-dbs.ts';
import type { RawSessionRecord, ScanSource } from './search/search-scan.ts';
import type { VectorCache } from './embeddings/vector-cache.ts';
import type { DiskRoom } from '../../../memory/lmdb/disk-room.ts';
import type { KeyedLocks } from './keyed-locks.ts';

/** What the parts of the LMDB adapter share (lmdb-recall-store.ts builds it). */
export interface LmdbContext {
  dbs: RecallDbs & { guard(): void; room: DiskRoom | undefined };
  /** The session transcripts: the LMDB store of this same environment (its `messages` db). */
  memory: MessageLog;
  /** `memory`'s own `messages` db, read directly (and by the pool's workers) for session scans. */
  sessionScan: ScanSource<[string, number], RawSessionRecord> | undefined;
  /** The memory layer's write-ahead journal: a direct read of session rows settles it first. */
  journal: Pick<WriteAhead, 'settle' | 'scrub'> | undefined;
  pool: SearchPool | undefined;
  /** Keyword scans over more rows than this go to the pool. */
  poolThreshold: number;
  /** Ranked queries reading more postings than this go to the pool. */
  rankPoolThreshold: number;
  queue: LmdbJobQueue;
  clock: WallClock;
  vectors: VectorCache;
  /** The title a session gets when its first turn was cut short (the domain's offline title). */
  titleOf(firstMessage: string): string;
  /** Per user id: a summary's append, the user's erasure and session deletions, one at a time (lmdb-summaries.ts). */
  userLocks: KeyedLocks;
}
