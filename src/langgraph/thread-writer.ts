/**
 * The thread writer: one gen server per `thread_id` through which every write of that thread
 * goes (`put`, `putWrites`, `deleteThread`), one at a time, in arrival order. It is what makes a
 * thread's history single-writer:
 *
 * - A `put` is checked and written in one atomic step of the storage (checkpoint-storage.ts:
 *   one LMDB or PostgreSQL transaction): its parent must be the head (the
 *   latest checkpoint) of its namespace, or the put is refused with `CheckpointConflictError`
 *   and nothing is written. Two writers that read the same head cannot both extend it: the
 *   second is told, instead of silently forking the chain (LangGraph#8796). The check runs
 *   against the database inside the write transaction, so it holds across processes too.
 *   Accepted without naming the head: a put of an id that exists under the same parent (a
 *   retry), a deliberate branch (`metadata.source === 'fork'`, LangGraph's own forks, or
 *   `configurable.fork === true`: time travel, editing an old checkpoint), and a put naming no
 *   parent. LangGraph's first write on a thread names none, after a read found the thread
 *   empty; such reads are reported to the writer (`saw_empty`), and once it has told a reader
 *   a namespace was empty, a parentless put on that namespace finding a head is refused like a
 *   stale parent: two first writers raced on a new thread. A parentless put from a writer that
 *   never read (LangGraph's conformance suite does that) starts a new root.
 * - `putWrites` checks "already stored?" and writes in the same serialized step, so concurrent
 *   writes of one task cannot lose one another (LangGraph#8115): a regular write (idx >= 0)
 *   already stored is kept, a special one (error, interrupt, ...) replaces its predecessor.
 * - Every request resolves once its transaction is durable. Requests are pipelined: the writer
 *   issues a request's write and takes the next request without waiting for the commit (the
 *   storage applies a thread's writes in call order, each seeing the ones before), so on LMDB
 *   what arrives together (a step's writes and its checkpoint) shares one commit and one
 *   flush: group commit per thread.
 *
 * State is a cache, rebuilt from the storage on demand: per namespace the head and its channel
 * versions, per channel the bytes of its latest value (the base of the next delta). It is set
 * when a request is issued, as if it will succeed, and dropped by any failure; the checks that
 * matter run inside the transaction (the head, and that a delta's base version is stored: if
 * not, the value is written whole). The writer passivates after `idleMs` without requests and
 * with nothing in flight: it tells its router first (synchronously, so no request can reach it
 * after), then stops `normal`. A graceful stop waits for the writes in flight.
 */
import type { SerializerProtocol } from '@langchain/langgraph-checkpoint';
import { genServer, noReply, type From, type Pid, type ServerSelf } from '../otp/index.ts';
import { encodeBlob, type BlobRow, type StoredValue } from './channel-blob.ts';
import { CheckpointConflictError } from './langgraph-errors.ts';
import type { CheckpointPut, CheckpointRow, CheckpointStorage, Version } from './storage/checkpoint-storage.ts';

export interface SerializedValue {
  readonly type: string;
  readonly bytes: Uint8Array;
}

export interface SerializedPut {
  readonly type: string;
  /** The checkpoint without `channel_values`. */
  readonly checkpoint: Uint8Array;
  readonly metadata: Uint8Array;
  /** The checkpoint's `channel_versions`. */
  readonly versions: Readonly<Record<string, Version>>;
  /** One per channel in `newVersions`; `value` undefined when the channel holds none. */
  readonly channels: readonly { readonly channel: string; readonly version: Version; readonly value: SerializedValue | undefined }[];
}

export interface SerializedWrite {
  readonly taskId: string;
  readonly idx: number;
  readonly channel: string;
  readonly value: SerializedValue;
  readonly taskPath: string;
}

export type WriterRequest =
  | {
      readonly type: 'put';
      readonly ns: string;
      readonly checkpointId: string;
      readonly parentId: string | undefined;
      readonly fork: boolean;
      readonly payload: Promise<SerializedPut>;
    }
  | { readonly type: 'put_writes'; readonly ns: string; readonly checkpointId: string; readonly writes: Promise<readonly SerializedWrite[]> }
  | { readonly type: 'delete_thread' }
  /** A read found the namespace empty (see the header). */
  | { readonly type: 'saw_empty'; readonly ns: string };

