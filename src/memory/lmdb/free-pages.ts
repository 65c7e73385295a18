import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { Database, RootDatabase } from 'lmdb';

/**
 * The bytes of `data.mdb` that hold no data: LMDB's free pages inside the file, which later
 * writes fill before the file grows (a removal frees pages but never shrinks the file).
 *
 * Counted as LMDB's own books balance (mdb_env_copy's compaction relies on the same sum):
 * every page up to the last one LMDB handed out is a meta page (2), a page of a tree (the main
 * db, the free db, each named db: the page counts in their records), or free. Of those, only
 * the pages inside the file and backed by blocks on the disk count: `min(file size, allocated
 * blocks)`; a page past the file's end (or in a hole) needs the disk like any new one.
 *
 * Not exact in two ways, both of which only ever count pages a write then does not find (the
 * caller, disk-room.ts, lets free pages carry only what the disk could still take if LMDB grew
 * the file instead):
 * - LMDB reuses a page freed by commit N from commit N+2 on (the previous snapshot stays whole
 *   until then), and not while a reader holds a snapshot older than N; those pages count.
 * - A value longer than about half a page goes to consecutive overflow pages; free pages
 *   scattered in ones and twos do not take it.
 *
 * 0 (nothing counted) when the books cannot be read: a named db with sorted duplicates (their
 * pages are not in its record), or a record that does not look like one.
 */
export function freePagesBytes(root: RootDatabase, main: Database<Buffer, Buffer>, path: string): number {
  try {
    const stats = root.getStats() as EnvironmentStats;
    const pageSize = stats.pageSize;
    const last = stats.lastPageNumber;
    let used = META_PAGES + pages(stats.root) + pages(stats.free);
    for (const { key, value } of main.getRange({})) {
      // A named db's record: its name with a NUL, and its MDB_db (anything else is a plain
      // record of the main db, which its own page count already holds).
      if (key[key.length - 1] !== 0 || value.length !== MDB_DB_BYTES) continue;
      const flags = value.readUInt16LE(4);
      if (flags & MDB_DUPSORT) return 0;
      const treePages = Number(value.readBigUInt64LE(8) + value.readBigUInt64LE(16) + value.readBigUInt64LE(24));
      if (treePages > last + 1) return 0;
      used += treePages;
    }
    const file = statSync(join(path, 'data.mdb'));
    const backed = Math.floor(Math.min(file.size, file.blocks * 512) / pageSize);
    return Math.max(0, Math.min(backed, last + 1) - used) * pageSize;
  } catch {
    return 0;
  }
}

/** The main db's records as they are stored: keys and values as bytes. */
export function mainRecords(root: RootDatabase): Database<Buffer, Buffer> {
  // lmdb-js opens the main db for a null name (its types only say string).
  return root.openDB<Buffer, Buffer>({ name: null as unknown as string, encoding: 'binary', keyEncoding: 'binary' });
}

interface TreeStats {
  treeBranchPageCount: number;
  treeLeafPageCount: number;
  overflowPages: number;
}

/** What lmdb-js's `getStats()` returns on the root (its types say `{}`). */
interface EnvironmentStats {
  pageSize: number;
  lastPageNumber: number;
  root: TreeStats;
  free: TreeStats;
}

const pages = (s: TreeStats) => s.treeBranchPageCount + s.treeLeafPageCount + s.overflowPages;

const META_PAGES = 2;
/** sizeof(MDB_db) on 64 bits: pad, flags, depth, branch, leaf and overflow pages, entries, root. */
const MDB_DB_BYTES = 48;
const MDB_DUPSORT = 0x04;
