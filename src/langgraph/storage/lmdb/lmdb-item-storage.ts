import type { Database } from 'lmdb';
import type { ItemRow, ItemStorage, ItemWrite, StoredItem } from '../item-storage.ts';
import type { OpenedSource } from './lmdb-source.ts';

/**
 * The store's storage port (item-storage.ts) on LMDB, in the shared environment. A namespace
 * is kept as its path (store-keys.ts), so the items of a namespace and of everything below it
 * are one key range.
 *
 * | db                       | key                         | value                          |
 * |--------------------------|-----------------------------|--------------------------------|
 * | langgraph.store          | [path, key]                 | { v: value, c: created, u: updated } (ms) |
 * | langgraph.store-ns       | path                        | number of items in it          |
 * | langgraph.store-vectors  | [path, key, field]          | Float32 embedding (binary)     |
 *
 * `langgraph.store-ns` makes `listNamespaces` a scan of namespaces, not of items; it is kept
 * in step with the items in the same transaction as every write. Times are this process's clock.
 */
export const STORE_DB_NAMES = {
  items: 'langgraph.store',
  namespaces: 'langgraph.store-ns',
  vectors: 'langgraph.store-vectors',
} as const;

export type ItemKey = [path: string, key: string];
export type VectorKey = [path: string, key: string, field: string];

export class LmdbItemStorage implements ItemStorage {
  private readonly items: Database<ItemRow, ItemKey>;
  private readonly namespaceCounts: Database<number, string>;
  private readonly vectors: Database<Buffer, VectorKey>;

  constructor(private readonly source: OpenedSource) {
    // JSON, not msgpack: msgpackr renames an own `__proto__` key; values must come back as given.
    this.items = source.openDB(STORE_DB_NAMES.items, { encoding: 'json' });
    this.namespaceCounts = source.openDB(STORE_DB_NAMES.namespaces, { encoding: 'json' });
    this.vectors = source.openDB(STORE_DB_NAMES.vectors, { encoding: 'binary' });
  }

  checkOpen(): void {
    this.source.checkOpen();
  }

  async get(path: string, key: string): Promise<ItemRow | undefined> {
    this.source.checkOpen();
    return this.items.get([path, key]);
  }

  async *itemsUnder(path: string, options: { vectors: boolean }): AsyncGenerator<StoredItem> {
    this.source.checkOpen();
    const range = path === '' ? {} : { start: [path] as unknown as ItemKey, end: [`${path};`] as unknown as ItemKey };
    for (const { key, value } of this.items.getRange(range)) {
      if (path !== '' && key[0] !== path && !key[0].startsWith(`${path}:`)) continue;
      yield { path: key[0], key: key[1], row: value, vectors: options.vectors ? this.vectorsOf(key[0], key[1]) : [] };
    }
  }

  async namespaces(): Promise<string[]> {
    this.source.checkOpen();
    return [...this.namespaceCounts.getKeys()];
  }

  write(puts: readonly ItemWrite[]): Promise<void> {
    const now = Date.now();
    const adjust = (path: string, delta: number) => {
      const n = (this.namespaceCounts.get(path) ?? 0) + delta;
      void (n > 0 ? this.namespaceCounts.put(path, n) : this.namespaceCounts.remove(path));
    };
    let bytes = 0;
    for (const put of puts) {
      bytes += 256 + (put.value === null ? 0 : JSON.stringify(put.value).length);
      for (const { vector } of put.vectors) bytes += 64 + vector.byteLength;
    }
    return this.source.transact(bytes, () => {
      for (const { path, key, value, vectors } of puts) {
        const k: ItemKey = [path, key];
        const existing = this.items.get(k);
        for (const vk of this.vectorKeysOf(path, key)) void this.vectors.remove(vk);
        if (value === null) {
          if (existing === undefined) continue;
          void this.items.remove(k);
          adjust(path, -1);
          continue;
        }
        void this.items.put(k, { v: value, c: existing?.c ?? now, u: now });
        if (existing === undefined) adjust(path, 1);
        for (const { field, vector } of vectors) {
          void this.vectors.put([path, key, field], Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength));
        }
      }
    });
  }

  release(): Promise<void> {
    return this.source.release();
  }

  private vectorsOf(path: string, key: string): Float32Array[] {
    const out: Float32Array[] = [];
    for (const { value } of this.vectors.getRange({ start: [path, key] as unknown as VectorKey, end: [path, key, Buffer.from([0xff])] as unknown as VectorKey })) {
      const bytes = Buffer.from(value);
      out.push(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4));
    }
    return out;
  }

  private vectorKeysOf(path: string, key: string): VectorKey[] {
    return [...this.vectors.getKeys({ start: [path, key] as unknown as VectorKey, end: [path, key, Buffer.from([0xff])] as unknown as VectorKey })];
  }
}
