import { join } from 'node:path';
import type { Database, RootDatabase } from 'lmdb';
import { JOURNAL_FILE, openJournal, preallocateJournal, readJournal } from './journal.ts';

/**
 * Write-ahead appends for one LMDB environment (issue 22: one conversation's durable appends at
 * SQLite WAL's one flush, not LMDB's two).
 *
 * - `submit(puts, to)` writes the puts to the journal (journal.ts) and tells `to.durable` after
 *   its one flush: the acknowledgement. The puts reach LMDB later, in submit order, in one batch
 *   per `delay` ms (or sooner, when a batch grows large), so LMDB's two flushes are shared by
 *   every append of the batch; `to.applied` is told once LMDB has flushed them. Until then the
 *   caller keeps them readable itself (lmdb-table.ts's pending rows). Callbacks, not promises:
 *   this is the path of every append, and each promise layer cost time per append here.
 * - The applied journal seq is put in LMDB (`journal` database, key `applied`) with each batch,
 *   so after a process kill, an OS crash or a power loss (LMDB falls back to its last flushed
 *   commit) the records after it are put again at open, before anyone reads: `openWriteAhead`.
 *   A put is idempotent, and every other write that touches the same keys (clear, fork,
 *   erasure, retention) first `settle`s, so a record put again is never older than them.
 * - `submit` returns false (and `open` is false) while a batch is being committed straight
 *   to LMDB (or a round of them was `CROWD`ed) or `BUSY` records wait for the journal's next write (LMDB's group commit is as cheap
 *   then), when a batch is
 *   too large for the journal, when the journal failed (it is then off until the next open), or
 *   while LMDB is failing to take a batch (it is tried again then): the caller commits directly. Acknowledged puts are never dropped: they stay journaled and pending until LMDB
 *   takes them.
 * - Exclusive: one process per data directory (data-dir-lock.ts) and one environment per
 *   process (lmdb-environment.ts), so this is the environment's only journal.
 */
/** A put into a database of the environment whose values are JSON: the value as JSON text. */
export type Put = readonly [db: string, key: ReadonlyArray<string | number>, json: string];

/** What a journaled batch tells its submitter, each once. */
export interface Submitted {
  /** The batch is in the journal (the acknowledgement), or, with the journal's error, never will be. */
  durable(error?: unknown): void;
  /** Its puts need no keeping readable any more: LMDB has them flushed, a clear voided them, or `durable` failed. */
  applied(): void;
}

export interface WriteAhead {
  /** Whether `submit` would journal a batch now (checked before the batch is built). */
  readonly open: boolean;
  /** A batch is being committed straight to LMDB (see `BUSY`): `directSettled` follows once,
   * when it has settled (flushed or failed). Calls, not a promise to watch: every such append pays it. */
  directStarted(): void;
  directSettled(): void;
  /** Journals the batch (true) or takes nothing (false: the caller commits it straight to LMDB). */
  submit(puts: readonly Put[], to: Submitted): boolean;
  /** Every put submitted so far in LMDB and flushed; rejects with LMDB's error if it failed. */
  settle(): Promise<void>;
  /**
   * For a clear while LMDB refuses batches: the pending puts `withheld` picks are taken out of
   * line and `commit` (a write transaction that calls `mark` inside) runs; if it commits they
   * are void (never put, at open either), if not they are back in line.
   */
  discard(withheld: (puts: readonly Put[]) => boolean, commit: (mark: () => void) => PromiseLike<unknown>): Promise<void>;
  /** Settles, then zeroes the journal (after an erasure). */
  scrub(): Promise<void>;
  close(): Promise<void>;
}

export const JOURNAL_DB = 'journal';
const APPLIED = 'applied';
/** `[VOID, seq]`: a record whose puts a clear withheld (`discard`); removed once `applied` passes it. */
const VOID = 'void';
/** How soon a batch LMDB refused is tried again (a write, a clear or a settle also tries it). */
const RETRY_MS = 1000;
/**
 * The journal is for a batch that would otherwise commit alone: a commit that many appends share
 * costs LMDB's two flushes per many, and the journal would only add a second copy of the bytes,
 * CPU per append and its writes on the main thread (`bench/append-cpu.ts`). So a batch goes straight to LMDB
 * when `BUSY` records already wait for the journal's next write, and, from then on, while
 * another batch is being committed straight to LMDB (`directStarted`): a hundred conversations
 * appending at once still go through the journal (its lower latency is their throughput), a
 * thousand mostly straight (CPU-bound, they keep LMDB's group commit). 128 was the best of
 * 16, 128, 256 and always (docs/performance-history.md).
 */
