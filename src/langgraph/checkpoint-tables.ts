import type { Database, Key } from 'lmdb';
import { compareWritesSortKeys, writesSortKey } from '@langchain/langgraph-checkpoint';
import { StorageError } from '../memory/contract/memory-errors.ts';
import { isEmptyRow, isWholeRow, type BlobRow, type StoredValue } from './channel-blob.ts';
import type { OpenedSource } from './lmdb-source.ts';
import { applyDeltas, type PrefixDelta } from './prefix-delta.ts';

/**
 * The saver's LMDB layout: three named databases in the shared environment. Every key starts
 * with the thread id, so a thread is one contiguous range in each.
 *
 * | db                      | key                                         | value          |
 * |-------------------------|---------------------------------------------|----------------|
 * | langgraph.checkpoints   | [thread_id, checkpoint_ns, checkpoint_id]   | CheckpointRow  |
 * | langgraph.channels      | [thread_id, checkpoint_ns, channel, version]| BlobRow        |
 * | langgraph.writes        | [thread_id, checkpoint_ns, checkpoint_id, task_id, idx] | WriteRow |
 *
 * A checkpoint row holds the checkpoint without its channel values; each value is stored once
 * per (channel, version), when that version is new (as PostgresSaver does), whole or as a
 * delta on its previous version (channel-blob.ts). A read puts the values of the checkpoint's
 * `channel_versions` back. Checkpoint ids are uuid6 (time-ordered), so the latest checkpoint of
 * a namespace is its last key.
 */
export const CHECKPOINT_DB_NAMES = {
  checkpoints: 'langgraph.checkpoints',
  channels: 'langgraph.channels',
  writes: 'langgraph.writes',
} as const;

export type Version = string | number;
export type CheckpointKey = [threadId: string, checkpointNs: string, checkpointId: string];
export type BlobKey = [threadId: string, checkpointNs: string, channel: string, version: Version];
export type WriteKey = [threadId: string, checkpointNs: string, checkpointId: string, taskId: string, idx: number];

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

/** Above any string or number in lmdb-js key order (a Buffer is compared as raw bytes). */
const HIGH = Buffer.from([0xff]);

export class CheckpointTables {
  readonly checkpoints: Database<CheckpointRow, CheckpointKey>;
  readonly channels: Database<BlobRow, BlobKey>;
  readonly writes: Database<WriteRow, WriteKey>;

  constructor(readonly source: OpenedSource) {
    this.checkpoints = source.openDB(CHECKPOINT_DB_NAMES.checkpoints);
    this.channels = source.openDB(CHECKPOINT_DB_NAMES.channels);
    this.writes = source.openDB(CHECKPOINT_DB_NAMES.writes);
  }

  latestId(threadId: string, ns: string): string | undefined {
    for (const key of this.checkpoints.getKeys({ start: [threadId, ns, HIGH] as unknown as CheckpointKey, end: [threadId, ns] as unknown as CheckpointKey, reverse: true, limit: 1 })) {
      return key[2];
    }
    return undefined;
  }

  checkpoint(threadId: string, ns: string, id: string): CheckpointRow | undefined {
    return this.checkpoints.get([threadId, ns, id]);
  }

  /**
   * Checkpoint keys matching a `list` query, newest id first. One namespace of one thread is a
   * reverse range read lazily; wider queries collect the matching keys (not the values) and
   * sort them by id, across threads and namespaces, as SQL savers order them.
   */
  *keys(query: { threadId: string | undefined; ns: string | undefined; before: string | undefined }): Generator<CheckpointKey> {
    const { threadId, ns, before } = query;
    if (threadId !== undefined && ns !== undefined) {
      const start = (before === undefined ? [threadId, ns, HIGH] : [threadId, ns, before]) as unknown as CheckpointKey;
      for (const key of this.checkpoints.getKeys({ start, end: [threadId, ns] as unknown as CheckpointKey, reverse: true })) {
        if (before !== undefined && key[2] >= before) continue;
        yield key;
      }
      return;
    }
    const found: CheckpointKey[] = [];
    const range = threadId === undefined ? {} : { start: [threadId] as unknown as CheckpointKey };
    for (const key of this.checkpoints.getKeys(range)) {
      if (threadId !== undefined && key[0] !== threadId) break;
      if (ns !== undefined && key[1] !== ns) continue;
      if (before !== undefined && key[2] >= before) continue;
      found.push(key);
    }
    found.sort((a, b) => (a[2] < b[2] ? 1 : a[2] > b[2] ? -1 : 0));
    yield* found;
  }

  /** The writes stored against a checkpoint, in `writesSortKey` order (task path, task id, idx). */
  pendingWrites(threadId: string, ns: string, id: string): OrderedWrite[] {
    const out: { sort: ReturnType<typeof writesSortKey>; write: OrderedWrite }[] = [];
    for (const { key, value } of this.writes.getRange({ start: [threadId, ns, id] as unknown as WriteKey, end: [threadId, ns, id, HIGH] as unknown as WriteKey })) {
      out.push({ sort: writesSortKey(value.p, key[3], key[4]), write: { taskId: key[3], idx: key[4], row: value } });
    }
    out.sort((a, b) => compareWritesSortKeys(a.sort, b.sort));
    return out.map((o) => o.write);
  }

  /**
   * A channel value as stored under (channel, version): its bytes rebuilt from the delta chain,
   * `'empty'` for a version without a value, undefined if that version was never stored.
   */
  channelValue(threadId: string, ns: string, channel: string, version: Version): StoredValue | 'empty' | undefined {
    const top = this.channels.get([threadId, ns, channel, version]);
    if (top === undefined) return undefined;
    if (isEmptyRow(top)) return 'empty';
    if (isWholeRow(top)) return { type: top.t, bytes: top.b, depth: 0, chainBytes: 0, rootLength: top.b.length };
    const deltas: PrefixDelta[] = [];
    let row: BlobRow | undefined = top;
    let at: Version = version;
    while (row !== undefined && !isEmptyRow(row) && !isWholeRow(row)) {
      deltas.push({ keep: row.keep, tail: row.tail });
      at = row.base;
      row = this.channels.get([threadId, ns, channel, at]);
    }
    if (row === undefined || isEmptyRow(row)) {
      throw new StorageError('storage_failed', `channel ${channel} of thread ${threadId}: version ${String(at)} under a delta is missing`, {
        threadId,
        checkpointNs: ns,
        channel,
        version: at,
      });
    }
    return { type: top.t, bytes: applyDeltas(row.b, deltas.reverse()), depth: top.d, chainBytes: top.cb, rootLength: top.rl };
  }

  /** Every key of a thread in the three databases (for deleteThread). */
  *threadKeys(threadId: string): Generator<{ db: Database<unknown, Key[]>; key: Key[] }> {
    for (const db of [this.checkpoints, this.channels, this.writes] as unknown as Database<unknown, Key[]>[]) {
      for (const key of db.getKeys({ start: [threadId] })) {
        if (key[0] !== threadId) break;
        yield { db, key };
      }
    }
  }
}
