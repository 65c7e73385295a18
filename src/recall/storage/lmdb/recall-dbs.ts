import type { Database, DatabaseOptions, Key, RootDatabase } from 'lmdb';
import type { WriteAhead } from '../../../memory/lmdb/write-ahead.ts';
import type { DiskRoom } from '../../../memory/lmdb/disk-room.ts';
import { durableTransaction } from '../../../memory/lmdb/lmdb-environment.ts';
import type { ErrorRecord } from '../../../errors.ts';
import type { JsonObject } from '../../../message.ts';
import type { RowError, ToolCallView, TurnKeyRecord } from '../../records/records.ts';
import { openSearchDbs, SEARCH_DB_NAMES, type SearchDbs } from './search/search-dbs.ts';
import type { DocTemplate, FactEntry, FactOrigin } from '../../records/fact-entry.ts';
import { EMBED_DB_NAMES, openEmbedDbs, type EmbedDbs } from './embeddings/embed-dbs.ts';

/**
 * The named LMDB databases of the layered memory, all in the runtime's environment. Every key
 * starts with the user id (or, for a few bookkeeping marks, with a MARKER, a string starting
 * with U+0001, which no id holds, followed by the user id), so no range of one user's keys can
 * reach another's, and a user's erasure (user-erasure.ts) removes `[user] .. [user, HIGH]` and
 * `[marker, user] .. [marker, user, HIGH]` from EVERY db named in `DB_NAMES` without knowing
 * what it holds. A db added to `DB_NAMES` must keep that rule (test/recall/user-erasure.test.ts
 * checks every db after real writes); its open options go in `DB_OPTIONS`. lmdb-js writes
 * an array key's parts as UTF-8 separated by a 0 byte, ids hold no NUL (nor any control
 * character, recall-ids.ts), so `[user, session]` is one key for one pair only, and a range
 * `[user] .. [user, HIGH]` never reaches user `user2`. No id holds U+10FFFF (a noncharacter),
 * so `HIGH` closes any range of them.
 *
 * | db                      | key                                  | value          |
 * |-------------------------|--------------------------------------|----------------|
 * | recall.daily            | [userId, 'YYYY-MM-DD', id]           | DailyValue     |
 * | recall.daily-by-session | [userId, sessionId, day, id]         | true           |
 * | recall.sessions         | [userId, sessionId]                  | SessionEntry   |
 * | recall.long-term        | [userId, version]                    | LongTermValue  |
 * | recall.log              | [userId, sessionId or '', seq]       | LogValue       |
 * | recall.counters         | [userId, 'session-order' / 'log-seq'] | number        |
 * |                         | [userId, 'daily-high', day]          | number         |
 * |                         | [userId, 'daily-rows']               | number         |
 * |                         | [userId, 'daily-mirrored', sessionId] | number        |
 * |                         | ['\u0001first-turn', userId, sessionId] | 0            |
 * |                         | ['\u0001daily-pending', userId, sessionId] | number    |
 * |                         | [userId, 'fact-seq']                 | number         |
 * |                         | [userId, 'embed-live']               | 1              |
 * | recall.facts            | [userId, seq]                        | FactEntry      |
 * | recall.fact-current     | [userId, seq]                        | true           |
 * | recall.fact-keys        | [userId, key]                        | seq            |
 * | recall.fact-doc         | [userId]                             | DocTemplate    |
 * | recall.fact-queue       | [userId, sessionId, replyId]         | ExtractionJob  |
 * | recall.fact-dead        | [userId, sessionId, replyId]         | DeadExtractionJob |
 * | recall.turn-keys        | [userId, sessionId, idempotencyKey]  | TurnKeyValue   |
 *
 * The `fact*` dbs are long-term memory as facts (src/recall/facts/): every entry ever written
 * (superseded ones too) in `facts`, the ids of the current ones in `fact-current`, the current
 * entry of each key in `fact-keys`, the shape of the rendered document in `fact-doc`, and the
 * turns waiting for fact extraction in `fact-queue` (those that failed every attempt in
 * `fact-dead`). `turn-keys` holds the answers of chat
 * turns made under an idempotency key (chat/turn-keys.ts).
 *
 * The ranked index's databases are listed in `search/search-dbs.ts`, the embeddings' (queue,
 * vectors, dead letters) in `embeddings/embed-dbs.ts` (keys also start with the user id).
 *
 * Session transcripts are not here: they are conversations `session/{userId}/{sessionId}` of
 * the runtime's MessageLog (see `session-row.ts` for how a row is stored there).
 */
