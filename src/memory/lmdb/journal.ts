import { closeSync, constants, fdatasyncSync, fstatSync, ftruncateSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { crc32 } from 'node:zlib';

/**
 * A write-ahead journal: a checksummed log in one preallocated file, so that a record is durable
 * after one device flush (SQLite's WAL does the same; an LMDB commit needs two ordered flushes,
 * its pages and then its meta page, because its pages carry no checksum).
 *
 * - `append(payload, durable)` numbers the record (1, 2, 3, ... across reopens: `next` at open)
 *   and tells `durable` once it is on the device. The records appended together share one flush
 *   (group commit; `gather`), built in place in one staging buffer: one `pwrite` through an
 *   `O_DIRECT | O_DSYNC` descriptor (`O_DSYNC` alone where O_DIRECT is not had: `openDirect`),
 *   on the main thread (it blocks the event loop for one device write, ~0.1-0.2 ms here), of
 *   blocks already written (the file is preallocated), so the flush commits no file-system
 *   metadata.
 * - `release(seq)`: records up to `seq` are durable elsewhere; their bytes may be overwritten.
 *   Writing starts over at offset 0 whenever every record written so far is released; a flush
 *   that would pass the end of the file first waits for that (`onFull` is asked to make it so).
 * - Layout: records back to back from offset 0, each a 24-byte header (magic, payload length,
 *   seq as a float64, CRC-32 of the length, seq and payload; 4 bytes zero) and its payload.
 *   The live records are the run from offset 0 whose seqs follow one another and whose
 *   checksums hold: a torn last record (never acknowledged) fails its checksum, and bytes of an
 *   earlier run have lower seqs, so `readJournal` stops at either.
 * - A file that cannot be preallocated (no room, a file size limit) is removed and no journal is
 *   made: the caller commits without one. A smaller file (an earlier version's 1 MiB) is grown,
 *   its records kept.
 * - Size: made `JOURNAL_INITIAL_BYTES` (64 KiB), the file grows (doubling, preallocated the same
 *   way, once per doubling: a write of zeros and an fdatasync on the main thread) when a flush
 *   would pass its end while records before it are not released, up to `JOURNAL_BYTES`; only
 *   there does a flush wait for room (`onFull`). A clean close with every record released
 *   truncates it back to `JOURNAL_INITIAL_BYTES`. So a data directory at rest holds 64 KiB of
 *   journal, not 4 MiB (420 bytes a message at 10,000 messages, bench/suite disk workload), and
 *   a busy one what its write rate needs.
 */
export const JOURNAL_FILE = 'journal.mnemo';
/** The most the journal file grows to. */
export const JOURNAL_BYTES = 4 * 1024 * 1024;
/** The journal file's size when made, and after a clean close. */
export const JOURNAL_INITIAL_BYTES = 64 * 1024;
/**
 * The most the records waiting for one flush may hold (the staging buffer's size): beyond it an
 * append is refused (its batch commits straight to LMDB). The file is larger, so that appends go
 * on for a while (~1 s at one conversation's rate here) while LMDB is slow to flush a batch,
 * before a flush must wait for room (a slow flush under another tenant's I/O stalled the
 * journal of 1 MiB for seconds).
 */
const STAGING_BYTES = 1024 * 1024;
const HEADER = 24;
/** See `gather`. */
const QUIET_ROUNDS = 8;
const YIELD_MS = 2;
const MAGIC = 0x314a4e4d; // "MNJ1"
/** O_DIRECT's unit: a write covers whole blocks of this many bytes, at an address that is a multiple of the device's. */
const BLOCK = 4096;

export interface JournalRecord {
  seq: number;
  payload: Buffer;
}

/** Told once a record is on the device (no argument) or will never be (the flush's error). */
export type Durable = (error?: unknown) => void;

export interface Journal {
  /** The largest payload `append` takes, in UTF-8 bytes (a quarter of the staging buffer: room for a few). */
  readonly maxPayload: number;
  /**
   * Set when a flush failed (its records' seqs are then missing from the file, and a record
   * after the gap would not be read back): the journal takes no more records.
   */
  readonly broken: unknown;
  /** Records waiting for the next flush. */
  readonly waiting: number;
  /** Whether it writes through O_DIRECT (see `openDirect`). */
  readonly direct: boolean;
  /**
   * Numbers the record (returned) and tells `durable` once it is on the device. Undefined, and
   * nothing done, when the payload is larger than `maxPayload`.
   */
  append(payload: string, durable: Durable): number | undefined;
  release(seq: number): void;
  /**
   * Overwrites the file with zeros (an erasure: no copy of erased data stays in the journal),
   * if no flush is running and every record is released; false (nothing done) if not.
   */
  scrub(): boolean;
  close(): void;
}

/**
 * The live records of the journal at `path`, oldest first (none when there is no file). Reads
 * only as far as the run goes (the file is mostly older bytes: a restart reads little).
 */
export function readJournal(path: string): JournalRecord[] {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return [];
  }
  try {
    const size = fstatSync(fd).size;
    let file = Buffer.alloc(0);
    let read = 0;
    /** Reads the file up to `end` at least (as far as it goes), doubling what was read. */
    const reach = (end: number) => {
      if (end <= read || read >= size) return;
      const want = Math.min(size, Math.max(end, read * 2, 64 * 1024));
      const grown = Buffer.alloc(want);
      file.copy(grown, 0, 0, read);
      file = grown;
      while (read < want) {
        const n = readSync(fd, file, read, want - read, read);
        if (n === 0) break;
        read += n;
      }
    };
    const out: JournalRecord[] = [];
    let at = 0;
    for (;;) {
      reach(at + HEADER);
      if (at + HEADER > read || file.readUInt32LE(at) !== MAGIC) break;
      const length = file.readUInt32LE(at + 4);
      const seq = file.readDoubleLE(at + 8);
      if (!Number.isSafeInteger(seq) || (out.length > 0 && seq !== out[out.length - 1]!.seq + 1)) break;
      reach(at + HEADER + length);
      if (at + HEADER + length > read) break;
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
 * Makes the journal file at `path` `bytes` long, written full of zeros once (so a flush never
 * allocates blocks): a new file, or the part past the end of a smaller one (a journal of an
 * earlier version keeps its records, not yet put anywhere). False when that fails (no room, a
 * file size limit): a file made here is removed, and there is no journal.
 */
export function preallocateJournal(path: string, bytes = JOURNAL_INITIAL_BYTES): boolean {
  let fd: number | undefined;
  let made = false;
  try {
    try {
      fd = openSync(path, 'r+');
    } catch {
      fd = openSync(path, 'wx+');
      made = true;
    }
    const size = fstatSync(fd).size;
    if (size >= bytes) return true;
    const zeros = Buffer.alloc(Math.min(bytes - size, 1024 * 1024));
    for (let at = size; at < bytes; at += zeros.length) writeSync(fd, zeros, 0, Math.min(zeros.length, bytes - at), at);
    fdatasyncSync(fd);
    if (made) syncDirectory(dirname(path));
    return true;
  } catch {
    if (fd !== undefined) closeSync(fd);
    fd = undefined;
    if (made) rmSync(path, { force: true });
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Opens the preallocated journal at `path`, writing from offset 0, numbering from `next`. The
 * caller has put every live record where it belongs first: the first flush overwrites them.
 * The file grows as far as `maxBytes` (see the contract above); `onFull` is called when a flush
 * would pass the end of a file that large: it resolves once every record written so far is
 * released, or rejects. `direct` false: never through `O_DIRECT` (see `openDirect`).
 */
export function openJournal(path: string, next: number, onFull: () => Promise<void>, maxBytes = JOURNAL_BYTES, direct = true): Journal {
  if (maxBytes % BLOCK !== 0 || maxBytes < 4 * BLOCK) throw new RangeError(`a journal is a whole number of ${BLOCK}-byte blocks, at least 4, not ${maxBytes} bytes`);
  const capacity = Math.min(maxBytes, STAGING_BYTES);
  const { fd, staging } = (direct ? openDirect(path, capacity) : undefined) ?? { fd: openSync(path, constants.O_RDWR | constants.O_DSYNC), staging: undefined };
  /** The file's preallocated size now: whole blocks, at most `maxBytes`. */
  let bytes = Math.min(maxBytes, Math.floor(fstatSync(fd).size / BLOCK) * BLOCK);
  /**
   * Preallocates the file to hold `need` bytes (doubling, at most `maxBytes`), through a
   * descriptor of its own (the journal's is O_DIRECT: it takes aligned buffers only). False
   * when it cannot (at the most already, no room): the flush then waits for room.
   */
  const grow = (need: number): boolean => {
    const target = Math.min(maxBytes, Math.max(bytes * 2, Math.ceil(need / BLOCK) * BLOCK));
    if (target < need) return false;
    let plain: number | undefined;
    try {
      plain = openSync(path, 'r+');
      const zeros = Buffer.alloc(Math.min(target - bytes, 1024 * 1024));
      for (let at = bytes; at < target; at += zeros.length) writeSync(plain, zeros, 0, Math.min(zeros.length, target - at), at);
      fdatasyncSync(plain);
      bytes = target;
      return true;
    } catch {
      return false;
    } finally {
      if (plain !== undefined) closeSync(plain);
    }
  };
  const maxPayload = Math.floor(capacity / 4) - HEADER;
  let seq = next;
  let head = 0;
  let released = next - 1;
  // The records waiting for a flush, built in place back to back (one write, no copies), after
  // `lead` bytes: through O_DIRECT, the bytes already in the file before `head` in its block
  // (a write covers whole blocks), else none. `durables`: whom to tell, the first is record
  // `seq - durables.length`. Everything waiting fits the file (`append` sees to it).
  const queue = staging ?? Buffer.allocUnsafeSlow(capacity);
  let lead = 0;
  let queued = 0;
  const fields = Buffer.alloc(12);
  let durables: Durable[] = [];
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
    for (let quiet = 0, seen = durables.length; quiet < QUIET_ROUNDS; quiet++) {
      await Promise.resolve();
      if (durables.length !== seen) {
        seen = durables.length;
        quiet = -1;
      }
    }
  };

  /** Writing goes on from offset 0 (every record before the waiting ones is released). */
  const restart = () => {
    head = 0;
    if (lead > 0) queue.copyWithin(0, lead, lead + queued);
    lead = 0;
  };

  const flush = async (): Promise<void> => {
    flushing = true;
    try {
      await gather();
      while (durables.length > 0) {
        try {
          const first = seq - durables.length;
          if (released >= first - 1) restart();
          if (head + queued > bytes && !grow(head + queued)) {
            await onFull();
            if (released < first - 1) throw new Error('the journal is full and its records could not be released');
            restart();
            // Records made during `onFull` may need more than the file holds yet.
            if (queued > bytes && !grow(queued)) throw new Error('the journal cannot grow to hold the records waiting');
          }
          // Every record waiting now (those made during `onFull` too), on the main thread, as
          // SQLite's commit is: a thread-pool write and fdatasync cost two hops (~1.5x the time
          // of this one call here), and the turn's appends share it.
          const end = lead + queued;
          if (staging === undefined) writeSync(fd, queue, 0, queued, head);
          else {
            const span = Math.ceil(end / BLOCK) * BLOCK;
            queue.fill(0, end, span);
            writeSync(fd, queue, 0, span, head - lead);
          }
          head += queued;
          if (staging !== undefined) {
            lead = head % BLOCK;
            queue.copyWithin(0, end - lead, end);
          }
          queued = 0;
        } catch (error) {
          broken = error;
          const told = durables;
          durables = [];
          queued = 0;
          for (const durable of told) durable(error);
          return;
        }
        lastFlush = durables.length;
        const told = durables;
        durables = [];
        for (const durable of told) durable();
      }
    } finally {
      flushing = false;
    }
  };

  return {
    maxPayload,
    get broken() {
      return broken;
    },
    get waiting() {
      return durables.length;
    },
    direct: staging !== undefined,
    append: (payload, durable) => {
      if (closed || broken !== undefined) throw new Error('the journal is closed or broken');
      // A UTF-8 byte per UTF-16 unit at least, three at most: counted only when it may be too large.
      const most = payload.length * 3;
      if (most > maxPayload && Buffer.byteLength(payload) > maxPayload) return undefined;
      const at = lead + queued;
      // Room for it in the staging buffer (so in the file too) with everything waiting, or none.
      if (at + HEADER + Math.min(most, maxPayload) > capacity) return undefined;
      const length = queue.write(payload, at + HEADER);
      const n = seq++;
      queue.writeUInt32LE(MAGIC, at);
      queue.writeUInt32LE(length, at + 4);
      queue.writeDoubleLE(n, at + 8);
      // The checksum of the length and seq (copied to `fields`), then of the payload's UTF-8
      // bytes: crc32 reads a string as UTF-8, as `write` wrote it (no buffer views per record).
      queue.copy(fields, 0, at + 4, at + 16);
      queue.writeUInt32LE(crc32(payload, crc32(fields)), at + 16);
      queue.writeUInt32LE(0, at + 20);
      queued += HEADER + length;
      durables.push(durable);
      if (!flushing) void flush();
      return n;
    },
    release: (upTo) => {
      if (upTo > released) released = upTo;
    },
    scrub: () => {
      if (flushing || durables.length > 0 || released < seq - 1) return false;
      // Nothing waits, so the staging buffer is free (and aligned, as O_DIRECT wants).
      queue.fill(0);
      for (let at = 0; at < bytes; at += queue.length) writeSync(fd, queue, 0, Math.min(queue.length, bytes - at), at);
      fdatasyncSync(fd);
      head = 0;
      lead = 0;
      return true;
    },
    close: () => {
      if (closed) return;
      closed = true;
      try {
        // Every record is durable elsewhere: the grown part holds nothing needed (see above).
        if (!flushing && durables.length === 0 && released >= seq - 1 && bytes > JOURNAL_INITIAL_BYTES) ftruncateSync(fd, JOURNAL_INITIAL_BYTES);
      } finally {
        closeSync(fd);
      }
    },
  };
}

/**
 * The journal's descriptor through `O_DIRECT | O_DSYNC`, and a staging buffer of `bytes` at a
 * memory address O_DIRECT takes; undefined where that cannot be had (a file system without
 * O_DIRECT, such as tmpfs; not Linux): the caller opens it `O_DSYNC` alone.
 *
 * Why: each write then goes from the buffer to the device, with no page-cache copy and
 * writeback to wait for, ~5-7% less time per flush than `O_DSYNC` alone here (side by side).
 * What it asks: offsets, lengths and the buffer's address in whole blocks (`BLOCK` covers 512-
 * and 4096-byte sectors). JavaScript cannot see an address, so the staging buffer is the view
 * of a larger one that an O_DIRECT read accepts (a misaligned one fails with EINVAL). The larger
 * one is a WebAssembly memory where there is one: V8 maps it on a page boundary, so its first
 * view is taken at once (an ordinary buffer came ~500 bytes past a boundary: ~60 failed reads,
 * ~10 ms of the open).
 */
function openDirect(path: string, bytes: number): { fd: number; staging: Buffer } | undefined {
  const O_DIRECT = (constants as { O_DIRECT?: number }).O_DIRECT;
  if (O_DIRECT === undefined) return undefined;
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDWR | constants.O_DSYNC | O_DIRECT);
  } catch {
    return undefined;
  }
  const raw = pageAligned(bytes + BLOCK);
  for (let at = 0; at < BLOCK; at += 8) {
    const view = raw.subarray(at, at + bytes);
    try {
      readSync(fd, view, 0, BLOCK, 0);
      return { fd, staging: view };
    } catch {
      // Not an address O_DIRECT takes (or no O_DIRECT read at all: then none is).
    }
  }
  closeSync(fd);
  return undefined;
}

/** `size` bytes, page-aligned where WebAssembly is had (not under `--jitless`), else wherever malloc puts them. */
function pageAligned(size: number): Buffer {
  // (Node's types declare no WebAssembly global: the project's lib is ES2023 alone.)
  const wasm = (globalThis as { WebAssembly?: { Memory: new (pages: { initial: number }) => { buffer: ArrayBuffer } } }).WebAssembly;
  if (wasm !== undefined) {
    try {
      return Buffer.from(new wasm.Memory({ initial: Math.ceil(size / 65_536) }).buffer, 0, size);
    } catch {
      // No room for a WebAssembly memory: the probe finds an offset in an ordinary buffer.
    }
  }
  return Buffer.allocUnsafeSlow(size);
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
