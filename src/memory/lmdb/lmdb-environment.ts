import { dirname, join, resolve } from 'node:path';
import { existsSync, mkdirSync, statfsSync } from 'node:fs';
import { open, type RootDatabase } from 'lmdb';
import { InvalidInputError } from '../../errors.ts';
import { StorageError } from '../contract/memory-errors.ts';
import { lockDataDir, type DataDirLock } from './data-dir-lock.ts';
import { openWriteAhead, type WriteAhead } from './write-ahead.ts';
import { diskRoom, type DiskRoom } from './disk-room.ts';
import { dataFileBytes, discardUnfinishedCompaction, swapInCopy, writeCompactedCopy, type CopyMethod } from './compacting-copy.ts';

/**
 * One LMDB environment per data directory per process, shared by everyone who asks for it
 * (LMDB forbids opening the same environment twice in a process). `acquireEnvironment` opens
 * it on first use and counts holders; the last `release` flushes, yields an event turn and
 * closes it (closing in the same turn as sync transactions can hang lmdb 3.5.6).
 *
 * The options of the first holder win; later holders get the environment as it is.
 *
 * Opening also locks the directory for this process (`data-dir-lock.ts`): a second process
 * gets `data_dir_locked`, naming the holder. Then it puts into LMDB what the write-ahead
 * journal holds and LMDB lacks, and opens the journal (`write-ahead.ts`; the lease's `ahead`);
 * the last release settles the journal before it closes LMDB.
 *
 * Every writer of the environment takes room for its write first (the lease's `room`,
 * disk-room.ts): LMDB must never meet a full disk in a commit (lmdb-js 3.5.6 corrupts its heap
 * then), so a write that would leave too little is refused with `storage_full` before it is issued.
 *
 * `compactEnvironment` replaces the data file with a compacted copy (LMDB's page copy, or a
 * rebuild that keeps no byte of anything erased) and reopens the environment behind the same
 * lease (compacting-copy.ts), the directory locked throughout; the
 * lease's `root` and `ahead` are then new objects, and every handle opened from the old ones is
 * closed. `compactDataDir` does it for a directory no process has open (`mnemo compact`).
 */
export interface LmdbEnvironmentOptions {
  /**
   * Initial map (virtual address space) size in bytes. Default: lmdb-js's (128 KiB, grown on
   * demand). lmdb-js grows the map by itself when a transaction needs more pages, so this is a
   * starting size, not a limit; a larger value avoids a few remaps early on and costs only
   * address space.
   */
  mapSize?: number;
  /**
   * Delay in ms before an event turn's writes are committed, to group more writes per commit.
   * Default 0 (commit at the end of the turn). Raises every write's latency by about the delay
   * (timer resolution makes any value ≥ 1 about 10 ms).
   */
  commitDelay?: number;
  /**
   * Maximum named databases in the environment. Default 32 (lmdb-js: 12); Mnemo uses one
   * (`messages`), the rest are for layers that keep their data in the same environment. Each
   * costs a little memory per transaction.
   */
  maxDbs?: number;
  /**
   * Skip the fsync after each commit. Default false. Much faster writes, but an OS crash or power
   * loss can lose or corrupt committed data (a process kill cannot). `add` still waits for the
   * commit, not for a flush.
   */
  noSync?: boolean;
  /**
   * How long (ms) an acknowledged append waits in the write-ahead journal before its batch goes
   * to LMDB (write-ahead.ts). Default 50. Longer: fewer LMDB commits under a steady stream of
   * appends; reads see the appends either way. Ignored with `noSync`.
   */
  journalDelay?: number;
}

/**
 * `journalDelay`'s default, the best of 20, 50, 100 and 200 for one conversation's appends
 * (docs/performance-history.md). LMDB's batch commit shares the device with the journal's
 * writes: too often, its two flushes delay them; too large a batch, its pages do.
 */
export const JOURNAL_DELAY_MS = 50;
/** The longest delay a Node timer takes. */
const MAX_TIMER_MS = 2 ** 31 - 1;

