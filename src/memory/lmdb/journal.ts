import { closeSync, constants, fdatasyncSync, fstatSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { crc32 } from 'node:zlib';

/**
 * A write-ahead journal: a checksummed log in one preallocated file, so that a record is durable
 * after one device flush (SQLite's WAL does the same; an LMDB commit needs two ordered flushes,
 * its pages and then its meta page, because its pages carry no checksum).
 *
 * - `append(payload)` numbers the record (1, 2, 3, ... across reopens: `next` at open) and
 *   resolves once it is on the device. The records appended together share one flush (group
 *   commit; `gather`): one `pwrite` through an `O_DSYNC` descriptor, on the main thread (it
 *   blocks the event loop for one device write, ~0.1-0.2 ms here), of blocks already written
 *   (the file is preallocated), so the flush commits no file-system metadata.
 * - `release(seq)`: records up to `seq` are durable elsewhere; their bytes may be overwritten.
 *   Writing starts over at offset 0 whenever every record written so far is released; a flush
 *   that would pass the end of the file first waits for that (`onFull` is asked to make it so).
 * - Layout: records back to back from offset 0, each a 24-byte header (magic, payload length,
 *   seq as a float64, CRC-32 of the length, seq and payload; 4 bytes zero) and its payload.
 *   The live records are the run from offset 0 whose seqs follow one another and whose
 *   checksums hold: a torn last record (never acknowledged) fails its checksum, and bytes of an
 *   earlier run have lower seqs, so `readJournal` stops at either.
 * - A file that cannot be preallocated (no room, a file size limit) is removed and no journal is
 *   made: the caller commits without one.
 */
export const JOURNAL_FILE = 'journal.mnemo';
export const JOURNAL_BYTES = 1024 * 1024;
const HEADER = 24;
/** See `gather`. */
const QUIET_ROUNDS = 8;
const YIELD_MS = 2;
const MAGIC = 0x314a4e4d; // "MNJ1"

export interface JournalRecord {
  seq: number;
  payload: Buffer;
}

export interface Journal {
  /** The largest payload `append` takes (a quarter of the file: room for a few flushes). */
  readonly maxPayload: number;
  /**
   * Set when a flush failed (its records' seqs are then missing from the file, and a record
   * after the gap would not be read back): the journal takes no more records.
   */
  readonly broken: unknown;
  /** Records waiting for the next flush. */
  readonly waiting: number;
  /** Numbers the record now (returned) and resolves once it is on the device. */
  append(payload: Buffer): { seq: number; durable: Promise<void> };
  release(seq: number): void;
  /**
   * Overwrites the file with zeros (an erasure: no copy of erased data stays in the journal),
   * if no flush is running and every record is released; false (nothing done) if not.
   */
  scrub(): boolean;
  close(): void;
}

/** The live records of the journal at `path`, oldest first (none when there is no file). */
export function readJournal(path: string): JournalRecord[] {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return [];
  }
  try {
    const size = fstatSync(fd).size;
    const file = Buffer.alloc(size);
    let read = 0;
    while (read < size) {
      const n = readSync(fd, file, read, size - read, read);
      if (n === 0) break;
      read += n;
    }
    const out: JournalRecord[] = [];
    let at = 0;
    while (at + HEADER <= read) {
      if (file.readUInt32LE(at) !== MAGIC) break;
      const length = file.readUInt32LE(at + 4);
      const seq = file.readDoubleLE(at + 8);
      if (at + HEADER + length > read || !Number.isSafeInteger(seq)) break;
      if (out.length > 0 && seq !== out[out.length - 1]!.seq + 1) break;
      const payload = file.subarray(at + HEADER, at + HEADER + length);
      if (crc32(payload, crc32(file.subarray(at + 4, at + 16))) !== file.readUInt32LE(at + 16)) break;
      out.push({ seq, payload: Buffer.from(payload) });
      at += HEADER + length;
    }
    return out;
  } finally {
    closeSync(fd);
  }
}

/**
 * Makes the journal file at `path` and writes it full of zeros once (so a flush never allocates
 * blocks), if it is not there yet. False when that fails (no room, a file size limit): the file
 * is removed and there is no journal.
 */