export const DB_NAMES = {
  daily: 'recall.daily',
  dailyBySession: 'recall.daily-by-session',
  sessions: 'recall.sessions',
  longTerm: 'recall.long-term',
  log: 'recall.log',
  counters: 'recall.counters',
  facts: 'recall.facts',
  factCurrent: 'recall.fact-current',
  factKeys: 'recall.fact-keys',
  factDoc: 'recall.fact-doc',
  factQueue: 'recall.fact-queue',
  factDead: 'recall.fact-dead',
  turnKeys: 'recall.turn-keys',
  jobs: 'recall.jobs',
} as const;

/** Open options of a db in `DB_NAMES`, when not the default `{ encoding: 'json' }`. */
export const DB_OPTIONS: Partial<Record<(typeof DB_NAMES)[keyof typeof DB_NAMES], DatabaseOptions>> = {};

/** Marks (keys `[marker, userId, ...]`) start with this; no id holds a control character. */
export const MARKER_START = '\u0001';

/** Closes a range over string components: UTF-8 of U+10FFFF sorts after every id. */
export const HIGH = '\u{10FFFF}';





export type { DailyValue, LogValue, LongTermValue, StoredDeadExtractionJob, StoredExtractionJob, StoredFact, StoredSession } from './stored-values.ts';
import type { DailyValue, LogValue, LongTermValue, StoredDeadExtractionJob, StoredExtractionJob, StoredFact, StoredSession } from './stored-values.ts';

export interface RecallDbs {
  env: RootDatabase;
  /** The environment's directory (pool workers open it by path). */
  path: string;
  daily: Database<DailyValue, [string, string, number]>;
  /** `daily` as raw JSON text, for the keyword scan's prefilter (search-scan.ts). */
  dailyText: Database<string, [string, string, number]>;
  dailyBySession: Database<true, [string, string, string, number]>;
  sessions: Database<StoredSession, [string, string]>;
  longTerm: Database<LongTermValue, [string, number]>;
  log: Database<LogValue, [string, string, number]>;
  counters: Database<number, string[]>;
  /** The ranked index (search/search-dbs.ts), written in the same transactions as the rows. */
  search: SearchDbs;
  /** The embeddings' queue and vectors (embeddings/embed-dbs.ts); written only when configured. */
  embed: EmbedDbs;
  facts: Database<StoredFact, [string, number]>;
  factCurrent: Database<true, [string, number]>;
  factKeys: Database<number, [string, string]>;
  factDoc: Database<DocTemplate, [string]>;
  factQueue: Database<StoredExtractionJob, [string, string, number]>;
  factDead: Database<StoredDeadExtractionJob, [string, string, number]>;
  /** Set by the adapter: what commits hand on after they commit (`CommitNotes`). */
  notes?: CommitNotes;
  /** Every db of `DB_NAMES`, by name, for what works on all of them alike (erasure). */
  all: ReadonlyMap<string, Database<unknown, Key>>;
  turnKeys: Database<TurnKeyRecord, [string, string, string]>;
}

/**
 * The environment the layered memory lives in: the runtime's (or a standalone one from the
 * memory layer's `acquireEnvironment`), with its path for the pool's workers.
 */
export interface RecallEnvironment {
  /** The open LMDB root database (lmdb's `open()`); the recall store opens its named databases in it. */
  root: RootDatabase;
  /** The environment's directory, which the search pool's workers open read-only. */
  path: string;
  /** @internal The memory layer's guard against lmdb 3.5.6's unhandled commit-failure rejection. */
  guardFailedCommits?(): void;
  /** @internal The memory layer's write-ahead journal of message appends, when it has one. */
  ahead?: Pick<WriteAhead, 'settle' | 'scrub'> | undefined;
  /** @internal The memory layer's room check (disk-room.ts): a commit takes room first, when there is one. */
  room?: DiskRoom | undefined;
}

/** JSON values, like the memory layer's `messages` db: exact round trips, and workers decode them alike. */
const JSON_DB = { encoding: 'json' } as const;

