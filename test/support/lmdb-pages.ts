import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RootDatabase } from 'lmdb';
import { mainRecords } from '../../src/memory/lmdb/free-pages.ts';

/**
 * The separators of a named database's branch pages, read from `data.mdb` as LMDB lays it out
 * (lmdb-js 3's mdb.c): a page header of 24 bytes (pgno, txnid, pad, flags, lower, upper), then
 * the nodes' offsets (from the end of the header); a branch node is the child's page number in
 * its first 6 bytes, the key's size in the next 2, then the key. The first node of a branch page
 * has an empty key. `level` 1 is the branch pages just above the leaves.
 */
export function branchSeparators(root: RootDatabase, dir: string, db: string): { depth: number; separators: Array<{ level: number; key: Buffer }> } {
  const record = [...mainRecords(root).getRange({})].find((e) => e.key.equals(Buffer.from(`${db}\0`)));
  if (record === undefined) throw new Error(`no database ${db}`);
  const depth = record.value.readUInt16LE(6);
  const rootPage = Number(record.value.readBigUInt64LE(40));
  const pageSize = (root.getStats() as { pageSize: number }).pageSize;
  const file = readFileSync(join(dir, 'data.mdb'));
  const separators: Array<{ level: number; key: Buffer }> = [];
  const walk = (pgno: number, level: number) => {
    const page = file.subarray(pgno * pageSize, (pgno + 1) * pageSize);
    if ((page.readUInt16LE(18) & P_BRANCH) === 0) return;
    const count = page.readUInt16LE(20) >> 1;
    for (let i = 0; i < count; i++) {
      const node = HEADER + page.readUInt16LE(HEADER + 2 * i);
      const child = page.readUInt16LE(node) + page.readUInt16LE(node + 2) * 2 ** 16 + page.readUInt16LE(node + 4) * 2 ** 32;
      const size = page.readUInt16LE(node + 6);
      if (i > 0) separators.push({ level, key: Buffer.from(page.subarray(node + 8, node + 8 + size)) });
      walk(child, level - 1);
    }
  };
  walk(rootPage, depth - 1);
  return { depth, separators };
}

const HEADER = 24;
const P_BRANCH = 0x01;