export interface WriterDeps {
  readonly storage: CheckpointStorage;
  readonly serde: SerializerProtocol;
  readonly idleMs: number;
  /** Told synchronously when the writer passivates, before it stops. */
  readonly retire: (threadId: string, pid: Pid) => void;
}

interface Head {
  readonly id: string;
  readonly versions: Readonly<Record<string, Version>>;
}

type CachedValue = StoredValue & { readonly version: Version };

interface WriterState {
  readonly threadId: string;
  readonly deps: WriterDeps;
  readonly self: ServerSelf;
  timer: ReturnType<typeof setTimeout> | undefined;
  readonly heads: Map<string, Head>;
  /** Latest stored value per `ns \0 channel`. */
  readonly values: Map<string, CachedValue>;
  /** Namespaces a reader was told were empty. */
  readonly emptySeen: Set<string>;
  /** Writes issued and not yet durable. */
  readonly inFlight: Set<Promise<void>>;
  stopping: boolean;
}

export function threadWriter() {
  return genServer<WriterState, { threadId: string; deps: WriterDeps }, WriterRequest>({
    init: ({ threadId, deps }, self) => {
      const state: WriterState = {
        threadId,
        deps,
        self,
        timer: undefined,
        heads: new Map(),
        values: new Map(),
        emptySeen: new Set(),
        inFlight: new Set(),
        stopping: false,
      };
      arm(state);
      return state;
    },
    handleCall: async (request, from: From, state) => {
      if (state.timer !== undefined) clearTimeout(state.timer);
      state.timer = undefined;
      let durable: Promise<void>;
      try {
        ({ durable } = await issue(state, request));
      } catch (error) {
        forget(state, error);
        from.fail(error);
        if (state.inFlight.size === 0) arm(state);
        return noReply;
      }
      const tracked: Promise<void> = durable
        .then(
          () => from.reply(undefined),
          (error: unknown) => {
            forget(state, error);
            from.fail(error);
          },
        )
        .finally(() => {
          state.inFlight.delete(tracked);
          if (state.inFlight.size === 0 && state.timer === undefined && !state.stopping) arm(state);
        });
      state.inFlight.add(tracked);
      return noReply;
    },
    terminate: async (_reason, state) => {
      state.stopping = true;
      if (state.timer !== undefined) clearTimeout(state.timer);
      await Promise.allSettled([...state.inFlight]);
    },
  });
}

function arm(state: WriterState): void {
  state.timer = setTimeout(() => {
    state.deps.retire(state.threadId, state.self.pid);
    state.self.stop('normal');
  }, state.deps.idleMs);
  state.timer.unref();
}

/** Drop the cache after a failure (a conflict leaves it right: nothing was written). */
function forget(state: WriterState, error: unknown): void {
  if (error instanceof CheckpointConflictError) return;
  state.heads.clear();
  state.values.clear();
}

/**
 * Start the request's write; resolves once it is issued, with the promise of its durable
 * completion (wrapped: an async function would otherwise adopt that promise and wait for it).
 */
interface Issued {
  readonly durable: Promise<void>;
}

async function issue(state: WriterState, request: WriterRequest): Promise<Issued> {
  switch (request.type) {
    case 'put':
      return issuePut(state, request);
    case 'put_writes':
      return issuePutWrites(state, request);
    case 'delete_thread':
      return issueDelete(state);
    case 'saw_empty':
      state.emptySeen.add(request.ns);
      return { durable: Promise.resolve() };
  }
}

const valueKey = (ns: string, channel: string) => `${ns}\u0000${channel}`;

