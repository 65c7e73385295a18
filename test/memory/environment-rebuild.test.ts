import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { open, type DatabaseOptions, type RootDatabase } from 'lmdb';
import { afterEach, describe, expect, it } from 'vitest';
import { rebuildEnvironment } from '../../src/memory/lmdb/environment-rebuild.ts';
import { mainRecords } from '../../src/memory/lmdb/free-pages.ts';
import { tempDir } from '../support/runtime-fixtures.ts';

// rebuildEnvironment: a new environment with every entry of the old one, as stored, in
// databases with the same flags; nothing of what was removed.

const dirs: Array<{ remove(): void }> = [];
const roots: RootDatabase[] = [];
afterEach(async () => {
  for (const r of roots.splice(0)) await r.close();
  for (const d of dirs.splice(0)) d.remove();
});

function env(path: string): RootDatabase {
  const root = open({ path, noSubdir: false, maxDbs: 16 });
  roots.push(root);
  return root;
}

/** Every database's entries as stored, and its LMDB flags, by name ('' for the main db's plain records). */
function contents(root: RootDatabase): Map<string, { flags: number; entries: string[] }> {
  const out = new Map<string, { flags: number; entries: string[] }>();
  const plain: string[] = [];
  for (const { key, value } of mainRecords(root).getRange({})) {
    const flags = value.length === 48 ? value.readUInt16LE(4) : 0;
    const name = key.subarray(0, -1).toString();
    let db;
    try {
      if (key.at(-1) === 0 && value.length === 48) db = root.openDB({ name, create: false, keyEncoding: flags & 0x08 ? 'uint32' : 'binary', encoding: 'binary', dupSort: (flags & 0x04) !== 0 } as DatabaseOptions & { name: string });
    } catch {
      // MDB_INCOMPATIBLE: not a database
    }
    if (db === undefined) {
      plain.push(`${key.toString('hex')}=${value.toString('hex')}`);
      continue;
    }
    const entries = [...db.getRange({})].map(({ key: k, value: v }) => `${Buffer.isBuffer(k) ? k.toString('hex') : String(k)}=${(v as Buffer).toString('hex')}`);
    out.set(name, { flags, entries });
  }
  out.set('', { flags: 0, entries: plain });
  return out;
}

describe('rebuildEnvironment', () => {
  it('copies every database with its flags and every entry as stored, the main db’s own records too, and nothing removed', async () => {
    const d = tempDir('mnemo-rebuild-');
    dirs.push(d);
    const root = env(join(d.path, 'old'));
    const json = root.openDB<unknown, [string, number]>('json', { encoding: 'json' });
    const packed = root.openDB<unknown, string>('packed', {}); // msgpack with shared structures
    const dups = root.openDB<string, string>('dups', { dupSort: true, encoding: 'string' });
    const ints = root.openDB<string, number>('ints', { keyEncoding: 'uint32', encoding: 'string' });
    const squeezed = root.openDB<string, string>('squeezed', { encoding: 'string', compression: true });
    root.openDB('empty', {});
    await root.transaction(() => {
      for (let i = 0; i < 3000; i++) json.put([`conv-${String(i).padStart(4, '0')}`, i], { text: `row ${i} ${'x'.repeat(100)}` });
      for (let i = 0; i < 200; i++) packed.put(`p${i}`, { kind: 'record', n: i, tags: ['a', 'b'] });
      for (const k of ['a', 'b', 'c']) for (const v of ['3', '1', '2']) dups.put(k, `${k}${v}`);
      for (let i = 0; i < 100; i++) ints.put(i * 1000, `int ${i}`);
      squeezed.put('long', 'compress me '.repeat(500));
      root.put('main-record', { own: true });
    });
    // A plain record of the main db shaped like a database's (a name, a NUL, 48 bytes).
    await mainRecords(root).put(Buffer.from('lookalike\0'), Buffer.alloc(48, 7));
    await root.transaction(() => {
      for (let i = 1000; i < 1400; i++) json.remove([`conv-${String(i).padStart(4, '0')}`, i]);
      dups.remove('b', 'b1');
    });
    await root.flushed;

    const target = join(d.path, 'new');
    await rebuildEnvironment(root, target);
    const copy = env(target);
    expect(contents(copy)).toEqual(contents(root));
    expect(contents(copy).get('dups')!.flags).toBe(0x04);
    expect(contents(copy).get('ints')!.flags).toBe(0x08);

    // Read back through the writers' own options.
    expect(copy.openDB('json', { encoding: 'json' }).get(['conv-0999', 999])).toEqual({ text: `row 999 ${'x'.repeat(100)}` });
    expect(copy.openDB('packed', {}).get('p7')).toEqual({ kind: 'record', n: 7, tags: ['a', 'b'] });
    expect([...copy.openDB<string, string>('dups', { dupSort: true, encoding: 'string' }).getValues('b')]).toEqual(['b2', 'b3']);
    expect([...copy.openDB<string, number>('ints', { keyEncoding: 'uint32', encoding: 'string' }).getKeys({})].slice(0, 3)).toEqual([0, 1000, 2000]);
    expect(copy.openDB<string, string>('squeezed', { encoding: 'string', compression: true }).get('long')).toBe('compress me '.repeat(500));
    expect(copy.get('main-record')).toEqual({ own: true });
    expect(mainRecords(copy).get(Buffer.from('lookalike\0'))).toEqual(Buffer.alloc(48, 7));

    const bytes = readFileSync(join(target, 'data.mdb'));
    for (const i of [1000, 1200, 1399]) expect(bytes.includes(`conv-${i}`), `conv-${i}`).toBe(false);
    expect(bytes.includes('conv-0999')).toBe(true);
  });

  it('refuses a database with reversed keys (storage_failed), writing nothing', async () => {
    const d = tempDir('mnemo-rebuild-');
    dirs.push(d);
    const root = env(join(d.path, 'old'));
    await root.openDB<string, string>('reversed', { reverseKey: true, encoding: 'string' } as DatabaseOptions).put('abc', 'ABC');
    const target = join(d.path, 'new');
    await expect(rebuildEnvironment(root, target)).rejects.toMatchObject({ code: 'storage_failed', details: { database: 'reversed' } });
    expect(existsSync(target)).toBe(false);
  });
});
