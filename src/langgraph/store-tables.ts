import type { Database } from 'lmdb';
import { InvalidNamespaceError } from '@langchain/langgraph-checkpoint';
import { InvalidInputError } from '../errors.ts';
import type { OpenedSource } from './lmdb-source.ts';

/**
 * MnemoStore's LMDB layout, in the shared environment. A namespace `['users', 'u1']` is kept
 * as its path `users:u1` (labels cannot contain ':', so the path is unambiguous), so the items
 * of a namespace and of everything below it are one key range.
 *
 * | db                       | key                         | value                          |
 * |--------------------------|-----------------------------|--------------------------------|
 * | langgraph.store          | [path, key]                 | { v: value, c: created, u: updated } (ms) |
 * | langgraph.store-ns       | path                        | number of items in it          |
 * | langgraph.store-vectors  | [path, key, field]          | Float32 embedding (binary)     |
 *
 * `langgraph.store-ns` makes `listNamespaces` a scan of namespaces, not of items; it is kept
 * in step with the items in the same transaction as every write.
 */
export const STORE_DB_NAMES = {
  items: 'langgraph.store',
  namespaces: 'langgraph.store-ns',
  vectors: 'langgraph.store-vectors',
} as const;

export interface ItemRow {
  readonly v: Record<string, unknown>;
  readonly c: number;
  readonly u: number;
}

export type ItemKey = [path: string, key: string];
export type VectorKey = [path: string, key: string, field: string];

const MAX_PATH_BYTES = 1024;
const MAX_KEY_BYTES = 512;

export class StoreTables {
  readonly items: Database<ItemRow, ItemKey>;
  readonly namespaces: Database<number, string>;
  readonly vectors: Database<Buffer, VectorKey>;

  constructor(readonly source: OpenedSource) {
    // JSON, not msgpack: msgpackr renames an own `__proto__` key; values must come back as given.
    this.items = source.openDB(STORE_DB_NAMES.items, { encoding: 'json' });
    this.namespaces = source.openDB(STORE_DB_NAMES.namespaces, { encoding: 'json' });
    this.vectors = source.openDB(STORE_DB_NAMES.vectors, { encoding: 'binary' });
  }

  /** Items of namespace `path` and of the namespaces below it, in key order. */
  *itemsUnder(path: string): Generator<{ path: string; key: string; row: ItemRow }> {
    const range = path === '' ? {} : { start: [path] as unknown as ItemKey, end: [`${path};`] as unknown as ItemKey };
    for (const { key, value } of this.items.getRange(range)) {
      if (path !== '' && key[0] !== path && !key[0].startsWith(`${path}:`)) continue;
      yield { path: key[0], key: key[1], row: value };
    }
  }

  vectorsOf(path: string, key: string): Float32Array[] {
    const out: Float32Array[] = [];
    for (const { value } of this.vectors.getRange({ start: [path, key] as unknown as VectorKey, end: [path, key, Buffer.from([0xff])] as unknown as VectorKey })) {
      const bytes = Buffer.from(value);
      out.push(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4));
    }
    return out;
  }

  vectorKeysOf(path: string, key: string): VectorKey[] {
    return [...this.vectors.getKeys({ start: [path, key] as unknown as VectorKey, end: [path, key, Buffer.from([0xff])] as unknown as VectorKey })];
  }
}

/**
 * A namespace's path, checked as LangGraph's `validateNamespace` does (labels are non-empty
 * strings without '.', ':' or NUL; the root label `langgraph` is reserved for writes), plus a
 * length bound (the path is part of an LMDB key).
 */
export function namespacePath(namespace: unknown, options: { allowEmpty: boolean; write: boolean }): string {
  if (!Array.isArray(namespace)) throw new InvalidNamespaceError(`Namespace must be an array of strings, got ${typeof namespace}`);
  if (namespace.length === 0) {
    if (options.allowEmpty) return '';
    throw new InvalidNamespaceError('Namespace cannot be empty.');
  }
  for (const label of namespace as unknown[]) {
    if (typeof label !== 'string') throw new InvalidNamespaceError(`Namespace labels must be strings, got ${typeof label}`);
    if (label === '') throw new InvalidNamespaceError('Namespace labels cannot be empty strings.');
    if (/[.:\u0000]/.test(label)) throw new InvalidNamespaceError(`Invalid namespace label '${label}': labels cannot contain '.', ':' or NUL`);
  }
  if (options.write && namespace[0] === 'langgraph') throw new InvalidNamespaceError('Root label for namespace cannot be "langgraph".');
  const path = (namespace as string[]).join(':');
  if (Buffer.byteLength(path) > MAX_PATH_BYTES) throw new InvalidNamespaceError(`Namespace is longer than ${MAX_PATH_BYTES} bytes`);
  return path;
}

export function itemKey(key: unknown): string {
  if (typeof key !== 'string' || key === '') throw new InvalidInputError('invalid_id', 'an item key must be a non-empty string', { field: 'key' });
  if (key.includes('\u0000')) throw new InvalidInputError('invalid_id', 'an item key must not contain a NUL character', { field: 'key' });
  if (Buffer.byteLength(key) > MAX_KEY_BYTES) throw new InvalidInputError('invalid_id', `an item key is longer than ${MAX_KEY_BYTES} bytes`, { field: 'key' });
  return key;
}