export function preallocateJournal(path: string, bytes = JOURNAL_BYTES): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'a+');
    if (fstatSync(fd).size >= bytes) return true;
    closeSync(fd);
    fd = openSync(path, 'r+');
    const zeros = Buffer.alloc(Math.min(bytes, 1024 * 1024));
    for (let at = 0; at < bytes; at += zeros.length) writeSync(fd, zeros, 0, Math.min(zeros.length, bytes - at), at);
    fdatasyncSync(fd);
    syncDirectory(dirname(path));
    return true;
  } catch {
    if (fd !== undefined) closeSync(fd);
    fd = undefined;
    rmSync(path, { force: true });
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Opens the preallocated journal at `path`, writing from offset 0, numbering from `next`. The
 * caller has put every live record where it belongs first: the first flush overwrites them.
 * `onFull` is called when a flush would pass the end of the file: it resolves once every record
 * written so far is released, or rejects.
 */
export function openJournal(path: string, next: number, onFull: () => Promise<void>, bytes = JOURNAL_BYTES): Journal {
  // O_DSYNC: each write returns once its data is on the device, one call (and one thread-pool
  // hop) instead of a write and an fdatasync.
  const fd = openSync(path, constants.O_RDWR | constants.O_DSYNC);
  let seq = next;
  let head = 0;
  let released = next - 1;
  let queued: Array<{ record: Buffer; seq: number; resolve(): void; reject(e: unknown): void }> = [];
  let flushing = false;
  let closed = false;
  let broken: unknown;

  let yielded = performance.now();
  let lastFlush = 0;
  /**
   * Lets the appends issued with this one join its flush. After a flush of more than one record
   * (appends arrive together) it waits for the end of the event-loop turn (`setImmediate`).
   * After a flush of one (a lone writer), whose wait it would be, it waits only until
   * `QUIET_ROUNDS` microtask rounds pass with no new record: a turn costs ~50 µs per flush here
   * (one conversation ~1.3x faster without, side by side), and a turn is still taken when none
   * was for `YIELD_MS`, so a writer awaiting appends in a loop does not starve timers and I/O
   * (LMDB's batches need them).
   */
  const gather = async (): Promise<void> => {
    const now = performance.now();
    if (lastFlush > 1 || now - yielded > YIELD_MS) {
      await new Promise((resolve) => setImmediate(resolve));
      yielded = performance.now();
      return;
    }
    for (let quiet = 0, seen = queued.length; quiet < QUIET_ROUNDS; quiet++) {
      await Promise.resolve();
      if (queued.length !== seen) {
        seen = queued.length;
        quiet = -1;
      }
    }
  };

  const flush = async (): Promise<void> => {
    flushing = true;
    try {
      await gather();
      while (queued.length > 0) {
        const batch = queued;
        queued = [];
        const size = batch.reduce((n, q) => n + q.record.length, 0);
        try {
          if (released >= batch[0]!.seq - 1) head = 0;
          else if (head + size > bytes) {
            await onFull();
            if (released < batch[0]!.seq - 1) throw new Error('the journal is full and its records could not be released');
            head = 0;
          }
          const buffer = batch.length === 1 ? batch[0]!.record : Buffer.concat(batch.map((q) => q.record), size);
          // On the main thread, as SQLite's commit is: a thread-pool write and fdatasync cost
          // two hops (~1.5x the time of this one call here), and the turn's appends share it.
          writeSync(fd, buffer, 0, size, head);
          lastFlush = batch.length;
          head += size;
          for (const q of batch) q.resolve();
        } catch (error) {
          broken = error;
          for (const q of [...batch, ...queued]) q.reject(error);
          queued = [];
          return;
        }
      }
    } finally {
      flushing = false;
    }
  };

  return {
    maxPayload: Math.floor(bytes / 4) - HEADER,
    get broken() {
      return broken;
    },
    get waiting() {
      return queued.length;
    },
    append: (payload) => {
      if (closed || broken !== undefined) throw new Error('the journal is closed or broken');
      if (payload.length > Math.floor(bytes / 4) - HEADER) throw new RangeError(`a journal record holds at most ${Math.floor(bytes / 4) - HEADER} bytes`);
      const n = seq++;
      const record = Buffer.allocUnsafe(HEADER + payload.length);
      record.writeUInt32LE(MAGIC, 0);
      record.writeUInt32LE(payload.length, 4);
      record.writeDoubleLE(n, 8);
      payload.copy(record, HEADER);
      record.writeUInt32LE(crc32(payload, crc32(record.subarray(4, 16))), 16);
      record.writeUInt32LE(0, 20);
      const durable = new Promise<void>((resolve, reject) => queued.push({ record, seq: n, resolve, reject }));
      if (!flushing) void flush();
      return { seq: n, durable };
    },
    release: (upTo) => {
      if (upTo > released) released = upTo;
    },
    scrub: () => {
      if (flushing || queued.length > 0 || released < seq - 1) return false;
      const zeros = Buffer.alloc(Math.min(bytes, 1024 * 1024));
      for (let at = 0; at < bytes; at += zeros.length) writeSync(fd, zeros, 0, Math.min(zeros.length, bytes - at), at);
      fdatasyncSync(fd);
      head = 0;
      return true;
    },
    close: () => {
      if (closed) return;
      closed = true;
      closeSync(fd);
    },
  };
}

/** Makes a new file's directory entry durable (fsync of the directory). */
function syncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fdatasyncSync(fd);
  } catch {
    // Not every file system lets a directory be synced; the entry then rides the next sync.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
