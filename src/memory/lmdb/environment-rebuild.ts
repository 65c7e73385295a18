import { open, type Database, type DatabaseOptions, type Key, type RootDatabase } from 'lmdb';
import { StorageError } from '../contract/memory-errors.ts';
import { mainRecords } from './free-pages.ts';

/**
 * `rebuildEnvironment(source, target)`: a new LMDB environment in the directory `target` with
 * the same entries as `source` (its last committed state), written entry by entry in key order.
 *
 * Why not LMDB's compacting copy (`mdb_env_copy2` with `MDB_CP_COMPACT`): it copies the live
 * pages as they are, and a branch page keeps, as the separator of each child, the first key that
 * child had when it split, deleted or not. So an erased key can outlive its row in a live page of
 * the copy. Here every page is new: inserts in key order split pages only at the key being
 * inserted, so every separator, at every level, is a key that exists; and nothing is deleted
 * from the new environment, so it stays so. No byte of an entry that `source` no longer holds
 * reaches `target`, however deep the trees.
 *
 * What is copied: every named database (each a record of the main database: its name with a NUL,
 * and its `MDB_db`), created with the same persistent flags (sorted duplicates, fixed or integer
 * duplicates, uint32 keys), its entries as stored bytes (keys and values, whatever lmdb-js
 * encoding wrote them: msgpack, json, versions, compression); and the main database's plain
 * records. The page size is the source's. Keys as bytes are ordered as lmdb-js orders its
 * default keys (byte order, shorter first). Pages come out full (`MDB_APPEND`), except in a
 * database with sorted duplicates (plain puts there); an append out of order (the source
 * changed under the rebuild) throws.
 *
 * Refused before anything is written, `storage_failed`: a database with reversed keys
 * (`reverseKey`; Mnemo makes none), whose order lmdb-js takes from its writers' key encoding.
 *
 * Written without fsync (`noSync`) in transactions of at most about `CHUNK_BYTES` and `CHUNK_MS`,
 * yielding an event turn between them (the process serves meanwhile; the rebuild holds a read snapshot of `source`, so
 * nothing written to it afterwards would be seen, and the caller sees to it that nothing is);
 * closed before it resolves; `committed` is told after each transaction (a test kills the process
 * there). The caller fsyncs the file (compacting-copy.ts). Whatever fails throws, with `target`
 * as it was left: the caller removes it.
 */
export async function rebuildEnvironment(source: RootDatabase, target: string, committed: () => void = () => {}): Promise<void> {
  const stats = source.getStats() as { pageSize: number; mapSize: number };
  const named = namedDatabases(source);
  const reversed = named.find((n) => (n.flags & MDB_REVERSEKEY) !== 0);
  if (reversed !== undefined) {
    // lmdb-js orders such a db forward for its default keys and in reverse for binary ones: the
    // order its writers expect cannot be told from the file.
    throw new StorageError('storage_failed', `cannot rebuild the LMDB database ${reversed.name}: its keys are ordered in reverse (reverseKey); compact it with LMDB's page copy`, { database: reversed.name });
  }
  const copy = open({
    path: target,
    noSubdir: false,
    maxDbs: Math.max(1, named.length),
    pageSize: stats.pageSize,
    // Address space only (no write map: the file grows as pages are written). The copy is at
    // most the live pages of the source, except where duplicates are not appended.
    mapSize: 2 * stats.mapSize + (16 << 20),
    noSync: true,
  });
  try {
    const plain = mainRecords(source);
    const into = named.map(({ name, flags }) => ({ name, from: storedBytes(source, name, flags), to: storedBytes(copy, name, flags), append: (flags & MDB_DUPSORT) === 0 }));
    // The main db's plain records after the databases' records exist: no appending there.
    await copyEntries('the main database', copy, plain, mainRecords(copy), (key, value) => !isDatabaseRecord(key as Buffer, value, named), false, committed);
    for (const { name, from, to, append } of into) await copyEntries(name, copy, from, to, () => true, append, committed);
  } finally {
    await copy.close();
  }
}

/** About this much of keys and values per write transaction of the rebuild. */
const CHUNK_BYTES = 16 << 20;
/** And at most about this long (ms): the event loop waits for one transaction at a time. */
const CHUNK_MS = 50;

