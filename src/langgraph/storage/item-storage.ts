/**
 * The store's storage port: what MnemoStore needs of a database, so the LangGraph logic
 * (operations, namespaces, filters, embeddings, ranking) is written once and the tables live in
 * an adapter: lmdb/lmdb-item-storage.ts or postgres/pg-item-storage.ts. Namespaces arrive as
 * their paths (store-keys.ts).
 *
 * Contract of every adapter: reads see every write that resolved (from any process on the same
 * storage); `write` is ONE atomic step, durable when it resolves, and writes from anywhere are
 * atomic with respect to each other; an item keeps its creation time across updates, and the
 * write's time is its update time. Failures are `StorageError`s.
 */
export interface ItemRow {
  /** The value, exactly as put (key order, `__proto__` keys). */
  readonly v: Record<string, unknown>;
  /** Created at, ms. */
  readonly c: number;
  /** Updated at, ms. */
  readonly u: number;
}

export interface StoredItem {
  readonly path: string;
  readonly key: string;
  readonly row: ItemRow;
  /** Its embeddings (empty unless asked for, or none stored). */
  readonly vectors: readonly Float32Array[];
}

/** One put (`value` null: a delete) with the embeddings of its indexed fields. */
export interface ItemWrite {
  readonly path: string;
  readonly key: string;
  readonly value: Record<string, unknown> | null;
  readonly vectors: readonly { readonly field: string; readonly vector: Float32Array }[];
}

export interface ItemStorage {
  /** Throws `store_closed` once released (or the runtime stopped). */
  checkOpen(): void;
  get(path: string, key: string): Promise<ItemRow | undefined>;
  /** The items of namespace `path` and of those below it ('' for all), in (path, key) order, read lazily. */
  itemsUnder(path: string, options: { readonly vectors: boolean }): AsyncIterable<StoredItem>;
  /** The paths of the namespaces holding items, sorted. */
  namespaces(): Promise<string[]>;
  /** The puts (one per namespace and key) in one transaction: each replaces its item and vectors, or deletes them. */
  write(puts: readonly ItemWrite[]): Promise<void>;
  release(): Promise<void>;
}
