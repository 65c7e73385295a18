/**
 * MnemoStore's behaviour, one suite for every storage: test/langgraph/store.test.ts runs it on
 * LMDB, test/postgres/langgraph-store.test.ts on PostgreSQL.
 */
import { Embeddings } from '@langchain/core/embeddings';
import { InvalidNamespaceError } from '@langchain/langgraph-checkpoint';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../src/errors.ts';
import type { MnemoStore, MnemoStoreSettings } from '../../src/langgraph/index.ts';

/** A real (if tiny) embedding model: counts of a fixed vocabulary, so similarity is predictable. */
class VocabularyEmbeddings extends Embeddings {
  static readonly words = ['cat', 'dog', 'fish', 'tea', 'coffee', 'rain'];
  constructor() {
    super({});
  }
  async embedDocuments(texts: string[]): Promise<number[][]> {
    return texts.map((t) => this.vector(t));
  }
  async embedQuery(text: string): Promise<number[]> {
    return this.vector(text);
  }
  private vector(text: string): number[] {
    const tokens = text.toLowerCase().match(/[a-z]+/g) ?? [];
    return VocabularyEmbeddings.words.map((w) => tokens.filter((t) => t === w).length);
  }
}

/** One empty storage per test: `open` gives a store on it (again after a close: the same data). */
export interface StoreStorage {
  /** Before each test: a new, empty storage. */
  setUp(): Promise<void> | void;
  open(settings?: MnemoStoreSettings): MnemoStore;
  /** After each test, once the store is closed. */
  tearDown(): Promise<void> | void;
}