const BUSY = 128;
/**
 * Direct commits in flight at once from which the journal stays closed (every batch straight to
 * LMDB) until a round of them (from none to none again) stays under it. Without it, each round
 * at 1,000 conversations sent its first `BUSY` appends through the journal again, and their
 * flushes, written on the main thread, stalled the rest (`bench/append-cpu.ts`).
 */
const CROWD = 256;
/** Submits waiting beyond which a batch goes to LMDB before its delay is up. */
const BATCH_SUBMITS = 1024;

export interface WriteAheadOptions {
  /** False (`noSync`): only put what an existing journal holds; no journal is opened. */
  journal: boolean;
  /** ms an acknowledged put waits before its batch goes to LMDB. */
  delay: number;
  /** Called after a batch is issued (lmdb-environment.ts's failed-commit guard). */
  afterIssue(): void;
  /** The typed error for a failed LMDB commit. */
  failure(error: unknown): Promise<unknown>;
}

/**
 * Puts the journal's records that LMDB lacks (synchronously: before the environment is used),
 * then opens the journal. Undefined when the journal is not wanted or cannot be made (the
 * caller commits without one); the records it held are put first all the same.
 */
export function openWriteAhead(root: RootDatabase, path: string, options: WriteAheadOptions): WriteAhead | undefined {
  const file = join(path, JOURNAL_FILE);
  const records = readJournal(file);
  // Before LMDB is touched: an environment with no room for a journal gets no journal database either.
  const made = options.journal && preallocateJournal(file);
  if (!made && records.length === 0) return undefined;
  const journalDb = root.openDB<number, string | [string, number]>(JOURNAL_DB, { encoding: 'json' });
  // Values go in as the JSON bytes they are (the databases are `encoding: 'json'` for readers).
  const dbs = new Map<string, Database<Buffer, never>>();
  const dbOf = (name: string) => {
    let db = dbs.get(name);
    if (db === undefined) dbs.set(name, (db = root.openDB<Buffer, never>(name, { encoding: 'binary' })));
    return db;
  };

  const applied = journalDb.get(APPLIED) ?? 0;
  const missing = records.filter((r) => r.seq > applied);
  if (missing.length > 0) {
    root.transactionSync(() => {
      for (const r of missing) {
        if (journalDb.get([VOID, r.seq]) !== undefined) continue;
        for (const [db, key, value] of JSON.parse(r.payload.toString('utf8')) as Array<[string, Put[1], unknown]>) {
          dbOf(db).putSync(key as never, Buffer.from(JSON.stringify(value)));
        }
      }
      journalDb.putSync(APPLIED, missing[missing.length - 1]!.seq);
      for (const key of journalDb.getKeys({ start: [VOID], end: [VOID, Infinity] })) journalDb.removeSync(key);
    });
  }
  if (!made) return undefined;
  const next = Math.max(applied, records[records.length - 1]?.seq ?? 0) + 1;

  interface Entry {
    seq: number;
    puts: readonly Put[];
    to: Submitted;
  }
  let ready: Entry[] = [];
  /** Submits the journal has not flushed yet, and who waits for there to be none. */
  let unflushed = 0;
  let flushedWaiters: Array<() => void> = [];
  const journaled = (): Promise<void> | undefined => (unflushed === 0 ? undefined : new Promise((resolve) => flushedWaiters.push(resolve)));
  /** The batch LMDB is taking (never rejects). One at a time: a failed batch goes back in line
   * first, and a later one must not record `applied` past it. */
  let applying: Promise<void> | undefined;
  let failure: unknown;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  /** Void markers in LMDB not yet passed by `applied`. */
  let voided: number[] = [];

  const apply = (): Promise<void> => {
    if (applying !== undefined) return applying.then(apply);
    if (timer !== undefined) {
      clearTimeout(timer);
      timer = undefined;
    }
    if (ready.length === 0) return Promise.resolve();
    const batch = ready;
    ready = [];
    // lmdb-js gives the puts of one commit one promise, but a long loop of puts can span two
    // commits: each promise gets a handler (the outcome is taken from the last one), or a
    // failed commit's would be an unhandled rejection.
    let last: PromiseLike<unknown> = Promise.resolve();
    const issued = (write: PromiseLike<unknown>) => {
      if (write !== last) write.then(ignore, ignore);
      last = write;
    };
    for (const entry of batch) for (const [db, key, json] of entry.puts) issued(dbOf(db).put(key as never, Buffer.from(json)));
    const upTo = batch[batch.length - 1]!.seq;
    issued(journalDb.put(APPLIED, upTo));
    for (const seq of voided) if (seq < upTo) issued(journalDb.remove([VOID, seq]));
    voided = voided.filter((seq) => seq > upTo);
    options.afterIssue();
    const done = Promise.resolve(last)
      .then(() => root.flushed)
      .then(
        () => {
          failure = undefined;
          journal.release(upTo);
          for (const entry of batch) entry.to.applied();
        },
        async (error: unknown) => {
          // Kept, in order, for the next try: they are acknowledged.
          failure = await options.failure(error);
          ready = [...batch, ...ready];
          // Not after `close`: the environment is closing (what is left stays in the journal).
          if (!closed) timer ??= setTimeout(apply, RETRY_MS).unref();
        },
      );
    applying = done.then(() => {
      applying = undefined;
    });
    return applying;
  };

  const settle = async (): Promise<void> => {
    await journaled();
    await apply();
    if (failure !== undefined) throw failure;
  };

  const journal = openJournal(file, next, async () => {
    await apply();
    if (failure !== undefined) throw failure;
  });

  /** Direct commits in flight, the most at once since none were, and whether that passed `CROWD`. */
  let direct = 0;
  let peak = 0;
  let crowded = false;
  const directSettled = () => {
    if (--direct > 0) return;
    crowded = peak >= CROWD;
    peak = 0;
  };
  const open = () => {
    if (failure !== undefined && !closed) void apply();
    return !closed && journal.broken === undefined && failure === undefined && direct === 0 && !crowded && journal.waiting < BUSY;
  };

  return {
    get open() {
      return open();
    },
    directStarted: () => {
      if (++direct > peak) peak = direct;
    },
    directSettled,
    submit: (puts, to) => {
      if (!open()) return false;
      // The values' JSON as it is, inside the record's JSON.
      let text = '[';
      for (let i = 0; i < puts.length; i++) {
        const [db, key, json] = puts[i]!;
        text += `${i === 0 ? '' : ','}[${JSON.stringify(db)},${JSON.stringify(key)},${json}]`;
      }
      const entry: Entry = { seq: 0, puts, to };
      const seq = journal.append(`${text}]`, (error) => {
        if (--unflushed === 0 && flushedWaiters.length > 0) {
          const waiters = flushedWaiters;
          flushedWaiters = [];
          for (const wake of waiters) wake();
        }
        if (error !== undefined) {
          to.applied();
          to.durable(error);
          return;
        }
        ready.push(entry);
        if (ready.length >= BATCH_SUBMITS) void apply();
        else timer ??= setTimeout(apply, options.delay).unref();
        to.durable();
      });
      if (seq === undefined) return false;
      entry.seq = seq;
      unflushed++;
      return true;
    },
    settle,
    discard: async (withheld, commit) => {
      await journaled();
      await applying; // a batch that fails comes back in line before the pick
      const taken = ready.filter((e) => withheld(e.puts));
      if (taken.length === 0) {
        await commit(() => undefined);
        return;
      }
      ready = ready.filter((e) => !withheld(e.puts));
      try {
        await commit(() => {
          for (const e of taken) journalDb.put([VOID, e.seq], 1);
        });
      } catch (error) {
        ready = [...taken, ...ready].sort((a, b) => a.seq - b.seq);
        throw error;
      }
      voided.push(...taken.map((e) => e.seq));
      for (const e of taken) e.to.applied();
      if (ready.length === 0) failure = undefined;
    },
    scrub: async () => {
      // Zeroed only with every record released (in LMDB and flushed): none is lost.
      do await settle();
      while (!journal.scrub());
    },
    close: async () => {
      if (closed) return;
      closed = true;
      await settle().catch(() => undefined);
      journal.close();
    },
  };
}

const ignore = () => undefined;