async function issuePut(state: WriterState, request: Extract<WriterRequest, { type: 'put' }>): Promise<Issued> {
  const { storage } = state.deps;
  const { threadId } = state;
  const { ns, checkpointId, parentId, fork } = request;
  const payload = await request.payload;
  const parentVersions = parentId === undefined ? undefined : await versionsOf(state, ns, parentId);

  const blobs: (CheckpointPut['blobs'][number] & { cached: CachedValue | undefined })[] = [];
  for (const { channel, version, value } of payload.channels) {
    if (value === undefined) {
      blobs.push({ channel, version, row: { e: 1 }, whole: { e: 1 }, cached: undefined });
      continue;
    }
    const baseVersion = parentVersions?.[channel];
    const base = baseVersion === undefined || baseVersion === version ? undefined : await baseValue(state, ns, channel, baseVersion);
    const { row, stored } = encodeBlob(value, base);
    blobs.push({ channel, version, row, whole: { t: value.type, b: value.bytes }, cached: { ...stored, version } });
  }
  const row: CheckpointRow = { p: parentId ?? null, t: payload.type, c: payload.checkpoint, m: payload.metadata };

  let bytes = row.c.byteLength + row.m.byteLength;
  for (const blob of blobs) bytes += ROW_BYTES + Math.max(blobBytes(blob.row), blobBytes(blob.whole));
  const txn = storage.putCheckpoint({ threadId, ns, checkpointId, parentId, fork, emptySeen: state.emptySeen.has(ns), row, blobs, bytes });

  // Optimistic: the next request (perhaps in this same commit) builds on this one.
  const head: Head = { id: checkpointId, versions: payload.versions };
  state.heads.set(ns, head);
  for (const blob of blobs) {
    if (blob.cached !== undefined) state.values.set(valueKey(ns, blob.channel), blob.cached);
    else state.values.delete(valueKey(ns, blob.channel));
  }

  const durable = txn.then((outcome) => {
    if (outcome.conflict !== undefined || !outcome.latest) {
      if (state.heads.get(ns) === head) state.heads.delete(ns);
    }
    blobs.forEach((blob, i) => {
      const key = valueKey(ns, blob.channel);
      if (outcome.exact[i] !== true && blob.cached !== undefined && state.values.get(key) === blob.cached) state.values.delete(key);
    });
    if (outcome.conflict !== undefined) {
      throw new CheckpointConflictError({ threadId, checkpointNs: ns, checkpointId, parentId, headId: outcome.headId, reason: outcome.conflict });
    }
  });
  return { durable };
}

/** A row's keys and small fields, for the room a write takes (disk-room.ts). */
const ROW_BYTES = 256;

function blobBytes(row: BlobRow): number {
  return 'b' in row ? row.b.byteLength : 'tail' in row ? row.tail.byteLength : 0;
}

/** The channel versions of a checkpoint: the cached head's, or read from its row. */
async function versionsOf(state: WriterState, ns: string, checkpointId: string): Promise<Readonly<Record<string, Version>> | undefined> {
  const head = state.heads.get(ns);
  if (head?.id === checkpointId) return head.versions;
  const row = await state.deps.storage.checkpoint(state.threadId, ns, checkpointId);
  if (row === undefined) return undefined;
  const checkpoint = (await state.deps.serde.loadsTyped(row.t, row.c)) as { channel_versions?: Record<string, Version> };
  return checkpoint.channel_versions ?? {};
}

async function baseValue(state: WriterState, ns: string, channel: string, version: Version): Promise<CachedValue | undefined> {
  const cached = state.values.get(valueKey(ns, channel));
  if (cached?.version === version) return cached;
  const stored = (await state.deps.storage.channelValues(state.threadId, ns, { [channel]: version })).get(channel);
  return stored === undefined || stored === 'empty' ? undefined : { ...stored, version };
}

async function issuePutWrites(state: WriterState, request: Extract<WriterRequest, { type: 'put_writes' }>): Promise<Issued> {
  const writes = await request.writes;
  if (writes.length === 0) return { durable: Promise.resolve() };
  const rows = writes.map((w) => ({ taskId: w.taskId, idx: w.idx, row: { c: w.channel, t: w.value.type, v: w.value.bytes, p: w.taskPath } }));
  return { durable: state.deps.storage.putWrites(state.threadId, request.ns, request.checkpointId, rows) };
}

function issueDelete(state: WriterState): Issued {
  state.heads.clear();
  state.values.clear();
  state.emptySeen.clear();
  return { durable: state.deps.storage.deleteThread(state.threadId) };
}
