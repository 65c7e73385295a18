import type { MessageLog, NewEntry } from '../../memory/contract/message-log.ts';
import type { StoredMessage } from '../../message.ts';
import type { TraceContext } from '../../telemetry/tracing.ts';
import type { NewSummary, SummaryRecord } from '../../provider/summary-record.ts';
import type { DocTemplate, FactEntry } from '../records/fact-entry.ts';
import type { RankedFilters } from '../search/rank-filters.ts';
import type { JobLease, JobQueue, NewJob } from './job-queue.ts';
import type {
  DailyRecord,
  LogRecord,
  LongTermRecord,
  NewDailyRecord,
  NewLogRecord,
  SessionEntry,
  TurnKeyRecord,
} from '../records/records.ts';

/**
 * RecallStore: the storage port of the layered memory. Recall's domain (the chat turn, the
 * Demo's rules, facts and their judge, ranking math and the tokenizer, the Demo folder format,
 * retention rules) calls this interface and never a database driver. Adapters:
 * `storage/lmdb/` (the embedded default, the format older versions wrote) and
 * `storage/postgres/` (many processes on one database). Each passes the same conformance suite
 * (`describeRecallStoreContract` from `mnemo/testing`: storage-contract/recall-store-contract.ts), as every `MessageLog` passes
 * `describeMessageLogContract`.
 *
 * What every adapter guarantees:
 *
 * - USERS. Every read and write names one user and touches only that user's data; ids are
 *   validated by the caller (recall-ids.ts). A user no write has named reads as empty.
 * - ATOMICITY. Each write method is one atomic, durable step: it resolves once committed and
 *   flushed (LMDB) or acknowledged (PostgreSQL), or rejects with a `StorageError` having stored
 *   nothing. Reads see every write that has resolved, from any process of the same database.
 * - DERIVED DATA commits with what it derives from: a daily row or a long-term line with its
 *   postings in the ranked index (the domain's tokenizer, search/tokenizer.ts) and, when the
 *   store was opened with embeddings, its embedding job; a fact with its embedding job; an
 *   ended fact, a removed row, an erased user without their vectors and jobs.
 * - GUARDS. A write that is one step of a longer operation (a turn's reply after its user row,
 *   a job's effects) passes a `WriteGuard`; when the guard no longer holds (the user was erased
 *   since the operation began, the job's lease was lost) nothing is written and the write
 *   rejects with `StaleWriteError` (`write_stale`).
 * - ORDER across processes comes from the database: counters, conditional updates, unique
 *   indexes, row or advisory locks. An in-process lock may make an adapter faster, never correct
 *   (LMDB is one process per directory, so its in-process locks are the whole story there).
 * - RANKING is the domain's: `rank` scores with BM25 as search/bm25.ts defines it (the same
 *   per-user statistics, so both engines order hits alike), `nearest` with cosine similarity;
 *   both apply `RankedFilters` as search/rank-filters.ts defines them.
 * - KEYWORD SCANS (`scanDaily`, `scanSession`) match as search/keyword-search.ts defines it (the
 *   Demo's case-folded substring rule), newest first, at most `limit`, returned oldest first.
 *
 * Session transcripts are conversations `session/{userId}/{sessionId}` of `transcripts` (with
 * the summaries' companion conversations, provider/summary-record.ts). The domain reads them
 * there (a session's summaries with `listSummaries`/`latestSummary` over `transcripts`); their
 * writes go through this port (`appendTurn`, `appendSummary`, `forkSession`, `deleteSession`,
 * `eraseUser`, `importBatch`) so that they commit with what depends on them, and never after
 * what removes them.
 */
export interface RecallStore {
  /** Which engine: `'lmdb'`, `'postgres'`, or a third party's name. */
  readonly engine: string;
  /** The session transcripts, for reads (and the summarizer's companion conversations). */
  readonly transcripts: MessageLog;
  /** The job queue (extraction, embeddings, summaries), in the same database. */
  readonly jobs: JobQueue;
  /** True when the store was opened with embeddings: stored items queue embedding jobs. */
  readonly embeddings: boolean;

  // ---- users ----
  /** Every user with anything stored, sorted (a folder export of all users). */
  users(): Promise<string[]>;
  /** Whether the user has anything stored (sessions, daily rows, long-term memory, log, facts). */
  hasData(userId: string): Promise<boolean>;
  /**
   * Everything of the user in one atomic step: transcripts and their summaries, sessions, the
   * daily view, the log, long-term memory and facts, the index, vectors, jobs (leased ones too),
   * turn keys, fork links. Guards taken before it fail after it.
   */
  eraseUser(userId: string): Promise<ErasureReport>;