const MDB_DB_BYTES = 48;
const MDB_REVERSEKEY = 0x02;
const MDB_DUPSORT = 0x04;
const MDB_INTEGERKEY = 0x08;
const MDB_DUPFIXED = 0x10;
const MDB_INTEGERDUP = 0x20;
const MDB_REVERSEDUP = 0x40;
/** lmdb-js's `Database not found` / LMDB's "not a named DB". */
const MDB_INCOMPATIBLE = -30784;

interface Named {
  name: string;
  key: Buffer;
  flags: number;
}

/**
 * The named databases of `root`: the main db's records that are a NUL-terminated name and an
 * `MDB_db`, confirmed by opening them without creating (a plain record of that shape is
 * `MDB_INCOMPATIBLE` then).
 */
function namedDatabases(root: RootDatabase): Named[] {
  const found: Named[] = [];
  for (const { key, value } of mainRecords(root).getRange({})) {
    if (key.length < 2 || key.indexOf(0) !== key.length - 1 || value.length !== MDB_DB_BYTES) continue;
    const name = key.subarray(0, -1).toString('utf8');
    const flags = value.readUInt16LE(4);
    try {
      if (root.openDB({ name, create: false, ...optionsFor(flags) } as DatabaseOptions & { name: string }) === undefined) continue;
    } catch (error) {
      if (/MDB_INCOMPATIBLE/.test(String((error as Error).message)) || (error as { code?: unknown }).code === MDB_INCOMPATIBLE) continue;
      throw error;
    }
    found.push({ name, key: Buffer.from(key), flags });
  }
  return found;
}

function isDatabaseRecord(key: Buffer, value: Buffer, named: Named[]): boolean {
  return value.length === MDB_DB_BYTES && named.some((n) => n.key.equals(key));
}

/** lmdb-js's options for a database with LMDB's persistent `flags`, keys and values as bytes. */
function optionsFor(flags: number): DatabaseOptions {
  return {
    // lmdb-js sets MDB_INTEGERKEY only with its uint32 keys.
    keyEncoding: flags & MDB_INTEGERKEY ? 'uint32' : 'binary',
    encoding: 'binary',
    dupSort: (flags & MDB_DUPSORT) !== 0,
    dupFixed: (flags & MDB_DUPFIXED) !== 0,
    integerDup: (flags & MDB_INTEGERDUP) !== 0,
    reverseDup: (flags & MDB_REVERSEDUP) !== 0,
  } as DatabaseOptions;
}

function storedBytes(root: RootDatabase, name: string, flags: number): Database<Buffer, Key> {
  return root.openDB<Buffer, Key>({ name, ...optionsFor(flags) } as DatabaseOptions & { name: string });
}

/** Puts every entry of `from` that `keep` keeps into `to` (of `copy`), in key order. */
async function copyEntries(
  name: string,
  copy: RootDatabase,
  from: Database<Buffer, Key>,
  to: Database<Buffer, Key>,
  keep: (key: Key, value: Buffer) => boolean,
  append: boolean,
  committed: () => void,
): Promise<void> {
  const entries = from.getRange({})[Symbol.iterator]();
  const flags = append ? { append: true } : undefined;
  let done = false;
  while (!done) {
    copy.transactionSync(() => {
      const until = performance.now() + CHUNK_MS;
      let bytes = 0;
      for (let n = 1; bytes < CHUNK_BYTES && (n % 256 !== 0 || performance.now() < until); n++) {
        const next = entries.next();
        if (next.done === true) {
          done = true;
          return;
        }
        const { key, value } = next.value as { key: Key; value: Buffer };
        if (!keep(key, value)) continue;
        // lmdb-js's types say void; in a write transaction it answers whether the put was done.
        if ((to.putSync(key, value, flags as never) as unknown) !== true) throw new Error(`an entry of ${name} did not go into the rebuilt environment (out of order: did the source change?)`);
        bytes += (Buffer.isBuffer(key) ? key.length : 4) + value.length;
      }
    });
    committed();
    // The process serves between transactions (the runtime's health, its other routes).
    await new Promise((r) => setImmediate(r));
  }
}
