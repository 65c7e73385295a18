import { readFileSync, statfsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Database, RootDatabase } from 'lmdb';
import { StorageError } from '../contract/memory-errors.ts';
import { freePagesBytes, mainRecords } from './free-pages.ts';

/**
 * The room an LMDB environment may still fill, checked before Mnemo issues a write, so that
 * LMDB never meets a full disk (or a file size limit) in the middle of a commit.
 *
 * Why: when a page write fails, lmdb-js 3.5.6 (the newest) formats the error into `malloc(100)`
 * with `sprintf`, printing stack garbage that can outgrow the 100 bytes; the heap is corrupted
 * and the process aborts later (`free(): invalid pointer`). So Mnemo answers `storage_full`
 * itself, before LMDB is asked to write where there is no room.
 *
 * - `take(bytes)` before issuing a write that adds about `bytes` to the environment (an
 *   estimate at or above what LMDB adds: `estimate`); `release(bytes)` once it committed or
 *   failed. `take` throws `StorageError('storage_full')`, and nothing is taken, when the bytes
 *   in flight (every write taken and not yet released, this one included) would pass the limit
 *   below; its details: `room` (disk and free pages, less what is in flight), `free_pages`
 *   (0 when not counted) and `headroom`.
 * - Where a write can go: into LMDB's free pages inside `data.mdb` (free-pages.ts: pages a
 *   removal freed; `free`), or past the file's end, which the file system must back (`disk`:
 *   its free space, or less under a file size limit, `ulimit -f`: the limit less `data.mdb`'s
 *   size). The rest of the memory map is no room of its own: lmdb-js grows the file by writing
 *   and the map by itself, so the map's unused tail is room exactly as far as `disk` reaches.
 * - The limit is `min(disk + free - HEADROOM_BYTES, disk - FLOOR_BYTES)`. The first term: the
 *   writes fill the free pages first and leave `HEADROOM_BYTES` of the disk. The second: even if
 *   LMDB grew the file for all of them (a page freed by commit N is reused from commit N+2 on,
 *   and not while an older reader's snapshot holds it; scattered pages do not take a long
 *   value), the disk keeps `FLOOR_BYTES`. So free pages carry at most `HEADROOM_BYTES -
 *   FLOOR_BYTES` in flight at a time; once committed the writes give it back, and each one that
 *   did grow the file makes the disk, and so the limit, smaller.
 * - Looked at about once a second on a roomy disk (a write costs a clock read and two
 *   additions); within `NEAR_BYTES` of the limit, at every write. The free pages are counted
 *   only when the disk alone would refuse the write.
 * - Removals (clear, erasure, retention) are not gated: they add no data, and LMDB's few
 *   copied pages for them fit in the floor. The pages they free are room for later writes.
 *   Another process filling the disk faster than the looks (tens of MiB in a second) can still
 *   beat the check.
 */
export interface DiskRoom {
  take(bytes: number): void;
  release(bytes: number): void;
}

/** The least room writes leave on the disk when LMDB's free pages do not take them. */
export const HEADROOM_BYTES = 1024 * 1024;
/**
 * The least room left on the disk in any case: what LMDB may still grow the file by for
 * removals (copied pages, the free list's records) and for writes the free pages were to take.
 */
export const FLOOR_BYTES = 256 * 1024;
/**
 * Within this much of the limit every write looks; above it, the bytes granted between two
 * looks stop short of it (half the way each time), and a look is never older than
 * `LOOK_EVERY_MS` (someone else may be filling the disk).
 */
const NEAR_BYTES = 64 * 1024 * 1024;
const LOOK_EVERY_MS = 1000;
/** What a commit adds besides its values: copied branch and leaf pages, the free list. */
const COMMIT_PAGES_BYTES = 8 * 1024;

/**
 * Bytes a batch of `chars` UTF-16 units of JSON may add: up to 3 bytes each in UTF-8, and
 * leaf pages filled by about half, as in-order inserts leave them (so ~3x for ASCII).
 */
export function estimate(chars: number): number {
  return 3 * chars + COMMIT_PAGES_BYTES;
}

/**
 * The room check of the environment at `path`; `root` (the open environment) to count its free
 * pages too, else the disk alone.
 */
export function diskRoom(path: string, rootOf?: () => RootDatabase | undefined): DiskRoom {
  /** Read on the first look at the disk (a write's), not at open. */
  let fileLimit: { bytes: number | undefined } | undefined;
  /** The main db's handle, for the environment open now (a compaction reopens it). */
  let main: { root: RootDatabase; db: Database<Buffer, Buffer> } | undefined;
  let inFlight = 0;
  /** Bytes `take` may grant before it looks again, until `freshUntil`. */
  let allowance = 0;
  let freshUntil = 0;

  /** Room past the file's end: the file system's, or the file size limit's. */
  const disk = (): number => {
    try {
      const s = statfsSync(path);
      const free = s.bavail * s.bsize;
      const limit = (fileLimit ??= { bytes: fileSizeLimit() }).bytes;
      return limit === undefined ? free : Math.min(free, limit - dataFileSize(path));
    } catch {
      return Infinity; // Unknown: let LMDB report what it meets.
    }
  };
  const free = (): number => {
    const root = rootOf?.();
    if (root === undefined) return 0;
    if (main?.root !== root) main = { root, db: mainRecords(root) };
    return freePagesBytes(root, main.db, path);
  };

  return {
    take(bytes) {
      if (bytes <= allowance && Date.now() < freshUntil) {
        allowance -= bytes;
        inFlight += bytes;
        return;
      }
      const onDisk = disk();
      let pages = 0;
      let limit = onDisk - HEADROOM_BYTES;
      if (inFlight + bytes > limit) {
        pages = free();
        limit = Math.min(onDisk + pages - HEADROOM_BYTES, onDisk - FLOOR_BYTES);
      }
      const spare = limit - inFlight;
      freshUntil = Date.now() + LOOK_EVERY_MS;
      if (bytes > spare) {
        allowance = 0;
        const room = Math.max(0, onDisk + pages - inFlight);
        throw new StorageError('storage_full', `storage full: the batch was not stored (${room} bytes of room, ${HEADROOM_BYTES} kept free)`, {
          room,
          free_pages: pages,
          headroom: HEADROOM_BYTES,
        });
      }
      allowance = Math.max(0, (spare - bytes - NEAR_BYTES) / 2);
      inFlight += bytes;
    },
    release(bytes) {
      inFlight -= bytes;
    },
  };
}

/** `data.mdb`'s size in bytes (0 before LMDB made it). */
function dataFileSize(path: string): number {
  try {
    return statSync(join(path, 'data.mdb')).size;
  } catch {
    return 0;
  }
}

/** The process's file size limit in bytes (`ulimit -f`), or undefined: none, or not Linux. */
function fileSizeLimit(): number | undefined {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max file size'));
    const soft = line?.slice('Max file size'.length).trim().split(/\s+/)[0];
    return soft === undefined || soft === 'unlimited' ? undefined : Number(soft);
  } catch {
    return undefined;
  }
}