  // ---- sessions ----
  /** The session's entry; `undefined` when it has none. */
  session(userId: string, sessionId: string): Promise<SessionEntry | undefined>;
  /** Every entry of the user, listed or not, in creation order. */
  sessions(userId: string): Promise<SessionEntry[]>;
  /**
   * Lists the session, keeps a title it already has or takes `title`, refreshes `updatedAt`;
   * registers it first if unknown. The entry as now stored.
   */
  touchSession(userId: string, sessionId: string, change: { title: string; updatedAt: string }, guard?: WriteGuard): Promise<SessionEntry>;
  /**
   * Branches `sourceId` at `messageId` into the new `targetId` (MessageLog `fork`: the prefix is
   * shared), registered, listed with `title`, and linked to its source, in one step. The target
   * starts with the source's rolling summaries that cover no row after `messageId` (those with
   * `to <= messageId`: a prefix of the source's companion, since each summary covers further
   * than the one before; the companion is forked at the last of them, so their record ids and
   * `previous` links are the source's), and none when there is no such summary.
   * `ForkError` `fork_target_exists` when the target has an entry or rows, `fork_point_missing`
   * when the source has no such row.
   */
  forkSession(userId: string, fork: { sourceId: string; messageId: number; targetId: string; title: string; now: string }): Promise<void>;
  /**
   * Deletes the session's transcript, its summaries, daily rows, log rows, turn keys and entry.
   * `ifLastId`: only while the transcript's last id is still that (the retention sweep's
   * condition); `'changed'` and nothing deleted when it is not. `'missing'` when there was
   * nothing to delete.
   */
  deleteSession(userId: string, sessionId: string, options?: { ifLastId?: number }): Promise<'deleted' | 'missing' | 'changed'>;
  /**
   * Serializes the turns of one session (in every process on the same database): resolves
   * once the caller holds the session, with the function that lets it go.
   */
  lockSession(userId: string, sessionId: string): Promise<() => Promise<void>>;

  // ---- rolling summaries ----
  /**
   * Appends a rolling summary (provider/summarizer.ts) to the session's companion conversation
   * in `transcripts` (`summaryConversationId(sessionConversationId(userId, sessionId))`, the
   * record `summaryEntry(summary)`), in one step, on conditions checked in that step, which
   * is ordered with `eraseUser` and `deleteSession` (a summary is never stored after either):
   * - the guard holds (the user was not erased since the turn that asked for the summary) and
   *   the session's entry is still the one numbered `guard.sessionOrder` (not deleted, nor
   *   deleted and made again): else `StaleWriteError` (`erased`, `session_gone`), nothing stored;
   * - the companion's newest summary is still `summary.previous` (its record id; `null`: the
   *   companion is empty): else `undefined` and nothing stored (another writer came first).
   * Resolves with the summary as stored. `traceContext`: the summary job's, the parent of the append's span.
   */
  appendSummary(
    userId: string,
    sessionId: string,
    summary: NewSummary,
    guard: WriteGuard & { sessionOrder: number },
    traceContext?: TraceContext,
  ): Promise<SummaryRecord | undefined>;

  // ---- the turn ----
  /**
   * Appends rows to the session and, in the same atomic step, what they imply (`with`, given
   * the records as numbered): their daily mirror, the log row, jobs, the turn's key, the
   * session's listing. `opens`: the turn's first write (registers the session if new).
   * A keyed append already stored (a retry) stores no rows again, and its side writes are
   * stored only where they are not already (a daily row by its session message id). Resolves
   * with the records and the guard for the turn's later writes.
   */
  appendTurn(append: TurnAppend, guard?: WriteGuard): Promise<TurnAppended>;
  /** The entry of a keyed turn (`TurnAppend.with`'s `turnKey`); `undefined` when none. */
  turnKey(userId: string, sessionId: string, key: string): Promise<TurnKeyRecord | undefined>;

  // ---- the daily view ----
  /** One day's rows, by id. */
  dailyDay(userId: string, day: string): Promise<DailyRecord[]>;
  /** The anchor row and up to `before`/`after` rows around it in its day; `[]` without the anchor. */
  dailyWindow(userId: string, day: string, anchor: number, before: number, after: number): Promise<DailyRecord[]>;
  /** The user's days with rows, ascending. */
  days(userId: string): Promise<string[]>;
  /** Keyword scan of the daily view (one `day`, or every day with `null`); see KEYWORD SCANS. */
  scanDaily(userId: string, query: { day: string | null; keyword: string; limit: number }): Promise<DailyRecord[]>;
  /** Keyword scan of one session's transcript; see KEYWORD SCANS. */
  scanSession(userId: string, sessionId: string, query: { keyword: string; limit: number }): Promise<StoredMessage[]>;

