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
} from '../checkpoint-storage.ts';
import { run, type PgLangGraph } from './pg-langgraph-connection.ts';

/**
 * The saver's storage port (checkpoint-storage.ts) on PostgreSQL, tables `langgraph_*`
 * (langgraph-schema.ts). Correctness across processes comes from the database:
 *
 * - A put is one transaction that first takes the row lock of its namespace's head
 *   (`langgraph_heads`, made if missing), then reads the stored state (the checkpoint's id,
 *   which blob versions exist) in fresh statements, decides (`putConflict`) and writes the
 *   checkpoint, its new channel values and the new head in one statement. Two processes that
 *   extend one head queue on that lock, and the second finds the head moved: refused, nothing
 *   written. `deleteThread` takes the thread's head locks too.
 * - Pending writes are one upsert: a regular write (idx >= 0) already stored is kept
 *   (`DO NOTHING`), a special one replaces it.
 * - Ordering of one thread's writes in this process (the port's contract, which the writer's
 *   pipelining relies on) is kept by running them one after another; different threads run at
 *   once on the pool.
 * - A value's delta chain is read in one recursive statement, every channel of a checkpoint at once.
 */
export class PgCheckpointStorage implements CheckpointStorage {
  readonly runtimeName: string | undefined;
  /** Per thread, the last write called (settled or not). */
  private readonly tails = new Map<string, Promise<unknown>>();

  constructor(private readonly db: PgLangGraph) {
    this.runtimeName = db.runtimeName;
  }

  checkOpen(): void {
    this.db.checkOpen();
  }

  async latestId(threadId: string, ns: string): Promise<string | undefined> {
    const rows = await this.db.query<{ head_id: string | null }>(`SELECT head_id FROM ${this.db.s}.langgraph_heads WHERE thread_id = $1 AND checkpoint_ns = $2`, [threadId, ns]);
    return rows[0]?.head_id ?? undefined;
  }

  async checkpoint(threadId: string, ns: string, id: string): Promise<CheckpointRow | undefined> {
    const rows = await this.db.query<CheckpointColumns>(
      `SELECT parent_id, type, checkpoint, metadata FROM ${this.db.s}.langgraph_checkpoints WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3`,
      [threadId, ns, id],
    );
    return rows[0] === undefined ? undefined : checkpointRow(rows[0]);
  }

  /** Newest first, in pages; one namespace of one thread walks its primary key backwards. */
  async *list(query: { threadId: string | undefined; ns: string | undefined; before: string | undefined }): AsyncGenerator<{ key: CheckpointKey; row: CheckpointRow }> {
    const { threadId, ns, before } = query;
    const page = 64;
    let cursor: { id: string; thread: string; ns: string } | undefined;
    for (;;) {
      const rows =
        threadId !== undefined && ns !== undefined
          ? await this.db.query<ListedColumns>(
              `SELECT thread_id, checkpoint_ns, checkpoint_id, parent_id, type, checkpoint, metadata FROM ${this.db.s}.langgraph_checkpoints
               WHERE thread_id = $1 AND checkpoint_ns = $2 AND ($3::text IS NULL OR checkpoint_id < $3)
               ORDER BY checkpoint_id DESC LIMIT ${page}`,
              [threadId, ns, cursor?.id ?? before ?? null],
            )
          : await this.db.query<ListedColumns>(
              `SELECT thread_id, checkpoint_ns, checkpoint_id, parent_id, type, checkpoint, metadata FROM ${this.db.s}.langgraph_checkpoints
               WHERE ($1::text IS NULL OR thread_id = $1) AND ($2::text IS NULL OR checkpoint_ns = $2) AND ($3::text IS NULL OR checkpoint_id < $3)
                 AND ($4::text IS NULL OR (checkpoint_id, thread_id, checkpoint_ns) < ($4, $5, $6))
               ORDER BY checkpoint_id DESC, thread_id DESC, checkpoint_ns DESC LIMIT ${page}`,
              [threadId ?? null, ns ?? null, before ?? null, cursor?.id ?? null, cursor?.thread ?? null, cursor?.ns ?? null],
            );
      for (const row of rows) yield { key: [row.thread_id, row.checkpoint_ns, row.checkpoint_id], row: checkpointRow(row) };
      if (rows.length < page) return;
      const last = rows[rows.length - 1]!;
      cursor = { id: last.checkpoint_id, thread: last.thread_id, ns: last.checkpoint_ns };
    }
  }