interface Held {
  /** Replaced by a compaction (so are `ahead` and every handle opened from them). */
  root: RootDatabase;
  /** What the environment was opened with (a compaction reopens it the same way). */
  options: LmdbEnvironmentOptions;
  /** A compaction in progress. */
  compacting: boolean;
  /** The write-ahead journal of message appends; none with `noSync` or without room for it. */
  ahead: WriteAhead | undefined;
  room: DiskRoom;
  lock: DataDirLock;
  holders: number;
  closing?: Promise<void>;
  failureGuardQueued: boolean;
}

const environments = new Map<string, Held>();

export interface EnvironmentLease {
  readonly path: string;
  /** The environment now: a compaction (`compactEnvironment`) replaces it. */
  readonly root: RootDatabase;
  /** The environment's write-ahead journal (write-ahead.ts), when it has one. */
  readonly ahead: WriteAhead | undefined;
  /** What every write takes first (disk-room.ts). */
  readonly room: DiskRoom;
  /** Call after issuing writes in an event turn; see `guardFailedCommits`. */
  guardFailedCommits(): void;
  release(): Promise<void>;
}

export function acquireEnvironment(path: string, options: LmdbEnvironmentOptions = {}): EnvironmentLease {
  const key = resolve(path);
  const delay = options.journalDelay ?? JOURNAL_DELAY_MS;
  if (typeof delay !== 'number' || !Number.isFinite(delay) || delay < 0 || delay > MAX_TIMER_MS) {
    throw new InvalidInputError('invalid_option', `lmdb.journalDelay must be a number of ms from 0 to ${MAX_TIMER_MS}, got ${String(delay)}`, { option: 'lmdb.journalDelay' });
  }
  let held = environments.get(key);
  if (held === undefined || held.closing !== undefined) {
    assertRoomToOpen(key, 'lock.mdb');
    const made: Held = { root: openRoot(key, options), options, compacting: false, ahead: undefined, room: diskRoom(key, () => made.root), lock: undefined as never, holders: 0, failureGuardQueued: false };
    // Locked before anything is written: a refused process only opened the environment.
    try {
      made.lock = lockDataDir(key, () => made.root);
    } catch (error) {
      closeLater(made.root);
      throw error;
    }
    try {
      // A compaction killed before its swap left its copy: the data file is the old one, whole.
      discardUnfinishedCompaction(key);
      made.ahead = journalOf(made, made.root, key, delay);
    } catch (error) {
      void made.lock.release().then(() => closeLater(made.root));
      throw error;
    }
    held = made;
    environments.set(key, held);
  }
  const entry = held;
  entry.holders++;
  let released = false;
  return {
    path: key,
    get root() {
      return entry.root;
    },
    get ahead() {
      return entry.ahead;
    },
    room: entry.room,
    guardFailedCommits: () => guardFailedCommits(entry),
    release: async () => {
      if (released) return;
      released = true;
      if (--entry.holders > 0) return;
      if (entry.closing !== undefined) return entry.closing; // a failed compaction closed it
      entry.closing = (async () => {
        await entry.ahead?.close();
        // lmdb-js's `committed` and `flushed` are thenables, not promises: always pass both
        // callbacks (`committed.then(undefined, ...)` calls `undefined`, a TypeError).
        await entry.root.flushed.then(() => undefined, () => undefined);
        // In a transaction of the environment, so before it closes.
        await entry.lock.release();
        await new Promise((r) => setTimeout(r, 0));
        await entry.root.close();
      })();
      try {
        await entry.closing;
      } finally {
        if (environments.get(key) === entry) environments.delete(key);
      }
    },
  };
}

/** Opens the LMDB environment at `path` (a directory). */
function openRoot(path: string, options: LmdbEnvironmentOptions): RootDatabase {
  mkdirSync(path, { recursive: true });
  return open({
    path,
    // A directory always: lmdb-js would take a path with a dot in its name for a file.
    noSubdir: false,
    maxDbs: options.maxDbs ?? 32,
    ...(options.mapSize !== undefined ? { mapSize: options.mapSize } : {}),
    ...(options.commitDelay !== undefined ? { commitDelay: options.commitDelay } : {}),
    ...(options.noSync !== undefined ? { noSync: options.noSync } : {}),
  });
}