export function openRecallDbs(environment: RecallEnvironment): RecallDbs & { guard: () => void; room: DiskRoom | undefined } {
  const env = environment.root;
  return {
    env,
    path: environment.path,
    guard: () => environment.guardFailedCommits?.(),
    room: environment.room,
    daily: env.openDB(DB_NAMES.daily, JSON_DB),
    dailyText: openRawText(env, DB_NAMES.daily),
    dailyBySession: env.openDB(DB_NAMES.dailyBySession, JSON_DB),
    sessions: env.openDB(DB_NAMES.sessions, JSON_DB),
    longTerm: env.openDB(DB_NAMES.longTerm, JSON_DB),
    log: env.openDB(DB_NAMES.log, JSON_DB),
    counters: env.openDB(DB_NAMES.counters, JSON_DB),
    search: openSearchDbs(env),
    embed: openEmbedDbs(env),
    facts: env.openDB(DB_NAMES.facts, JSON_DB),
    factCurrent: env.openDB(DB_NAMES.factCurrent, JSON_DB),
    factKeys: env.openDB(DB_NAMES.factKeys, JSON_DB),
    factDoc: env.openDB(DB_NAMES.factDoc, JSON_DB),
    factQueue: env.openDB(DB_NAMES.factQueue, JSON_DB),
    factDead: env.openDB(DB_NAMES.factDead, JSON_DB),
    // The ranked index's and the embeddings' dbs too: erasure removes a user's prefix from every one of them.
    all: new Map([...Object.values(DB_NAMES), ...Object.values(SEARCH_DB_NAMES), ...Object.values(EMBED_DB_NAMES)].map((name) => [name, env.openDB<unknown, Key>(name, (DB_OPTIONS as Record<string, DatabaseOptions | undefined>)[name] ?? JSON_DB)])),
    turnKeys: env.openDB(DB_NAMES.turnKeys, JSON_DB),
  };
}

/**
 * Runs `work` inside one LMDB write transaction (reads in it see its own writes; it commits
 * with whatever else this event turn wrote) and resolves once committed and flushed. A failed
 * commit rejects with the memory layer's `StorageError` and leaves nothing of `work` behind.
 * `work` must be synchronous and short: it runs on the main thread inside the write lock.
 * It first takes room (disk-room.ts): on a nearly full disk it is refused with `storage_full`,
 * nothing run. `commitRemoval` is the same for work that only removes: never refused.
 */
export function commit<T>(dbs: CommitDbs, work: () => T): Promise<T> {
  return noted(dbs, RECALL_COMMIT_BYTES, work);
}

export function commitRemoval<T>(dbs: CommitDbs, work: () => T): Promise<T> {
  return noted(dbs, 0, work);
}

/**
 * What a transaction body noted for after its commit (the jobs it queued: lmdb-job-queue.ts),
 * handed on only once the commit succeeded, so nothing learns of a write that did not happen.
 */
export interface CommitNotes {
  take(): unknown;
  committed(taken: unknown): void;
}

async function noted<T>(dbs: CommitDbs, bytes: number, work: () => T): Promise<T> {
  const notes = dbs.notes;
  let taken: unknown;
  const result = await durableTransaction({ root: dbs.env, path: dbs.path, room: dbs.room, guard: dbs.guard }, bytes, () => {
    try {
      return work();
    } finally {
      if (notes !== undefined) taken = notes.take();
    }
  });
  if (notes !== undefined) notes.committed(taken);
  return result;
}

type CommitDbs = RecallDbs & { guard: () => void; room?: DiskRoom | undefined };

/**
 * What a commit takes room for (its writes are not known before `work` runs): a chat turn's
 * rows, postings and counters come to a few KiB; larger ones fit in the headroom.
 */
const RECALL_COMMIT_BYTES = 64 * 1024;

/** Bumps and returns a per-user counter; call only inside a write transaction. */
export function nextCounter(dbs: RecallDbs, name: 'session-order' | 'log-seq' | 'fact-seq', userId: string): number {
  const n = (dbs.counters.get([userId, name]) ?? 0) + 1;
  dbs.counters.put([userId, name], n);
  return n;
}




/** The raw-text handle of a JSON db. Read only. */
export function openRawText<K extends Key>(env: RootDatabase, name: string): Database<string, K> {
  const encoder = {
    encode: () => {
      throw new Error(`${name}: the raw-text handle is read only`);
    },
    // lmdb-js hands over its shared read buffer (no `needsStableBuffer`): read it at once.
    // `get` passes its options, not the size: the shared buffer's `length` is the value's then
    // (Node 24's toString reads past it without an end).
    decode: (bytes: Buffer, size: unknown) => bytes.toString('latin1', 0, typeof size === 'number' ? size : bytes.length),
  };
  return env.openDB<string, K>(name, { encoding: 'binary', encoder } as never);
}
