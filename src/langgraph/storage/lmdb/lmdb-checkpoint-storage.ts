import type { Database, Key } from 'lmdb';
import { compareWritesSortKeys, writesSortKey } from '@langchain/langgraph-checkpoint';
import { rebuildValue, type BlobRow, type StoredValue } from '../../channel-blob.ts';
import {
  putConflict,
  type CheckpointKey,
  type CheckpointPut,
  type CheckpointRow,
  type CheckpointStorage,
  type OrderedWrite,
  type PutOutcome,
  type Version,
  type WriteInput,
  type WriteRow,
} from '../checkpoint-storage.ts';
import type { OpenedSource } from './lmdb-source.ts';

/**
 * The saver's storage port (checkpoint-storage.ts) on LMDB. Layout: three named databases in the shared environment. Every key starts
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
 *
 * Reads are synchronous LMDB lookups; every write is one LMDB transaction, issued when called
 * (lmdb-js runs transaction callbacks in issue order: the port's ordering), durable when it resolves.
 */
export const CHECKPOINT_DB_NAMES = {
  checkpoints: 'langgraph.checkpoints',
  channels: 'langgraph.channels',
  writes: 'langgraph.writes',
} as const;

export type BlobKey = [threadId: string, checkpointNs: string, channel: string, version: Version];
export type WriteKey = [threadId: string, checkpointNs: string, checkpointId: string, taskId: string, idx: number];

/** Above any string or number in lmdb-js key order (a Buffer is compared as raw bytes). */
const HIGH = Buffer.from([0xff]);

export class LmdbCheckpointStorage implements CheckpointStorage {
  readonly checkpoints: Database<CheckpointRow, CheckpointKey>;
  readonly channels: Database<BlobRow, BlobKey>;
  readonly writes: Database<WriteRow, WriteKey>;
  readonly runtimeName: string | undefined;

  constructor(readonly source: OpenedSource) {
    this.runtimeName = source.runtimeName;
    this.checkpoints = source.openDB(CHECKPOINT_DB_NAMES.checkpoints);
    this.channels = source.openDB(CHECKPOINT_DB_NAMES.channels);
    this.writes = source.openDB(CHECKPOINT_DB_NAMES.writes);
  }

  checkOpen(): void {
    this.source.checkOpen();
  }

  async latestId(threadId: string, ns: string): Promise<string | undefined> {
    return this.latest(threadId, ns);
  }

  async checkpoint(threadId: string, ns: string, id: string): Promise<CheckpointRow | undefined> {
    this.source.checkOpen();
    return this.checkpoints.get([threadId, ns, id]);
  }

  /**
   * One namespace of one thread is a reverse range read lazily; wider queries collect the
   * matching keys (not the values) and sort them by id.
   */
  async *list(query: { threadId: string | undefined; ns: string | undefined; before: string | undefined }): AsyncGenerator<{ key: CheckpointKey; row: CheckpointRow }> {
    for (const key of this.keys(query)) {
      this.source.checkOpen();
      const row = this.checkpoints.get(key);
      if (row !== undefined) yield { key, row };
    }
  }

  async pendingWrites(threadId: string, ns: string, id: string): Promise<OrderedWrite[]> {
    this.source.checkOpen();
    const out: { sort: ReturnType<typeof writesSortKey>; write: OrderedWrite }[] = [];
    for (const { key, value } of this.writes.getRange({ start: [threadId, ns, id] as unknown as WriteKey, end: [threadId, ns, id, HIGH] as unknown as WriteKey })) {
      out.push({ sort: writesSortKey(value.p, key[3], key[4]), write: { taskId: key[3], idx: key[4], row: value } });
    }
    out.sort((a, b) => compareWritesSortKeys(a.sort, b.sort));
    return out.map((o) => o.write);
  }

  async channelValues(threadId: string, ns: string, versions: Readonly<Record<string, Version>>): Promise<Map<string, StoredValue | 'empty'>> {
    this.source.checkOpen();
    const out = new Map<string, StoredValue | 'empty'>();
    for (const [channel, version] of Object.entries(versions)) {
      const top = this.channels.get([threadId, ns, channel, version]);
      if (top === undefined) continue;
      out.set(channel, rebuildValue(top, (at) => this.channels.get([threadId, ns, channel, at]), { threadId, checkpointNs: ns, channel }));
    }
    return out;
  }

  putCheckpoint(put: CheckpointPut): Promise<PutOutcome> {
    const { threadId, ns, checkpointId } = put;
    return this.source.transact(put.bytes, (): PutOutcome => {
      const headId = this.latest(threadId, ns);
      const conflict = putConflict(put, { headId, existingParent: this.checkpoints.get([threadId, ns, checkpointId])?.p });
      if (conflict !== undefined) return { conflict, headId, exact: [], latest: false };
      void this.checkpoints.put([threadId, ns, checkpointId], put.row);
      const exact = put.blobs.map((blob) => {
        const key: BlobKey = [threadId, ns, blob.channel, blob.version];
        // A version names one value: never rewrite one that later deltas may stand on.
        if (this.channels.doesExist(key)) return false;
        if ('base' in blob.row && !this.channels.doesExist([threadId, ns, blob.channel, blob.row.base])) {
          void this.channels.put(key, blob.whole);
          return false;
        }
        void this.channels.put(key, blob.row);
        return true;
      });
      return { conflict: undefined, headId, exact, latest: headId === undefined || checkpointId > headId };
    });
  }

  putWrites(threadId: string, ns: string, checkpointId: string, writes: readonly WriteInput[]): Promise<void> {
    let bytes = 0;
    for (const w of writes) bytes += 256 + w.row.v.byteLength;
    return this.source.transact(bytes, () => {
      for (const w of writes) {
        const key: WriteKey = [threadId, ns, checkpointId, w.taskId, w.idx];
        if (w.idx >= 0 && this.writes.doesExist(key)) continue;
        void this.writes.put(key, w.row);
      }
    });
  }

  deleteThread(threadId: string): Promise<void> {
    // A removal: no room taken (disk-room.ts).
    return this.source.transact(0, () => {
      for (const { db, key } of [...this.threadKeys(threadId)]) void db.remove(key);
    });
  }

  release(): Promise<void> {
    return this.source.release();
  }

  private latest(threadId: string, ns: string): string | undefined {
    this.source.checkOpen();
    for (const key of this.checkpoints.getKeys({ start: [threadId, ns, HIGH] as unknown as CheckpointKey, end: [threadId, ns] as unknown as CheckpointKey, reverse: true, limit: 1 })) {
      return key[2];
    }
    return undefined;
  }

  private *keys(query: { threadId: string | undefined; ns: string | undefined; before: string | undefined }): Generator<CheckpointKey> {
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

  /** Every key of a thread in the three databases. */
  private *threadKeys(threadId: string): Generator<{ db: Database<unknown, Key[]>; key: Key[] }> {
    for (const db of [this.checkpoints, this.channels, this.writes] as unknown as Database<unknown, Key[]>[]) {
      for (const key of db.getKeys({ start: [threadId] })) {
        if (key[0] !== threadId) break;
        yield { db, key };
      }
    }
  }
}
