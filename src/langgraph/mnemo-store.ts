import {
  BaseStore,
  getTextAtPath,
  type GetOperation,
  type IndexConfig,
  type Item,
  type ListNamespacesOperation,
  type Operation,
  type OperationResults,
  type PutOperation,
  type SearchItem,
  type SearchOperation,
} from '@langchain/langgraph-checkpoint';
import { InvalidInputError } from '../errors.ts';
import { selectNamespaces } from './namespace-match.ts';
import type { ItemRow, ItemStorage, ItemWrite } from './storage/item-storage.ts';
import { openItemStorage, type LangGraphSource } from './storage/langgraph-source.ts';
import { matchesFilter } from './store-filter.ts';
import { itemKey, namespacePath } from './store-keys.ts';

/** The store's own options, beside its `LangGraphSource`. */
export interface MnemoStoreSettings {
  /**
   * Semantic search: embed the given fields of every item put (LangGraph's `IndexConfig`:
   * `embeddings`, `dims`, `fields`, default `['$']` = the whole value) and rank `search` results
   * by cosine similarity to `query`. Without it, a `search` with a `query` is refused
   * (`invalid_option`) rather than answered unranked.
   */
  readonly index?: IndexConfig;
}

/** What `new MnemoStore(options)` takes: where the data lives (`LangGraphSource`) and the settings. */
export type MnemoStoreOptions = LangGraphSource & MnemoStoreSettings;

/**
 * LangGraph's long-term store (`BaseStore`) on Mnemo's storage: its LMDB environment or tables
 * in a PostgreSQL schema (layouts in storage/lmdb/ and storage/postgres/).
 *
 * - `batch` runs its reads first, against the state before the batch (as InMemoryStore does),
 *   then writes all its puts and deletes in one transaction (for one namespace and key, the
 *   last one wins) and resolves once that is committed and flushed. Batches from anywhere are
 *   atomic with respect to each other.
 * - `search(prefix, { filter, limit = 10, offset = 0, query })`: items of the namespace and
 *   below, in (namespace path, key) order, filtered (store-filter.ts); with `query` and an
 *   index, ranked by similarity first (`score`), items without vectors after them.
 * - `listNamespaces({ prefix, suffix, maxDepth, limit = 100, offset = 0 })`: namespace-match.ts.
 * - An item keeps `createdAt` across updates; `updatedAt` is the batch's time.
 */
export class MnemoStore extends BaseStore {
  private readonly storage: ItemStorage;
  private readonly indexConfig: IndexConfig | undefined;
  private closing: Promise<void> | undefined;