/** Closing in the turn of a sync transaction can hang lmdb 3.5.6: close a turn later. */
function closeLater(root: RootDatabase): void {
  setTimeout(() => void root.close().catch(() => undefined), 0);
}

/**
 * Puts what the journal holds and LMDB lacks before anyone reads (write-ahead.ts), with noSync
 * too (a journal left by an earlier run), and opens the journal (not with noSync).
 */
function journalOf(held: Held, root: RootDatabase, path: string, delay: number): Held['ahead'] {
  return openWriteAhead(root, path, {
    journal: held.options.noSync !== true,
    delay,
    afterIssue: () => guardFailedCommits(held),
    failure: (error) => commitFailure(error, path),
  });
}

/**
 * The named steps of a compaction, in order (a test kills a process at each:
 * test/runtime/compaction-kill.test.ts). `rebuilding` only with `copy: 'rebuild'`, told after
 * each transaction of the rebuild (the copy is partly written).
 */
export const COMPACTION_STEPS = ['settled', 'rebuilding', 'copied', 'closed', 'swapped', 'reopened'] as const;
export type CompactionStep = (typeof COMPACTION_STEPS)[number];

/** What `compactDataDir` takes. */
export interface CompactionOptions {
  /**
   * How the copy is made (compacting-copy.ts). `'pages'` (default): LMDB's compacting copy, the
   * live pages as they are: fast, but an erased key can stay as a branch page's separator.
   * `'rebuild'`: a new environment written entry by entry: no byte of anything erased, keys
   * included; slower, by the number of entries.
   */
  copy?: CopyMethod;
  /** Told each step as it is reached (for tests). */
  step?: (step: CompactionStep) => void;
}

/** What a compaction did: `data.mdb`'s size before and after, and how long it took. */
export interface CompactionReport {
  /** `data.mdb`'s size before and after, in bytes. */
  bytesBefore: number;
  /** `data.mdb`'s size after, in bytes. */
  bytesAfter: number;
  /** How long the environment was settled, copied, swapped and reopened, in ms. */
  ms: number;
}

/**
 * Compacts the environment `lease` holds, in place: every write is settled (the write-ahead
 * journal into LMDB, LMDB flushed), the compacted copy is written beside it, the environment
 * closes, the copy replaces `data.mdb` and the environment opens again behind the same lease
 * (`lease.root` and `lease.ahead` are new; every handle opened from the old ones is closed).
 * The caller sees to it that nothing writes meanwhile (runtime.compact() stops the tree's
 * children first): a write issued through an old handle after the close throws, or worse.
 *
 * Kill-safe at every step (compacting-copy.ts): the directory holds the old data file or the
 * new one, and opens with every acknowledged write either way.
 *
 * Refused, nothing done: `environment_shared` when another lease of this process holds the
 * environment too (a standalone store or LangGraph saver over the same directory: its handles
 * would be closed under it); `storage_full` when the file system lacks room for the copy. A copy
 * that fails leaves the environment as it was (open, its journal reopened).
 */
