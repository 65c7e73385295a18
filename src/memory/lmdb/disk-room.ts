import { readFileSync, statfsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { StorageError } from '../contract/memory-errors.ts';

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
 *   failed. `take` throws `StorageError('storage_full')`, and nothing is taken, when the room
 *   left after every write in flight and this one would be under `HEADROOM_BYTES`.
 * - The room is the file system's free space (`statfs`), or less under a file size limit
 *   (`ulimit -f`: the limit less `data.mdb`'s size). On a roomy disk it is looked at about
 *   once a second (a write costs a clock read and two additions); within `NEAR_BYTES` of the
 *   headroom, at every write.
 * - Removals (clear, erasure, retention) are not gated: they add no data, and LMDB's few
 *   copied pages for them fit in the headroom.
 * - Not counted: LMDB's own free pages. A clear frees pages inside `data.mdb` for later writes
 *   but does not shrink it, so below the headroom writes come back once room is freed on the
 *   file system. Another process filling the disk faster than the looks (tens of MiB in a
 *   second) can still beat the check.
 */
export interface DiskRoom {
  take(bytes: number): void;
  release(bytes: number): void;
}

/** The least room kept free under an environment. */
export const HEADROOM_BYTES = 1024 * 1024;
/**
 * Within this much of the headroom every write looks; above it, the bytes granted between two
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

export function diskRoom(path: string): DiskRoom {
  const fileLimit = fileSizeLimit();
  let inFlight = 0;
  /** Bytes `take` may grant before it looks again, until `freshUntil`. */
  let allowance = 0;
  let freshUntil = 0;

  const look = (): number => {
    let room = Infinity;
    try {
      const s = statfsSync(path);
      room = s.bavail * s.bsize;
      if (fileLimit !== undefined) room = Math.min(room, fileLimit - dataFileSize(path));
    } catch {
      // Unknown: let LMDB report what it meets.
    }
    return room;
  };

  return {
    take(bytes) {
      if (bytes <= allowance && Date.now() < freshUntil) {
        allowance -= bytes;
        inFlight += bytes;
        return;
      }
      const spare = look() - inFlight - HEADROOM_BYTES;
      freshUntil = Date.now() + LOOK_EVERY_MS;
      if (bytes > spare) {
        allowance = 0;
        throw new StorageError('storage_full', `storage full: the batch was not stored (${Math.max(0, spare + HEADROOM_BYTES)} bytes of room, ${HEADROOM_BYTES} kept free)`, {
          room: Math.max(0, spare + HEADROOM_BYTES),
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
