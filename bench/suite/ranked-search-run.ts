/**
 * Ranked search over one user's corpus (search-corpus.ts), side by side in one run: Mnemo's
 * BM25 index in LMDB (src/recall/search/, built by the bulk rebuild path: rows first, then
 * `rebuildUserIndex`), SQLite FTS5's bm25 (index-build-run.ts builds both, FTS5 on disk in the
 * same temp dir) and MiniSearch (in memory, its default tokenizer, BM25+). Each engine answers
 * the same queries, top 10; the classes:
 *
 * - rare: one word seen in a few dozen messages;
 * - common: one of the most frequent non-stop words (tens of thousands of matches at 1M);
 * - multi: three mid-frequency words (OR in all three engines);
 * - chinese: two Chinese words (4 characters: Mnemo's bigrams; FTS5 and MiniSearch see a run
 *   of Han characters as one token, so they only find messages holding exactly that run).
 *
 * The query classes interleave (rare, common, multi, chinese, rare, ...), one pass to warm up,
 * one measured. Also: index bytes (the search dbs' pages) against the text's UTF-8 bytes, and
 * build times. Used by the suite (workloads/ranked.ts) and by `bench/search-rank.ts`.
 */
import { performance } from 'node:perf_hooks';
import MiniSearch from 'minisearch';
import { acquireEnvironment } from '../../src/memory/lmdb/lmdb-environment.ts';
import { rankedDocs } from '../../src/recall/storage/lmdb/search/bm25-query.ts';
import { queryTerms } from '../../src/recall/search/documents.ts';
import { rebuildUserIndex } from '../../src/recall/storage/lmdb/search/rebuild.ts';
import type { SearchDbs } from '../../src/recall/storage/lmdb/search/search-dbs.ts';
import { openRecallDbs } from '../../src/recall/storage/lmdb/recall-dbs.ts';
import { buildFts5, CURRENT_SOURCES, INDEX_USER, writeCorpusRows } from './index-build-run.ts';
import { searchCorpus } from './search-corpus.ts';
import { Samples, type LatencySummary } from './stats.ts';
import { withTempDir } from './temp-dir.ts';

export const QUERY_CLASSES = ['rare', 'common', 'multi', 'chinese'] as const;
export type QueryClass = (typeof QUERY_CLASSES)[number];
export const ENGINES = ['mnemo', 'fts5', 'minisearch'] as const;
export type Engine = (typeof ENGINES)[number];

export interface RankedRun {
  size: number;
  textBytes: number;
  mnemoIndexBytes: number;
  indexBytesByDb: Record<string, number>;
  buildMs: Record<Engine, number>;
  query: Record<Engine, Record<QueryClass, LatencySummary>>;
  /** Queries with at least one hit, per engine and class (out of `perClass`). */
  answered: Record<Engine, Record<QueryClass, number>>;
  perClass: number;
}

export function searchDbBytes(search: SearchDbs): Record<string, number> {
  const out: Record<string, number> = {};
  // `pendingText` is a second handle on the postings db: counted once, as `postings`.
  for (const name of ['postings', 'meta'] as const) {
    const db = search[name];
    const s = (db as SearchDbs['meta']).getStats() as { pageSize: number; treeBranchPageCount: number; treeLeafPageCount: number; overflowPages: number };
    out[name] = (s.treeBranchPageCount + s.treeLeafPageCount + s.overflowPages) * s.pageSize;
  }
  return out;
}

