import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, statfsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { RootDatabase } from 'lmdb';
import { StorageError } from '../contract/memory-errors.ts';
import { HEADROOM_BYTES } from './disk-room.ts';

/**
 * The files of a compaction (lmdb-environment.ts's `compactEnvironment` runs them in order,
 * with every writer paused):
 *
 * 1. `writeCompactedCopy`: the copy, into `compacting/data.mdb` inside the data directory (the
 *    same file system, so the swap is a rename), then fsynced. One of two:
 *    - `'pages'`: LMDB's compacting copy (`mdb_env_copy2` with `MDB_CP_COMPACT`: the live pages
 *      as they are, renumbered; free pages, and the bytes of erased values in them, are not
 *      copied; an erased key kept as a branch page's separator is). In a thread of its own.
 *    - `'rebuild'`: a new environment written entry by entry (environment-rebuild.ts): no byte
 *      of anything erased, keys included. Slower (per entry, not per page) and on the main
 *      thread, in short transactions.
 * 2. `swapInCopy` (after the environment is closed): `rename` over `data.mdb`, which is atomic:
 *    at any instant the directory holds the old file or the new one, never neither nor a mix;
 *    then the directory is fsynced, and `lock.mdb` is removed, so the next open makes a new
 *    LMDB environment (lmdb-js shares an open environment by its lock file's inode: with the
 *    old lock file it could hand back the old, closed-over mapping).
 *
 * A kill before the rename leaves the old `data.mdb` (complete: it was never written to after
 * the writers paused) and a `compacting` directory that the next open removes
 * (`discardUnfinishedCompaction`); a kill after it leaves the new one, which holds everything
 * acknowledged (the write-ahead journal was settled into LMDB first, and its file is kept, so
 * what LMDB lacked is put again at open either way).
 */
export const COMPACTING_DIR = 'compacting';
const DATA_FILE = 'data.mdb';
const LOCK_FILE = 'lock.mdb';

/** Removes what a compaction killed before its swap left (its copy, whole or torn). */
export function discardUnfinishedCompaction(dir: string): void {
  const leftover = join(dir, COMPACTING_DIR);
  if (existsSync(leftover)) rmSync(leftover, { recursive: true, force: true });
}

/** The size of the environment's data file, 0 when there is none. */
export function dataFileBytes(dir: string): number {
  try {
    return statSync(join(dir, DATA_FILE)).size;
  } catch {
    return 0;
  }
}

/** How the copy is made (see above). */
export type CopyMethod = 'pages' | 'rebuild';

/**
 * Writes the compacted copy of `root` (its last committed state: flush first) beside it and
 * makes it durable; resolves with its size. `committed` is told after each transaction of a
 * rebuild. Refused with `storage_full` before anything is
 * written when the file system lacks room for a copy as large as `data.mdb` (the copy is at most
 * that) plus the headroom every write keeps (disk-room.ts); a copy that fails midway is removed.
 */
export async function writeCompactedCopy(root: RootDatabase, dir: string, method: CopyMethod, committed?: () => void): Promise<number> {
  discardUnfinishedCompaction(dir);
  const needed = dataFileBytes(dir) + HEADROOM_BYTES;
  const s = statfsSync(dir);
  const free = s.bavail * s.bsize;
  if (free < needed) {
    throw new StorageError('storage_full', `no room to compact ${dir}: the copy needs up to ${needed} bytes, ${free} are free`, { path: dir, free, needed });
  }
  const target = join(dir, COMPACTING_DIR);
  mkdirSync(target);
  try {
    if (method === 'pages') await root.backup(target, true);
    // Loaded when first asked for: a rare copy (an erasure's), not worth every import's time.
    else await (await import('./environment-rebuild.ts')).rebuildEnvironment(root, target, committed);
    fsyncPath(join(target, DATA_FILE));
    fsyncPath(target);
    return statSync(join(target, DATA_FILE)).size;
  } catch (error) {
    discardUnfinishedCompaction(dir);
    throw error instanceof StorageError ? error : new StorageError('storage_failed', `the compacting copy of ${dir} failed: ${(error as Error).message}`, { path: dir }, { cause: error });
  }
}

/** Puts the copy in place of `data.mdb` (the environment must be closed); see above. */
export function swapInCopy(dir: string): void {
  renameSync(join(dir, COMPACTING_DIR, DATA_FILE), join(dir, DATA_FILE));
  fsyncPath(dir);
  rmSync(join(dir, LOCK_FILE), { force: true });
  rmSync(join(dir, COMPACTING_DIR), { recursive: true, force: true });
}

function fsyncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