export async function compactEnvironment(lease: EnvironmentLease, options: CompactionOptions = {}): Promise<CompactionReport> {
  const step = options.step ?? (() => {});
  const key = lease.path;
  const entry = environments.get(key);
  if (entry === undefined || entry.closing !== undefined || entry.root !== lease.root) {
    throw new StorageError('store_closed', `the LMDB environment of ${key} is closed`);
  }
  if (entry.holders > 1 || entry.compacting) {
    throw new StorageError(
      'environment_shared',
      entry.compacting
        ? `a compaction of ${key} is already running`
        : `the LMDB environment of ${key} has ${entry.holders - 1} other holder(s) in this process (a standalone store, a LangGraph saver or store): close them, then compact`,
      { path: key, holders: entry.holders },
    );
  }
  entry.compacting = true;
  let closedOld = false;
  let reopened = false;
  const started = performance.now();
  const delay = entry.options.journalDelay ?? JOURNAL_DELAY_MS;
  try {
    const bytesBefore = dataFileBytes(key);
    // Every journaled append into LMDB (one that LMDB refuses now stays in the journal file,
    // which the swap keeps, and is put again at the reopen).
    await entry.ahead?.close();
    entry.ahead = undefined;
    await entry.root.flushed.then(() => undefined, () => undefined);
    step('settled');
    let bytesAfter: number;
    try {
      bytesAfter = await writeCompactedCopy(entry.root, key, options.copy ?? 'pages', () => step('rebuilding'));
    } catch (error) {
      entry.ahead = journalOf(entry, entry.root, key, delay);
      throw error;
    }
    step('copied');
    // Closing in the turn of sync transactions can hang lmdb 3.5.6: a turn first.
    await new Promise((r) => setTimeout(r, 0));
    closedOld = true;
    await entry.root.close();
    step('closed');
    swapInCopy(key);
    step('swapped');
    entry.root = openRoot(key, entry.options);
    try {
      entry.ahead = journalOf(entry, entry.root, key, delay);
    } catch (error) {
      closeLater(entry.root);
      throw error;
    }
    reopened = true;
    step('reopened');
    return { bytesBefore, bytesAfter, ms: performance.now() - started };
  } catch (error) {
    if (closedOld && !reopened) {
      // Closed and not reopened (the swap or the reopen failed): the environment is gone. The
      // lock goes with it; the lease's release has nothing left to close.
      entry.closing = entry.lock.release();
      if (environments.get(key) === entry) environments.delete(key);
    }
    throw error;
  } finally {
    entry.compacting = false;
  }
}

/** Whether the environment of `lease` is open (false after its release, or a compaction that could not reopen it). */
export function isEnvironmentOpen(lease: EnvironmentLease): boolean {
  const entry = environments.get(lease.path);
  return entry !== undefined && entry.closing === undefined && entry.root === lease.root;
}

/**
 * Compacts the data directory at `path`, which no process may have open (`mnemo compact`): it
 * is locked (`data_dir_locked`, naming the holder, if a server has it), opened, compacted
 * (`compactEnvironment`, with `compaction`) and closed.
 */
export async function compactDataDir(path: string, options: LmdbEnvironmentOptions = {}, compaction: CompactionOptions = {}): Promise<CompactionReport> {
  const lease = acquireEnvironment(path, options);
  try {
    return await compactEnvironment(lease, compaction);
  } finally {
    await lease.release();
  }
}

/**
 * The room check of the environment at `path` (disk-room.ts): the open environment's, or a new
 * one for an environment opened outside Mnemo (its writes in flight are then its own).
 */
export function roomFor(path: string, root: RootDatabase): DiskRoom {
  const key = resolve(path);
  const held = environments.get(key)?.room;
  if (held !== undefined) return held;
  let room = outsideRooms.get(root);
  if (room === undefined) outsideRooms.set(root, (room = diskRoom(key, () => root)));
  return room;
}

const outsideRooms = new WeakMap<RootDatabase, DiskRoom>();

/**
 * Runs `work` (synchronous) in one write transaction of `root` and resolves once it is
 * committed and flushed; a failed commit rejects with the typed `StorageError` and keeps
 * nothing of `work`. It first takes `bytes` of `room` (disk-room.ts; 0 for work that only
 * removes, never refused): `storage_full` then, nothing issued. `guard` is called once the
 * transaction is issued (see `guardFailedCommits`).
 */
export async function durableTransaction<T>(
  target: { root: RootDatabase; path: string; room: DiskRoom | undefined; guard: () => void },
  bytes: number,
  work: () => T,
): Promise<T> {
  const { root, path, room } = target;
  if (bytes > 0) room?.take(bytes);
  let done: Promise<T>;
  try {
    done = root.transaction(work);
  } catch (error) {
    if (bytes > 0) room?.release(bytes);
    throw error;
  }
  target.guard();
  try {
    const result = await done;
    await root.flushed;
    return result;
  } catch (error) {
    throw await commitFailure(error, path);
  } finally {
    if (bytes > 0) room?.release(bytes);
  }
}