  async pendingWrites(threadId: string, ns: string, id: string): Promise<OrderedWrite[]> {
    const rows = await this.db.query<{ task_id: string; idx: number; channel: string; type: string; value: Buffer; task_path: string }>(
      `SELECT task_id, idx, channel, type, value, task_path FROM ${this.db.s}.langgraph_writes WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3`,
      [threadId, ns, id],
    );
    return rows
      .map((r) => ({ sort: writesSortKey(r.task_path, r.task_id, r.idx), write: { taskId: r.task_id, idx: r.idx, row: { c: r.channel, t: r.type, v: r.value, p: r.task_path } } }))
      .sort((a, b) => compareWritesSortKeys(a.sort, b.sort))
      .map((o) => o.write);
  }

  async channelValues(threadId: string, ns: string, versions: Readonly<Record<string, Version>>): Promise<Map<string, StoredValue | 'empty'>> {
    const entries = Object.entries(versions);
    const out = new Map<string, StoredValue | 'empty'>();
    if (entries.length === 0) return out;
    const rows = await this.db.query<BlobColumns & { channel: string; version: string }>(
      `WITH RECURSIVE chain AS (
         SELECT c.channel, c.version, c.type, c.bytes, c.base, c.keep, c.depth, c.chain_bytes, c.root_length
         FROM ${this.db.s}.langgraph_channels c JOIN unnest($3::text[], $4::text[]) AS w(channel, version) ON c.channel = w.channel AND c.version = w.version
         WHERE c.thread_id = $1 AND c.checkpoint_ns = $2
         UNION ALL
         SELECT c.channel, c.version, c.type, c.bytes, c.base, c.keep, c.depth, c.chain_bytes, c.root_length
         FROM chain JOIN ${this.db.s}.langgraph_channels c ON c.thread_id = $1 AND c.checkpoint_ns = $2 AND c.channel = chain.channel AND c.version = chain.base
       )
       SELECT * FROM chain`,
      [threadId, ns, entries.map(([channel]) => channel), entries.map(([, version]) => versionText(version))],
    );
    const stored = new Map<string, BlobRow>();
    for (const row of rows) stored.set(`${row.channel}\u0000${row.version}`, blobRow(row));
    for (const [channel, version] of entries) {
      const top = stored.get(`${channel}\u0000${versionText(version)}`);
      if (top === undefined) continue;
      out.set(channel, rebuildValue(top, (at) => stored.get(`${channel}\u0000${versionText(at)}`), { threadId, checkpointNs: ns, channel }));
    }
    return out;
  }