export function describeMnemoStore(name: string, storage: StoreStorage): void {
  describe(name, () => {
    let store: MnemoStore;

    beforeEach(async () => {
      await storage.setUp();
      store = storage.open();
    });

    afterEach(async () => {
      await store.close();
      await storage.tearDown();
    });

    describe('MnemoStore: put, get, delete', () => {
      it('returns what was put, with its namespace, key and timestamps', async () => {
        await store.put(['users', 'u1'], 'prefs', { theme: 'dark', sizes: [1, 2], nested: { a: null } });
        const item = await store.get(['users', 'u1'], 'prefs');
        expect(item).toMatchObject({ namespace: ['users', 'u1'], key: 'prefs', value: { theme: 'dark', sizes: [1, 2], nested: { a: null } } });
        expect(item?.createdAt).toBeInstanceOf(Date);
        expect(item?.updatedAt.getTime()).toBe(item?.createdAt.getTime());
      });

      it('returns null for an unknown key or namespace', async () => {
        await store.put(['users', 'u1'], 'prefs', { theme: 'dark' });
        expect(await store.get(['users', 'u1'], 'other')).toBeNull();
        expect(await store.get(['users', 'u2'], 'prefs')).toBeNull();
      });

      it('an update replaces the value and keeps createdAt', async () => {
        await store.put(['users', 'u1'], 'prefs', { theme: 'dark' });
        const first = await store.get(['users', 'u1'], 'prefs');
        await new Promise((r) => setTimeout(r, 5));
        await store.put(['users', 'u1'], 'prefs', { theme: 'light' });
        const second = await store.get(['users', 'u1'], 'prefs');
        expect(second?.value).toEqual({ theme: 'light' });
        expect(second?.createdAt.getTime()).toBe(first?.createdAt.getTime());
        expect(second?.updatedAt.getTime()).toBeGreaterThan(first!.updatedAt.getTime());
      });

      it('delete removes the item and is harmless for a missing one', async () => {
        await store.put(['users', 'u1'], 'prefs', { theme: 'dark' });
        await store.delete(['users', 'u1'], 'prefs');
        await store.delete(['users', 'u1'], 'never');
        expect(await store.get(['users', 'u1'], 'prefs')).toBeNull();
        expect(await store.listNamespaces()).toEqual([]);
      });

      it('keeps a value exactly, including an own __proto__ key', async () => {
        const value = JSON.parse('{"__proto__": {"x": 1}, "n": 1.5, "s": "é"}') as Record<string, unknown>;
        await store.put(['docs'], 'd', value);
        const item = await store.get(['docs'], 'd');
        expect(Object.prototype.hasOwnProperty.call(item?.value, '__proto__')).toBe(true);
        expect(JSON.stringify(item?.value)).toBe(JSON.stringify(value));
      });

      it('keeps NUL characters, lone surrogates and key order in values', async () => {
        const value = { z: 'nul \u0000 here', a: 'lone \uD800', m: { y: 1, b: [2, { d: null, c: 'x' }] } };
        await store.put(['docs'], 'odd', value);
        expect(JSON.stringify((await store.get(['docs'], 'odd'))?.value)).toBe(JSON.stringify(value));
        expect((await store.search(['docs'], { filter: { z: 'nul \u0000 here' } })).map((i) => i.key)).toEqual(['odd']);
      });

      it('is durable: a second store on the same storage sees every resolved put', async () => {
        await store.put(['users', 'u1'], 'a', { v: 1 });
        await store.put(['users', 'u1'], 'b', { v: 2 });
        await store.close();
        store = storage.open();
        expect((await store.search(['users'])).map((i) => i.key)).toEqual(['a', 'b']);
      });

      it('rejects bad namespaces, keys and values, writing nothing of the batch', async () => {
        await expect(store.put(['a.b'], 'k', { v: 1 })).rejects.toBeInstanceOf(InvalidNamespaceError);
        await expect(store.put(['langgraph'], 'k', { v: 1 })).rejects.toBeInstanceOf(InvalidNamespaceError);
        await expect(store.put([], 'k', { v: 1 })).rejects.toBeInstanceOf(InvalidNamespaceError);
        const badKey = await store.put(['ok'], 'a\u0000b', { v: 1 }).catch((e: unknown) => e);
        expect(badKey).toBeInstanceOf(InvalidInputError);
        expect((badKey as InvalidInputError).code).toBe('invalid_id');
        const badBatch = await store
          .batch([
            { namespace: ['ok'], key: 'good', value: { v: 1 } },
            { namespace: ['ok'], key: 'bad', value: [1, 2] as unknown as Record<string, unknown> },
          ])
          .catch((e: unknown) => e);
        expect((badBatch as InvalidInputError).code).toBe('invalid_batch');
        expect(await store.get(['ok'], 'good')).toBeNull();
      });
    });

    describe('MnemoStore: search', () => {
      beforeEach(async () => {
        await store.batch([
          { namespace: ['docs', 'a'], key: 'd1', value: { kind: 'note', score: 1, tags: ['x'], profile: { city: 'Oslo' } } },
          { namespace: ['docs', 'a'], key: 'd2', value: { kind: 'todo', score: 5, tags: ['y'], profile: { city: 'Rome' } } },
          { namespace: ['docs', 'b'], key: 'd3', value: { kind: 'note', score: 3, tags: ['x', 'y'] } },
          { namespace: ['docs', 'b', 'deep'], key: 'd4', value: { kind: 'note', score: 4 } },
          { namespace: ['docsx'], key: 'd5', value: { kind: 'note', score: 9 } },
          { namespace: ['other'], key: 'o1', value: { kind: 'note', score: 2 } },
        ]);
      });

      const keys = (items: { key: string }[]) => items.map((i) => i.key);

      it('returns the items of a namespace and of every namespace below it, in namespace then key order', async () => {
        expect(keys(await store.search(['docs']))).toEqual(['d1', 'd2', 'd3', 'd4']);
        expect(keys(await store.search(['docs', 'b']))).toEqual(['d3', 'd4']);
      });

      it('an empty prefix searches everything', async () => {
        expect(keys(await store.search([]))).toEqual(['d1', 'd2', 'd3', 'd4', 'd5', 'o1']);
      });

      it('does not take a namespace that merely starts with the same letters', async () => {
        expect(keys(await store.search(['docs']))).not.toContain('d5');
      });

      it('filters by equality on value fields, including arrays and nested fields', async () => {
        expect(keys(await store.search(['docs'], { filter: { kind: 'note' } }))).toEqual(['d1', 'd3', 'd4']);
        expect(keys(await store.search(['docs'], { filter: { tags: ['x', 'y'] } }))).toEqual(['d3']);
        expect(keys(await store.search(['docs'], { filter: { 'profile.city': 'Rome' } }))).toEqual(['d2']);
        expect(keys(await store.search(['docs'], { filter: { kind: 'note', score: 3 } }))).toEqual(['d3']);
      });

      it('filters with the comparison operators of InMemoryStore', async () => {
        expect(keys(await store.search([], { filter: { score: { $gt: 3 } } }))).toEqual(['d2', 'd4', 'd5']);
        expect(keys(await store.search([], { filter: { score: { $gte: 3, $lt: 5 } } }))).toEqual(['d3', 'd4']);
        expect(keys(await store.search([], { filter: { score: { $lte: 2 } } }))).toEqual(['d1', 'o1']);
        expect(keys(await store.search([], { filter: { kind: { $ne: 'note' } } }))).toEqual(['d2']);
        expect(keys(await store.search([], { filter: { kind: { $eq: 'todo' } } }))).toEqual(['d2']);
        expect(keys(await store.search([], { filter: { score: { $in: [1, 9] } } }))).toEqual(['d1', 'd5']);
        expect(keys(await store.search(['docs'], { filter: { score: { $nin: [1, 3, 4] } } }))).toEqual(['d2']);
      });

      it('pages with limit (default 10) and offset after filtering', async () => {
        expect(keys(await store.search([], { limit: 2 }))).toEqual(['d1', 'd2']);
        expect(keys(await store.search([], { limit: 2, offset: 2 }))).toEqual(['d3', 'd4']);
        expect(keys(await store.search([], { filter: { kind: 'note' }, limit: 2, offset: 1 }))).toEqual(['d3', 'd4']);
        expect(keys(await store.search([], { offset: 10 }))).toEqual([]);
        await store.batch(Array.from({ length: 12 }, (_, i) => ({ namespace: ['many'], key: `k${String(i).padStart(2, '0')}`, value: { i } })));
        expect(await store.search(['many'])).toHaveLength(10);
      });

      it('refuses a query when the store has no index, instead of answering unranked', async () => {
        const error = await store.search(['docs'], { query: 'notes about Oslo' }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(InvalidInputError);
        expect((error as InvalidInputError).code).toBe('invalid_option');
      });
    });

    describe('MnemoStore: semantic search with an index', () => {
      it('ranks items by similarity of their indexed field to the query, with a score', async () => {
        await store.close();
        store = storage.open({ index: { dims: 6, embeddings: new VocabularyEmbeddings(), fields: ['text'] } });
        await store.batch([
          { namespace: ['mem'], key: 'pets', value: { text: 'my cat and my dog' } },
          { namespace: ['mem'], key: 'drinks', value: { text: 'tea or coffee' } },
          { namespace: ['mem'], key: 'weather', value: { text: 'rain rain rain' } },
          { namespace: ['mem'], key: 'unindexed', value: { text: 'cat' }, index: false },
        ]);
        const results = await store.search(['mem'], { query: 'coffee please', limit: 3 });
        expect(results.map((r) => r.key)).toEqual(['drinks', 'pets', 'weather']);
        expect(results[0]!.score).toBeGreaterThan(0);
        expect(results[1]!.score).toBe(0);
        const withUnindexed = await store.search(['mem'], { query: 'cat', limit: 10 });
        expect(withUnindexed.map((r) => r.key)).toEqual(['pets', 'drinks', 'weather', 'unindexed']);
        expect(withUnindexed[3]!.score).toBeUndefined();
      });

      it('re-embeds an updated item and forgets a deleted one', async () => {
        await store.close();
        store = storage.open({ index: { dims: 6, embeddings: new VocabularyEmbeddings(), fields: ['text'] } });
        await store.put(['mem'], 'a', { text: 'rain' });
        await store.put(['mem'], 'b', { text: 'tea' });
        await store.put(['mem'], 'a', { text: 'coffee' });
        expect((await store.search(['mem'], { query: 'coffee', limit: 1 }))[0]?.key).toBe('a');
        await store.delete(['mem'], 'a');
        expect((await store.search(['mem'], { query: 'coffee' })).map((r) => r.key)).toEqual(['b']);
      });
    });

    describe('MnemoStore: listNamespaces', () => {
      beforeEach(async () => {
        await store.batch([
          { namespace: ['users', 'u1', 'memories'], key: 'k', value: { v: 1 } },
          { namespace: ['users', 'u1', 'prefs'], key: 'k', value: { v: 1 } },
          { namespace: ['users', 'u2', 'memories'], key: 'k', value: { v: 1 } },
          { namespace: ['users', 'u2', 'memories'], key: 'k2', value: { v: 1 } },
          { namespace: ['docs'], key: 'k', value: { v: 1 } },
        ]);
      });

      it('lists every namespace holding items, sorted', async () => {
        expect(await store.listNamespaces()).toEqual([['docs'], ['users', 'u1', 'memories'], ['users', 'u1', 'prefs'], ['users', 'u2', 'memories']]);
      });

      it('selects by prefix and suffix, with * matching any one label', async () => {
        expect(await store.listNamespaces({ prefix: ['users', 'u1'] })).toEqual([['users', 'u1', 'memories'], ['users', 'u1', 'prefs']]);
        expect(await store.listNamespaces({ suffix: ['memories'] })).toEqual([['users', 'u1', 'memories'], ['users', 'u2', 'memories']]);
        expect(await store.listNamespaces({ prefix: ['users', '*', 'prefs'] })).toEqual([['users', 'u1', 'prefs']]);
        expect(await store.listNamespaces({ prefix: ['users'], suffix: ['prefs'] })).toEqual([['users', 'u1', 'prefs']]);
      });

      it('cuts namespaces to maxDepth and deduplicates them', async () => {
        expect(await store.listNamespaces({ maxDepth: 2 })).toEqual([['docs'], ['users', 'u1'], ['users', 'u2']]);
        expect(await store.listNamespaces({ prefix: ['users'], maxDepth: 1 })).toEqual([['users']]);
      });

      it('pages with limit and offset', async () => {
        expect(await store.listNamespaces({ limit: 2 })).toEqual([['docs'], ['users', 'u1', 'memories']]);
        expect(await store.listNamespaces({ limit: 2, offset: 2 })).toEqual([['users', 'u1', 'prefs'], ['users', 'u2', 'memories']]);
      });

      it('drops a namespace once its last item is deleted', async () => {
        await store.delete(['users', 'u2', 'memories'], 'k');
        expect(await store.listNamespaces({ suffix: ['memories'] })).toHaveLength(2);
        await store.delete(['users', 'u2', 'memories'], 'k2');
        expect(await store.listNamespaces({ suffix: ['memories'] })).toEqual([['users', 'u1', 'memories']]);
      });
    });

    describe('MnemoStore: batch', () => {
      it('answers each operation in order, reads seeing the state before the batch', async () => {
        await store.put(['n'], 'a', { v: 1 });
        const [got, , search, namespaces, after] = await store.batch([
          { namespace: ['n'], key: 'a' },
          { namespace: ['n'], key: 'a', value: { v: 2 } },
          { namespacePrefix: ['n'], limit: 10, offset: 0 },
          { limit: 10, offset: 0 },
          { namespace: ['n'], key: 'a' },
        ] as const);
        expect(got?.value).toEqual({ v: 1 });
        expect(search.map((i) => i.value)).toEqual([{ v: 1 }]);
        expect(namespaces).toEqual([['n']]);
        expect(after?.value).toEqual({ v: 1 });
        expect((await store.get(['n'], 'a'))?.value).toEqual({ v: 2 });
      });

      it('for one namespace and key the last put of a batch wins', async () => {
        await store.batch([
          { namespace: ['n'], key: 'a', value: { v: 1 } },
          { namespace: ['n'], key: 'a', value: null },
          { namespace: ['n'], key: 'a', value: { v: 3 } },
        ]);
        expect((await store.get(['n'], 'a'))?.value).toEqual({ v: 3 });
      });

      it('concurrent batches on one namespace keep its item count exact', async () => {
        await Promise.all(Array.from({ length: 20 }, (_, i) => store.put(['n'], `k${i}`, { i })));
        await Promise.all(Array.from({ length: 10 }, (_, i) => store.delete(['n'], `k${i * 2}`)));
        expect(await store.search(['n'], { limit: 100 })).toHaveLength(10);
        await Promise.all(Array.from({ length: 10 }, (_, i) => store.delete(['n'], `k${i * 2 + 1}`)));
        expect(await store.listNamespaces()).toEqual([]);
      });
    });
  });
}