  constructor(options: MnemoStoreOptions) {
    super();
    if (options.index !== undefined) {
      const { dims, embeddings } = options.index;
      if (!Number.isInteger(dims) || dims <= 0) throw new InvalidInputError('invalid_option', 'index.dims must be a positive integer');
      if (typeof embeddings?.embedDocuments !== 'function' || typeof embeddings.embedQuery !== 'function') {
        throw new InvalidInputError('invalid_option', 'index.embeddings must be a LangChain Embeddings (embedDocuments, embedQuery)');
      }
    }
    this.indexConfig = options.index;
    this.storage = openItemStorage(options);
  }

  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    if (!Array.isArray(operations)) throw new InvalidInputError('invalid_batch', 'batch takes an array of operations');
    this.storage.checkOpen();
    const results: unknown[] = [];
    const puts = new Map<string, { path: string; key: string; value: Record<string, unknown> | null; index: false | string[] | undefined }>();
    const searches: { at: number; op: SearchOperation; path: string }[] = [];
    for (const op of operations as Operation[]) {
      if (typeof op !== 'object' || op === null) throw new InvalidInputError('invalid_batch', 'every operation must be an object');
      if ('key' in op && 'namespace' in op && !('value' in op)) {
        const read = this.getItem(namespacePath(op.namespace, { allowEmpty: false, write: false }), itemKey((op as GetOperation).key));
        read.catch(() => undefined); // awaited below
        results.push(read);
      } else if ('namespacePrefix' in op) {
        searches.push({ at: results.length, op, path: namespacePath(op.namespacePrefix, { allowEmpty: true, write: false }) });
        results.push(undefined);
      } else if ('value' in op) {
        const put = op as PutOperation;
        const value = put.value;
        if (value !== null && (typeof value !== 'object' || Array.isArray(value))) {
          throw new InvalidInputError('invalid_batch', 'a stored value must be an object (or null to delete)', { field: 'value' });
        }
        const path = namespacePath(put.namespace, { allowEmpty: false, write: value !== null });
        const key = itemKey(put.key);
        puts.set(`${path}\u0000${key}`, { path, key, value, index: put.index });
        results.push(undefined);
      } else if ('matchConditions' in op || ('limit' in op && 'offset' in op)) {
        const select = op as ListNamespacesOperation;
        const selected = this.storage.namespaces().then((paths) => selectNamespaces(paths, select));
        selected.catch(() => undefined); // awaited below
        results.push(selected);
      } else {
        throw new InvalidInputError('invalid_batch', 'unknown operation: expected a get, search, put or listNamespaces operation');
      }
    }
    for (const { at, op, path } of searches) results[at] = await this.runSearch(op, path);
    // The reads, all issued before any write.
    const answered = await Promise.all(results);
    if (puts.size > 0) await this.write([...puts.values()]);
    return answered as OperationResults<Op>;
  }

  /** Release the storage (an LMDB environment is closed when its last Mnemo user releases it). */
  close(): Promise<void> {
    this.closing ??= this.storage.release();
    return this.closing;
  }

  private async getItem(path: string, key: string): Promise<Item | null> {
    const row = await this.storage.get(path, key);
    return row === undefined ? null : toItem(path, key, row);
  }

  private async runSearch(op: SearchOperation, path: string): Promise<SearchItem[]> {
    const limit = op.limit ?? 10;
    const offset = op.offset ?? 0;
    if (!Number.isInteger(limit) || limit < 0 || !Number.isInteger(offset) || offset < 0) {
      throw new InvalidInputError('invalid_option', 'search limit and offset must be non-negative integers');
    }
    const filter = op.filter as Record<string, unknown> | undefined;
    if (op.query === undefined || op.query === null || op.query === '') {
      const out: SearchItem[] = [];
      let skipped = 0;
      if (limit === 0) return out;
      for await (const { path: p, key, row } of this.storage.itemsUnder(path, { vectors: false })) {
        if (!matchesFilter(row.v, filter)) continue;
        if (skipped < offset) {
          skipped++;
          continue;
        }
        out.push(toItem(p, key, row));
        if (out.length >= limit) break;
      }
      return out;
    }
    if (this.indexConfig === undefined) {
      throw new InvalidInputError('invalid_option', 'search with a query needs a store created with an index (embeddings); this one has none');
    }
    const query = Float32Array.from(await this.indexConfig.embeddings.embedQuery(op.query));
    const ranked: SearchItem[] = [];
    const scoreless: SearchItem[] = [];
    for await (const { path: p, key, row, vectors } of this.storage.itemsUnder(path, { vectors: true })) {
      if (!matchesFilter(row.v, filter)) continue;
      if (vectors.length === 0) scoreless.push(toItem(p, key, row));
      else ranked.push({ ...toItem(p, key, row), score: Math.max(...vectors.map((v) => cosine(query, v))) });
    }
    ranked.sort((a, b) => (b.score ?? 0) - (a.score ?? 0));
    return [...ranked, ...scoreless].slice(offset, offset + limit);
  }

  private async write(puts: { path: string; key: string; value: Record<string, unknown> | null; index: false | string[] | undefined }[]): Promise<void> {
    const vectors = await this.embed(puts);
    const writes: ItemWrite[] = puts.map(({ path, key, value }, i) => ({ path, key, value, vectors: value === null ? [] : (vectors[i] ?? []) }));
    await this.storage.write(writes);
  }

  /** Embeddings of the indexed fields of each put, computed before the transaction. */
  private async embed(puts: { value: Record<string, unknown> | null; index: false | string[] | undefined }[]): Promise<{ field: string; vector: Float32Array }[][]> {
    const config = this.indexConfig;
    if (config === undefined) return puts.map(() => []);
    const texts: string[] = [];
    const owners: { put: number; field: string }[] = [];
    puts.forEach(({ value, index }, i) => {
      if (value === null || index === false) return;
      for (const path of index ?? config.fields ?? ['$']) {
        const found = path === '$' ? [JSON.stringify(value)] : getTextAtPath(value, path);
        found.forEach((text, j) => {
          texts.push(text);
          owners.push({ put: i, field: found.length > 1 ? `${path}.${j}` : path });
        });
      }
    });
    const out: { field: string; vector: Float32Array }[][] = puts.map(() => []);
    if (texts.length === 0) return out;
    const embedded = await config.embeddings.embedDocuments(texts);
    embedded.forEach((vector, j) => {
      if (vector.length !== config.dims) {
        throw new InvalidInputError('invalid_option', `the embeddings returned ${vector.length} dimensions, the index expects ${config.dims}`);
      }
      const owner = owners[j]!;
      out[owner.put]!.push({ field: owner.field, vector: Float32Array.from(vector) });
    });
    return out;
  }
}

function toItem(path: string, key: string, row: ItemRow): Item {
  return { namespace: path.split(':'), key, value: row.v, createdAt: new Date(row.c), updatedAt: new Date(row.u) };
}

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length && i < b.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}