/**
 * lmdb 3.5.6 rejects an internal promise (the batch-end commit promise, created in the
 * `setImmediate` that ends the turn's batch) when a commit fails, and nothing handles it: the
 * process would die of an unhandled rejection. Observed here with a full disk. Our own
 * `setImmediate`, queued after the first write of the turn, runs after lmdb's and attaches a
 * handler to that promise; the failure itself reaches the writers through their own promises.
 */
function guardFailedCommits(held: Held): void {
  if (held.failureGuardQueued) return;
  held.failureGuardQueued = true;
  setImmediate(() => {
    held.failureGuardQueued = false;
    // `committed` is a thenable that calls `onfulfilled` unchecked: `then(undefined, ...)`
    // threw a TypeError inside lmdb-js (an unhandled rejection that killed the process). Both
    // callbacks, attached now (synchronously, so the handler is on the batch's promise in time).
    held.root.committed.then(() => undefined, () => undefined);
  });
}

const MDB_MAP_FULL = -30792;
const ENOSPC = 28;
const EFBIG = 27;
const EDQUOT = 122;
const EIO = 5;
/** Below this much free space, an EIO from a page write is taken as "disk full". */
const LOW_SPACE_BYTES = 64 * 1024 * 1024;

/**
 * The typed error for a failed commit. lmdb-js rejects each write of a failed transaction with
 * "Commit failed" and puts the real error in a `commitError` promise; LMDB reports a short page
 * write (which is what a full disk, a quota or a file size limit cause) as EIO. So EIO counts as
 * `storage_full` when the data directory's file system is nearly full (< 64 MiB or < 1% free),
 * and as `storage_failed` otherwise.
 */
export async function commitFailure(error: unknown, path: string): Promise<StorageError> {
  if (error instanceof StorageError) return error;
  let cause = error;
  const commitError = (error as { commitError?: unknown } | null)?.commitError;
  if (commitError instanceof Promise) {
    cause = await commitError.then(
      () => error,
      (e: unknown) => e,
    );
  }
  const errno = (cause as { code?: unknown } | null)?.code;
  const message = cause instanceof Error ? cause.message : String(cause);
  if (typeof message === 'string' && /closed/i.test(message) && errno === undefined) {
    return new StorageError('store_closed', 'the LMDB environment is closed', {}, { cause });
  }
  const full =
    errno === MDB_MAP_FULL || errno === ENOSPC || errno === EFBIG || errno === EDQUOT || (errno === EIO && lowOnSpace(path));
  return full
    ? new StorageError('storage_full', `storage full: the batch was not stored (${message})`, { errno }, { cause })
    : new StorageError('storage_failed', `commit failed: the batch was not stored (${message})`, { errno }, { cause });
}

/** What opening a new environment writes: the lock file's reader table and the first pages. */
const OPEN_BYTES = 256 * 1024;

/**
 * LMDB maps its lock file and touches it through the map: on a file system with no room for it,
 * that touch is a SIGBUS, which kills the process. A new environment (no lock file yet) on a
 * file system without room for it is refused with `storage_full` instead.
 */
function assertRoomToOpen(path: string, lockFile: string): void {
  if (existsSync(join(path, lockFile))) return;
  let dir = path;
  while (!existsSync(dir) && dirname(dir) !== dir) dir = dirname(dir);
  let free: number;
  try {
    const s = statfsSync(dir);
    free = s.bavail * s.bsize;
  } catch {
    return; // let LMDB report it
  }
  if (free < OPEN_BYTES) {
    throw new StorageError('storage_full', `no room to open an LMDB environment in ${path}: ${free} bytes free`, { path, free });
  }
}

function lowOnSpace(path: string): boolean {
  try {
    const s = statfsSync(path);
    const free = s.bavail * s.bsize;
    return free < LOW_SPACE_BYTES || free < (s.blocks * s.bsize) / 100;
  } catch {
    return false;
  }
}