  putCheckpoint(put: CheckpointPut): Promise<PutOutcome> {
    return this.inOrder(put.threadId, () =>
      this.db.tx(async (client, rollback): Promise<PutOutcome> => {
        const { s } = this.db;
        const { threadId, ns, checkpointId } = put;
        const [head] = await run<{ head_id: string | null }>(
          client,
          `INSERT INTO ${s}.langgraph_heads AS h (thread_id, checkpoint_ns) VALUES ($1, $2)
           ON CONFLICT (thread_id, checkpoint_ns) DO UPDATE SET head_id = h.head_id RETURNING head_id`,
          [threadId, ns],
        );
        const headId = head?.head_id ?? undefined;
        // After the lock, in a new statement (a new snapshot): what committed before it is seen.
        const probe = put.blobs.flatMap((b) => ('base' in b.row ? [[b.channel, versionText(b.version)], [b.channel, versionText(b.row.base)]] : [[b.channel, versionText(b.version)]]));
        const [state] = await run<{ parent: string | null; found: boolean; stored: string[] | null }>(
          client,
          `SELECT (SELECT parent_id FROM ${s}.langgraph_checkpoints WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3) AS parent,
                  EXISTS (SELECT 1 FROM ${s}.langgraph_checkpoints WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3) AS found,
                  (SELECT array_agg(c.channel || chr(1) || c.version) FROM ${s}.langgraph_channels c JOIN unnest($4::text[], $5::text[]) AS w(channel, version)
                     ON c.channel = w.channel AND c.version = w.version WHERE c.thread_id = $1 AND c.checkpoint_ns = $2) AS stored`,
          [threadId, ns, checkpointId, probe.map((p) => p[0]), probe.map((p) => p[1])],
        );
        const conflict = putConflict(put, { headId, existingParent: state!.found ? state!.parent : undefined });
        if (conflict !== undefined) {
          rollback();
          return { conflict, headId, exact: [], latest: false };
        }
        const exists = new Set(state!.stored ?? []);
        const has = (channel: string, version: Version) => exists.has(`${channel}\u0001${versionText(version)}`);
        const written: { channel: string; version: Version; row: BlobRow }[] = [];
        const exact = put.blobs.map((blob) => {
          // A version names one value: never rewrite one that later deltas may stand on.
          if (has(blob.channel, blob.version)) return false;
          if ('base' in blob.row && !has(blob.channel, blob.row.base)) {
            written.push({ channel: blob.channel, version: blob.version, row: blob.whole });
            return false;
          }
          written.push({ channel: blob.channel, version: blob.version, row: blob.row });
          return true;
        });
        const columns = written.map((w) => blobColumns(w.row));
        await run(
          client,
          `WITH checkpoint AS (
             INSERT INTO ${s}.langgraph_checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_id, type, checkpoint, metadata)
             VALUES ($1, $2, $3, $4, $5, $6, $7)
             ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET type = EXCLUDED.type, checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata
           ), blobs AS (
             INSERT INTO ${s}.langgraph_channels (thread_id, checkpoint_ns, channel, version, type, bytes, base, keep, depth, chain_bytes, root_length)
             SELECT $1, $2, u.* FROM unnest($8::text[], $9::text[], $10::text[], $11::bytea[], $12::text[], $13::int[], $14::int[], $15::bigint[], $16::bigint[]) AS u
             ON CONFLICT DO NOTHING
           )
           UPDATE ${s}.langgraph_heads SET head_id = $3 WHERE thread_id = $1 AND checkpoint_ns = $2 AND (head_id IS NULL OR head_id < $3)`,
          [
            threadId,
            ns,
            checkpointId,
            put.row.p,
            put.row.t,
            Buffer.from(put.row.c),
            Buffer.from(put.row.m),
            written.map((w) => w.channel),
            written.map((w) => versionText(w.version)),
            columns.map((c) => c.type),
            columns.map((c) => c.bytes),
            columns.map((c) => c.base),
            columns.map((c) => c.keep),
            columns.map((c) => c.depth),
            columns.map((c) => c.chainBytes),
            columns.map((c) => c.rootLength),
          ],
        );
        return { conflict: undefined, headId, exact, latest: headId === undefined || checkpointId > headId };
      }),
    );
  }

  putWrites(threadId: string, ns: string, checkpointId: string, writes: readonly WriteInput[]): Promise<void> {
    // One row per key, as LMDB's one-at-a-time puts leave it: a regular write's first, a special one's last.
    const byKey = new Map<string, WriteInput>();
    for (const w of writes) {
      const key = `${w.taskId}\u0000${w.idx}`;
      if (w.idx >= 0 && byKey.has(key)) continue;
      byKey.set(key, w);
    }
    const rows = [...byKey.values()];
    return this.inOrder(threadId, () =>
      this.db.tx(async (client) => {
        await run(
          client,
          `INSERT INTO ${this.db.s}.langgraph_writes AS w (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value, task_path)
           SELECT $1, $2, $3, u.* FROM unnest($4::text[], $5::int[], $6::text[], $7::text[], $8::bytea[], $9::text[]) AS u
           ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
           DO UPDATE SET channel = EXCLUDED.channel, type = EXCLUDED.type, value = EXCLUDED.value, task_path = EXCLUDED.task_path WHERE w.idx < 0`,
          [
            threadId,
            ns,
            checkpointId,
            rows.map((w) => w.taskId),
            rows.map((w) => w.idx),
            rows.map((w) => w.row.c),
            rows.map((w) => w.row.t),
            rows.map((w) => Buffer.from(w.row.v)),
            rows.map((w) => w.row.p),
          ],
        );
      }),
    );
  }

