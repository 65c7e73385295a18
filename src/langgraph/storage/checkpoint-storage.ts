/**
 * The saver's storage port: what MnemoSaver and its thread writers (thread-writer.ts) need of a
 * database, so the LangGraph logic (addresses, serialization, deltas, the conflict rule) is
 * written once and the tables live in an adapter: lmdb/lmdb-checkpoint-storage.ts (Mnemo's
 * LMDB environment) or postgres/pg-checkpoint-storage.ts (tables in a PostgreSQL schema).
 *
 * Contract of every adapter:
 * - Reads see every write that resolved (from any process on the same storage).
 * - Writes of one thread are applied in the order they were called, each seeing the ones called
 *   before it (the writer pipelines: it calls the next write before the last one resolved), and
 *   each resolves once durable. A failed write stored nothing.
 * - `putCheckpoint` decides the conflict (`putConflict`, below) and writes in ONE atomic step
 *   against the stored head, so two processes that extend the same head cannot both succeed.
 * - Failures are `StorageError`s (`store_closed` once released or the runtime stopped).
 */
import type { BlobRow, StoredValue } from '../channel-blob.ts';
import type { CheckpointConflictReason } from '../langgraph-errors.ts';

export type Version = string | number;
export type CheckpointKey = [threadId: string, checkpointNs: string, checkpointId: string];

export interface CheckpointRow {
  /** Parent checkpoint id, null for a root. */
  readonly p: string | null;
  /** Serializer type of `c` and `m`. */
  readonly t: string;
  /** The checkpoint, `channel_values` left out. */
  readonly c: Uint8Array;
  /** The metadata. */
  readonly m: Uint8Array;
}

export interface WriteRow {
  /** Channel. */
  readonly c: string;
  readonly t: string;
  readonly v: Uint8Array;
  /** Task path (`writesSortKey`'s first part), '' when none was given. */
  readonly p: string;
}

export interface OrderedWrite {
  readonly taskId: string;
  readonly idx: number;
  readonly row: WriteRow;
}

/** One pending write as the saver hands it to storage. */
export interface WriteInput {
  readonly taskId: string;
  readonly idx: number;
  readonly row: WriteRow;
}

/** A checkpoint to store, with its new channel values (each under its version). */
export interface CheckpointPut {
  readonly threadId: string;
  readonly ns: string;
  readonly checkpointId: string;
  readonly parentId: string | undefined;
  /** A deliberate branch: no need to name the head. */
  readonly fork: boolean;
  /** This process told a reader the namespace was empty (see thread-writer.ts). */
  readonly emptySeen: boolean;
  readonly row: CheckpointRow;
  /**
   * `row` as encoded (a delta on its parent's value when worth it); `whole`, the value whole,
   * stored instead when the delta's base version is not stored.
   */
  readonly blobs: readonly { readonly channel: string; readonly version: Version; readonly row: BlobRow; readonly whole: BlobRow }[];
  /** About how many bytes the write adds (LMDB's disk-room check). */
  readonly bytes: number;
}

export interface PutOutcome {
  /** Set when refused: nothing was written. */
  readonly conflict: CheckpointConflictReason | undefined;
  /** The namespace's head when the put was decided. */
  readonly headId: string | undefined;
  /** Per blob: stored as encoded (so a cached chain position holds). */
  readonly exact: readonly boolean[];
  /** The checkpoint is now the namespace's head (its id is the greatest). */
  readonly latest: boolean;
}

export interface CheckpointStorage {
  /** The runtime whose tree adopts the saver's thread writers; undefined standalone. */
  readonly runtimeName: string | undefined;
  /** Throws `store_closed` once released (or the runtime stopped). */
  checkOpen(): void;
  /** The greatest checkpoint id of a namespace (ids are uuid6: the latest). */
  latestId(threadId: string, ns: string): Promise<string | undefined>;
  checkpoint(threadId: string, ns: string, id: string): Promise<CheckpointRow | undefined>;
  /**
   * The checkpoints matching a `list` query, newest id first, across threads and namespaces
   * too (as SQL savers order them); read lazily.
   */
  list(query: { threadId: string | undefined; ns: string | undefined; before: string | undefined }): AsyncIterable<{ key: CheckpointKey; row: CheckpointRow }>;
  /** The writes stored against a checkpoint, in `writesSortKey` order (task path, task id, idx). */
  pendingWrites(threadId: string, ns: string, id: string): Promise<OrderedWrite[]>;
  /**
   * Channel values as stored under (channel, version), rebuilt from their delta chains: per
   * channel the value, `'empty'` for a version without a value; a version never stored is absent.
   */
  channelValues(threadId: string, ns: string, versions: Readonly<Record<string, Version>>): Promise<Map<string, StoredValue | 'empty'>>;
  /** See the header: decided and written atomically, resolves once durable. */
  putCheckpoint(put: CheckpointPut): Promise<PutOutcome>;
  /** A regular write (idx >= 0) already stored is kept; a special one (idx < 0) replaces it. */
  putWrites(threadId: string, ns: string, checkpointId: string, writes: readonly WriteInput[]): Promise<void>;
  /** Every checkpoint, value and write of the thread. */
  deleteThread(threadId: string): Promise<void>;
  release(): Promise<void>;
}

/**
 * The conflict rule, decided against the stored state inside the write's atomic step (see
 * thread-writer.ts): a put of an id already stored under the same parent is a retry; under
 * another parent, `exists`. A new id must name the head, or be a deliberate branch, or name no
 * parent without this process having told a reader the namespace was empty; else `stale_parent`.
 */
export function putConflict(
  put: Pick<CheckpointPut, 'parentId' | 'fork' | 'emptySeen'>,
  stored: { headId: string | undefined; existingParent: string | null | undefined },
): CheckpointConflictReason | undefined {
  if (stored.existingParent !== undefined) return stored.existingParent === (put.parentId ?? null) ? undefined : 'exists';
  if (put.parentId === stored.headId || put.fork || (put.parentId === undefined && !put.emptySeen)) return undefined;
  return 'stale_parent';
}
