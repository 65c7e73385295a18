import { dirname, join, resolve } from 'node:path';
import { existsSync, statfsSync } from 'node:fs';
import { open, type RootDatabase } from 'lmdb';
import { InvalidInputError } from '../../errors.ts';
import { StorageError } from '../contract/memory-errors.ts';
import { lockDataDir, OWNER_FILE, type DataDirLock } from './data-dir-lock.ts';
import { openWriteAhead, type WriteAhead } from './write-ahead.ts';
import { diskRoom, type DiskRoom } from './disk-room.ts';

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
 * `journalDelay`'s default. One conversation's appends, side by side with SQLite WAL FULL
 * (an A/B of four stores with 20, 50, 100 and 200 in one process, two runs): 1.00-1.02x,
 * 1.14x, 1.09-1.13x, 0.93-0.94x. LMDB's batch commit shares the device with the journal's
 * writes: too often, its two flushes delay them; too large a batch, its pages do.
 */
export const JOURNAL_DELAY_MS = 50;
/** The longest delay a Node timer takes. */
const MAX_TIMER_MS = 2 ** 31 - 1;

interface Held {
  root: RootDatabase;
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
    assertRoomToOpen(key, `${OWNER_FILE}-lock`);
    // Locked before the data environment opens: a refused process never touches the data.
    const lock = lockDataDir(key);
    let root: RootDatabase;
    try {
      root = open({
        path: key,
        // A directory always: lmdb-js would take a path with a dot in its name for a file.
        noSubdir: false,
        maxDbs: options.maxDbs ?? 32,
        ...(options.mapSize !== undefined ? { mapSize: options.mapSize } : {}),
        ...(options.commitDelay !== undefined ? { commitDelay: options.commitDelay } : {}),
        ...(options.noSync !== undefined ? { noSync: options.noSync } : {}),
      });
    } catch (error) {
      void lock.release();
      throw error;
    }
    const made: Held = { root, ahead: undefined, room: diskRoom(key, root), lock, holders: 0, failureGuardQueued: false };
    try {
      // Puts what the journal holds and LMDB lacks before anyone reads (write-ahead.ts), with
      // noSync too (a journal left by an earlier run); a journal only without noSync.
      made.ahead = openWriteAhead(root, key, {
        journal: options.noSync !== true,
        delay,
        afterIssue: () => guardFailedCommits(made),
        failure: (error) => commitFailure(error, key),
      });
    } catch (error) {
      void root.close();
      void lock.release();
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
    root: entry.root,
    ahead: entry.ahead,
    room: entry.room,
    guardFailedCommits: () => guardFailedCommits(entry),
    release: async () => {
      if (released) return;
      released = true;
      if (--entry.holders > 0) return;
      entry.closing = (async () => {
        await entry.ahead?.close();
        // lmdb-js's `committed` and `flushed` are thenables, not promises: always pass both
        // callbacks (`committed.then(undefined, ...)` calls `undefined`, a TypeError).
        await entry.root.flushed.then(() => undefined, () => undefined);
        await new Promise((r) => setTimeout(r, 0));
        await entry.root.close();
        await entry.lock.release();
      })();
      try {
        await entry.closing;
      } finally {
        if (environments.get(key) === entry) environments.delete(key);
      }
    },
  };
}

/**
 * The room check of the environment at `path` (disk-room.ts): the open environment's, or, for
 * `root` opened outside Mnemo, one of its own (kept as long as `root` is).
 */
export function roomFor(path: string, root: RootDatabase): DiskRoom {
  const key = resolve(path);
  const held = environments.get(key)?.room;
  if (held !== undefined) return held;
  let room = outsideRooms.get(root);
  if (room === undefined) outsideRooms.set(root, (room = diskRoom(key, root)));
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