export async function runRankedSearch(size: number, perClass: number, log: (line: string) => void = () => {}): Promise<RankedRun> {
  const corpus = searchCorpus(42);
  const texts: string[] = [];
  let textBytes = 0;
  for (let i = 0; i < size; i++) {
    const t = corpus.message(i);
    texts.push(t);
    textBytes += Buffer.byteLength(t);
  }
  const queries: { cls: QueryClass; q: string }[] = [];
  for (let i = 0; i < perClass; i++) {
    queries.push({ cls: 'rare', q: corpus.rare() });
    queries.push({ cls: 'common', q: corpus.common() });
    queries.push({ cls: 'multi', q: `${corpus.mid()} ${corpus.mid()} ${corpus.mid()}` });
    queries.push({ cls: 'chinese', q: `${corpus.chinese()}` });
  }
  return withTempDir('ranked', async (dir) => {
    const lease = acquireEnvironment(dir, { noSync: true, mapSize: 64 * 2 ** 30 });
    const dbs = openRecallDbs(lease);
    try {
      // Rows first, for a user with "old" rows (not live: no postings yet), then the bulk rebuild.
      log(`ranked: writing ${size} rows`);
      await writeCorpusRows(CURRENT_SOURCES, dbs, corpus, texts);
      log('ranked: rebuilding the Mnemo index');
      let t0 = performance.now();
      await rebuildUserIndex({ dbs, pool: undefined }, INDEX_USER);
      const mnemoBuild = performance.now() - t0;
      const indexBytesByDb = searchDbBytes(dbs.search);

      log('ranked: building FTS5');
      const { sqlite, ms: ftsBuild } = buildFts5(dir, texts);
      const ftsQuery = sqlite.prepare('SELECT rowid, content, bm25(t) AS score FROM t WHERE t MATCH ? ORDER BY score LIMIT 10');

      log('ranked: building MiniSearch');
      const mini = new MiniSearch<{ id: number; content: string }>({ fields: ['content'], storeFields: [] });
      t0 = performance.now();
      for (let start = 0; start < size; start += 10_000) {
        const batch: { id: number; content: string }[] = [];
        for (let i = start; i < Math.min(size, start + 10_000); i++) batch.push({ id: i + 1, content: texts[i]! });
        mini.addAll(batch);
      }
      const miniBuild = performance.now() - t0;
      texts.length = 0;

      const run: Record<Engine, (q: string) => number> = {
        mnemo: (q) => rankedDocs(dbs, { userId: INDEX_USER, terms: queryTerms(q), filters: {}, limit: 10 }).length,
        fts5: (q) => (ftsQuery.all(q.split(' ').map((w) => `"${w}"`).join(' OR ')) as unknown[]).length,
        minisearch: (q) => mini.search(q).slice(0, 10).length,
      };
      const samples = Object.fromEntries(ENGINES.map((e) => [e, Object.fromEntries(QUERY_CLASSES.map((c) => [c, new Samples()]))])) as Record<Engine, Record<QueryClass, Samples>>;
      const answered = Object.fromEntries(ENGINES.map((e) => [e, Object.fromEntries(QUERY_CLASSES.map((c) => [c, 0]))])) as Record<Engine, Record<QueryClass, number>>;
      log(`ranked: ${queries.length} queries × ${ENGINES.length} engines × 2 passes`);
      for (let pass = 0; pass < 2; pass++) {
        for (const [i, { cls, q }] of queries.entries()) {
          // Engines take turns, rotating who goes first.
          for (let k = 0; k < ENGINES.length; k++) {
            const engine = ENGINES[(i + k) % ENGINES.length]!;
            const s = performance.now();
            const hits = run[engine](q);
            const ms = performance.now() - s;
            if (pass === 1) {
              samples[engine][cls].add(ms);
              if (hits > 0) answered[engine][cls]++;
            }
          }
        }
      }
      sqlite.close();
      const query = Object.fromEntries(ENGINES.map((e) => [e, Object.fromEntries(QUERY_CLASSES.map((c) => [c, samples[e][c].summary()]))])) as Record<Engine, Record<QueryClass, LatencySummary>>;
      return {
        size,
        textBytes,
        mnemoIndexBytes: Object.values(indexBytesByDb).reduce((a, b) => a + b, 0),
        indexBytesByDb,
        buildMs: { mnemo: mnemoBuild, fts5: ftsBuild, minisearch: miniBuild },
        query,
        answered,
        perClass,
      };
    } finally {
      await new Promise((r) => setTimeout(r, 0));
      await lease.release();
    }
  });
}