  // ---- the dialogue log ----
  /** In turn order; one session's when `sessionId` is given. */
  dialogueLog(userId: string, sessionId?: string): Promise<LogRecord[]>;

  // ---- long-term memory and facts ----
  /** Every version of the long-term document, oldest first. */
  longTermVersions(userId: string): Promise<LongTermRecord[]>;
  /** What a facts write is computed from; its `generation` guards that write. */
  factsState(userId: string): Promise<FactsState>;
  /** The `generation` alone (one read): what a cached `FactsState` is checked against. */
  factsGeneration(userId: string): Promise<string>;
  /** Entries by seq (current or not), in the order asked; `undefined` for a seq with none. */
  factEntries(userId: string, seqs: readonly number[]): Promise<(FactEntry | undefined)[]>;
  /** Every entry ever written, in creation order. */
  factHistory(userId: string): Promise<FactEntry[]>;
  /**
   * Applies a change computed from `factsState` if the generation is still `generation`:
   * `true`; else `false` and nothing written (the caller reads again and recomputes). At most
   * one current entry per key is enforced by the store, not by the caller's locks.
   */
  commitFacts(userId: string, change: FactsChange, guard: WriteGuard & { generation: string }): Promise<boolean>;

  // ---- ranked recall ----
  /** The `limit` best documents for `terms` that pass `filters` (BM25, best first, ties by doc). */
  rank(userId: string, query: { terms: readonly string[]; filters: RankedFilters; limit: number }): Promise<RankedDoc[]>;
  /**
   * Rebuilds the user's index from their rows (and the newest long-term document's lines); how
   * many rows it indexed (daily rows and session documents, as `recall.rebuildSearchIndex`
   * answers: the long-term lines are not counted).
   */
  rebuildIndex(userId: string): Promise<number>;
  /** With embeddings: the `limit` documents (`'d'`) or current facts (`'f'`) nearest to `vector`. */
  nearest(userId: string, query: { item: 'd' | 'f'; vector: Float32Array; filters: RankedFilters; limit: number }): Promise<NearDoc[]>;
  /**
   * Stores each vector and completes its embedding job, in one step: skipped where the job is no
   * longer held (erased, or queued again for newer text) or the item's text is not the one
   * embedded (`hash`). How many were stored.
   */
  putVectors(userId: string, vectors: readonly VectorWrite[]): Promise<number>;
  /** Queues the user's items that have no vector (once: later writes queue themselves). */
  backfillEmbeddings(userId: string): Promise<void>;
  /** The text an embedding job embeds now (`undefined`: the item is gone). */
  itemText(userId: string, item: 'd' | 'f', id: number): Promise<string | undefined>;

  // ---- import ----
  /** One step of a Demo folder import (demo-folder/demo-import.ts); rows keep the given ids. */
  importBatch(userId: string, batch: ImportBatch): Promise<void>;

  /** Closes what the store opened (not what it was given: an environment, a pool). Idempotent. */
  close(): Promise<void>;
}

/** Names a multi-step operation's later writes: they store nothing once it no longer holds. */
export interface WriteGuard {
  /** The user's incarnation as the operation's first write found or made it (an erasure ends it). */
  incarnation?: string;
  /** A job's lease (job-queue.ts EFFECTS). */
  job?: JobLease;
}

/** One write of a chat turn (`appendTurn`): rows for the session, and what commits with them. */
export interface TurnAppend {
  /** The user. */
  userId: string;
  /** The session. */
  sessionId: string;
  /** One user row, or one reply (or error) row. */
  entries: readonly NewEntry[];
  /** Appended exactly once under this MessageLog key (chat/turn-keys.ts `rowKeys`). */
  idempotencyKey?: string;
  /** The turn's first write: registers the session (unlisted) if it is new, at `now`. */
  opens?: {
    /** Local wall time the session is registered at. */
    now: string;
  };
  /** What commits with the rows, given their records as numbered. Pure. */
  with(records: readonly StoredMessage[]): TurnSideWrites;
  /** The turn span's context: the parent of the append's span. Default: the active one. */
  traceContext?: TraceContext | undefined;
}

/** What commits with a turn's rows (from `TurnAppend.with`). */
export interface TurnSideWrites {
  /** The rows' daily mirrors (each with its `sessionMessageId`). */
  daily: NewDailyRecord[];
  /** The turn's dialogue-log row. */
  log?: NewLogRecord;
  /** The turn's last row: the turn is settled (crash repair has nothing left to do for it). */
  settles?: boolean;
  /** Jobs the turn calls for (extraction, summary). */
  jobs?: NewJob[];
  /** The keyed turn's entry (its answer or failed attempts), under its key. */
  turnKey?: {
    /** The turn's idempotency key. */
    key: string;
    /** Its answer, or its failed attempts. */
    value: TurnKeyRecord;
  };
  /** Lists the session (see `touchSession`). */
  touch?: {
    /** The title, unless the session has one. */
    title: string;
    /** The session's new `updatedAt`. */
    updatedAt: string;
  };
}