  deleteThread(threadId: string): Promise<void> {
    return this.inOrder(threadId, () =>
      this.db.tx(async (client) => {
        const { s } = this.db;
        // Puts of the thread in flight elsewhere finish first (or wait for this).
        await run(client, `SELECT 1 FROM ${s}.langgraph_heads WHERE thread_id = $1 ORDER BY checkpoint_ns FOR UPDATE`, [threadId]);
        await run(
          client,
          `WITH c AS (DELETE FROM ${s}.langgraph_checkpoints WHERE thread_id = $1),
                v AS (DELETE FROM ${s}.langgraph_channels WHERE thread_id = $1),
                w AS (DELETE FROM ${s}.langgraph_writes WHERE thread_id = $1)
           DELETE FROM ${s}.langgraph_heads WHERE thread_id = $1`,
          [threadId],
        );
      }),
    );
  }

  release(): Promise<void> {
    return this.db.release();
  }

  /** Runs `write` after the thread's previous write settled (see the header). */
  private inOrder<T>(threadId: string, write: () => Promise<T>): Promise<T> {
    try {
      this.db.checkOpen();
    } catch (error) {
      return Promise.reject(error);
    }
    const previous = this.tails.get(threadId);
    const next = previous === undefined ? write() : previous.then(write, write);
    const tail = next.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(threadId, tail);
    void tail.then(() => {
      if (this.tails.get(threadId) === tail) this.tails.delete(threadId);
    });
    return next;
  }
}

interface CheckpointColumns {
  parent_id: string | null;
  type: string;
  checkpoint: Buffer;
  metadata: Buffer;
}

interface ListedColumns extends CheckpointColumns {
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string;
}

interface BlobColumns {
  type: string | null;
  bytes: Buffer | null;
  base: string | null;
  keep: number | null;
  depth: number | null;
  chain_bytes: string | number | null;
  root_length: string | number | null;
}

function checkpointRow(row: CheckpointColumns): CheckpointRow {
  return { p: row.parent_id, t: row.type, c: row.checkpoint, m: row.metadata };
}

/** A version as its key text: JSON, so the string '3' and the number 3 stay apart. */
function versionText(version: Version): string {
  return JSON.stringify(version);
}

function blobRow(row: BlobColumns): BlobRow {
  if (row.type === null) return { e: 1 };
  if (row.base === null) return { t: row.type, b: row.bytes! };
  return {
    t: row.type,
    base: JSON.parse(row.base) as Version,
    keep: row.keep!,
    tail: row.bytes!,
    d: row.depth!,
    cb: Number(row.chain_bytes),
    rl: Number(row.root_length),
  };
}

function blobColumns(row: BlobRow): { type: string | null; bytes: Buffer | null; base: string | null; keep: number | null; depth: number | null; chainBytes: number | null; rootLength: number | null } {
  if ('e' in row) return { type: null, bytes: null, base: null, keep: null, depth: null, chainBytes: null, rootLength: null };
  if ('b' in row) return { type: row.t, bytes: Buffer.from(row.b), base: null, keep: null, depth: null, chainBytes: null, rootLength: null };
  return { type: row.t, bytes: Buffer.from(row.tail), base: versionText(row.base), keep: row.keep, depth: row.d, chainBytes: row.cb, rootLength: row.rl };
}