/** What `appendTurn` resolves with. */
export interface TurnAppended {
  /** The rows as numbered. */
  records: StoredMessage[];
  /** The entry as `touch` left it. */
  session?: SessionEntry;
  /** The guard of the turn's later writes. */
  guard: WriteGuard;
}

/** A user's facts as a write is computed from (`factsState`). */
export interface FactsState {
  /** Changed by every `commitFacts` (and by an erasure); `''` for a user never written. */
  generation: string;
  /** Current entries, in creation order. */
  current: FactEntry[];
  /** The next entry's seq (1 for a user without entries). */
  nextSeq: number;
  /** The last document written, as lines (fact-document.ts). */
  doc?: DocTemplate;
  /** The newest long-term document version. */
  longTerm?: LongTermRecord;
}

/** A facts write (`commitFacts`), computed from a `FactsState`. */
export interface FactsChange {
  /** The generation the store holds once this change is applied (the caller's fresh value). */
  generation: string;
  /** New entries and changed ones (an ended entry with its `validTo`), by seq. */
  entries: readonly FactEntry[];
  /** The document's new shape, when it changed. */
  doc?: DocTemplate;
  /** A new document version (numbered on from the newest), or the newest dropped. */
  longTerm?: Omit<LongTermRecord, 'version'> | 'undo';
}

/** A document `rank` found. */
export interface RankedDoc {
  /** The document number (search/doc-numbers.ts). */
  doc: number;
  /** Its BM25 score; higher is better. */
  score: number;
  /** The row of a daily document (with its day's `id`) or of a session document (without one). */
  row?: NewDailyRecord;
}

/** A document or fact `nearest` found. */
export interface NearDoc {
  /** The document number, or the fact's seq. */
  id: number;
  /** Cosine similarity with the query's vector. */
  similarity: number;
  /** As in `RankedDoc`, for a daily or session document. */
  row?: NewDailyRecord;
}

/** An embedding to store (`putVectors`). */
export interface VectorWrite {
  /** `d`: a document; `f`: a fact. */
  item: 'd' | 'f';
  /** The document number or the fact's seq. */
  id: number;
  /** Of the text embedded (embeddings/vector-codec.ts `textHash`): stored only while still current. */
  hash: number;
  /** The embedding. */
  vector: Float32Array;
  /** The embedding job this completes. */
  job: JobLease;
}

/** One step of a Demo folder import (`importBatch`). */
export interface ImportBatch {
  /**
   * The user's import is complete: the store builds what it deferred while importing (the
   * LMDB store: the ranked index of a user who had none, in bulk). Sent last, alone.
   */
  complete?: true;
  /** Entries to store as they are given (their `order` included). */
  sessions?: readonly SessionEntry[];
  /** Appended to the session's transcript, in order. */
  transcript?: {
    /** The session. */
    sessionId: string;
    /** Its rows, in order. */
    entries: readonly NewEntry[];
  };
  /** Daily rows, keeping their ids. */
  daily?: readonly NewDailyRecord[];
  /** Dialogue-log rows, in order. */
  log?: readonly NewLogRecord[];
  /**
   * Session rows no daily row holds (a folder without its daily files): indexed as documents of
   * their own (search/doc-numbers.ts), shown in no view. Each names its session and anchor.
   */
  sessionDocs?: readonly (NewDailyRecord & {
    /** The session the row belongs to. */
    sessionId: string;
    /** Its id in the session. */
    sessionMessageId: number;
  })[];
  /** Appended to the session's summaries' companion in order (`summaryEntry`), unchecked: numbered on from its last. */
  summaries?: {
    /** The session summarized. */
    sessionId: string;
    /** The summaries to append. */
    entries: readonly NewSummary[];
  };
}

/** What `eraseUser` removed. */
export interface ErasureReport {
  /** Conversations erased (sessions and their summaries' companions). */
  conversations: number;
  /** Records removed beside them. */
  keys: number;
  /** With `{ compact: true }` (a runtime's recall): the compaction that followed. */
  compaction?: {
    /** `data.mdb`'s size before, in bytes. */
    bytesBefore: number;
    /** And after. */
    bytesAfter: number;
    /** How long writers waited, in ms. */
    pauseMs: number;
  };
}
