/**
 * Building a ranked index over one user's history, the two builds the suite compares: Mnemo's
 * bulk rebuild (`rebuildUserIndex`, on the main thread: no search pool) over rows already in
 * LMDB (a user whose rows predate the index), and SQLite FTS5 (`porter unicode61`, WAL,
 * synchronous OFF, one transaction) over the same texts. Only the build is timed. Used by the
 * suite's `index-build` and `ranked` workloads and by `bench/index-build.ts`, which passes the
 * sources of another checkout as `IndexSources` to time before and after in one run.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { acquireEnvironment } from '../../src/memory/lmdb/lmdb-environment.ts';
import { putDailyRow } from '../../src/recall/storage/lmdb/daily-store.ts';
import { commit, openRecallDbs } from '../../src/recall/storage/lmdb/recall-dbs.ts';
import { rebuildUserIndex } from '../../src/recall/storage/lmdb/search/rebuild.ts';
import type { SearchCorpus } from './search-corpus.ts';
import { withTempDir } from './temp-dir.ts';

/** The user every build indexes. */
export const INDEX_USER = 'bench-user';

/** The functions a Mnemo build needs; `CURRENT_SOURCES` are this checkout's. */
export interface IndexSources {
  acquireEnvironment: typeof acquireEnvironment;
  openRecallDbs: typeof openRecallDbs;
  commit: typeof commit;
  putDailyRow: typeof putDailyRow;
  rebuildUserIndex: typeof rebuildUserIndex;
}

export const CURRENT_SOURCES: IndexSources = { acquireEnvironment, openRecallDbs, commit, putDailyRow, rebuildUserIndex };

/** Writes `texts` as the user's daily rows (5,000 per transaction), no postings yet. */
export async function writeCorpusRows(src: IndexSources, dbs: ReturnType<typeof openRecallDbs>, corpus: SearchCorpus, texts: readonly string[]): Promise<void> {
  await src.commit(dbs, () => dbs.counters.put([INDEX_USER, 'daily-rows'], 1));
  for (let start = 0; start < texts.length; start += 5_000) {
    await src.commit(dbs, () => {
      for (let i = start; i < Math.min(texts.length, start + 5_000); i++) {
        const day = corpus.dayOf(i);
        src.putDailyRow(dbs, INDEX_USER, { day, ts: `${day}T10:00:00`, role: i % 2 ? 'assistant' : 'user', content: texts[i]!, session_id: 's', session_message_id: i + 1 });
      }
    });
  }
}

/** Milliseconds of one Mnemo rebuild over `texts`, in a fresh environment (removed after). */
export function mnemoRebuildMs(src: IndexSources, corpus: SearchCorpus, texts: readonly string[]): Promise<number> {
  return withTempDir('index-build', async (dir) => {
    const lease = src.acquireEnvironment(dir, { noSync: true, mapSize: 64 * 2 ** 30 });
    const dbs = src.openRecallDbs(lease);
    try {
      await writeCorpusRows(src, dbs, corpus, texts);
      const t0 = performance.now();
      const indexed = await src.rebuildUserIndex({ dbs, pool: undefined }, INDEX_USER);
      const ms = performance.now() - t0;
      // A row without a term (one in a few thousand of the corpus) is no document.
      if (indexed < texts.length * 0.99) throw new Error(`rebuild indexed ${indexed} of ${texts.length}`);
      return ms;
    } finally {
      // lmdb-js: yield a turn before closing (see DESIGN.md, storage).
      await new Promise((r) => setTimeout(r, 0));
      await lease.release();
    }
  });
}

/** An FTS5 table `t` over `texts` in `dir`/fts.sqlite, open for queries, and its build time. */
export function buildFts5(dir: string, texts: readonly string[]): { sqlite: Database.Database; ms: number } {
  const sqlite = new Database(join(dir, 'fts.sqlite'));
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = OFF');
  sqlite.exec(`CREATE VIRTUAL TABLE t USING fts5(content, tokenize = 'porter unicode61')`);
  const insert = sqlite.prepare('INSERT INTO t(rowid, content) VALUES (?, ?)');
  const t0 = performance.now();
  sqlite.transaction(() => {
    for (let i = 0; i < texts.length; i++) insert.run(i + 1, texts[i]!);
  })();
  return { sqlite, ms: performance.now() - t0 };
}

/** Milliseconds of one FTS5 build over `texts`, in a fresh directory (removed after). */
export function fts5BuildMs(texts: readonly string[]): Promise<number> {
  return withTempDir('index-build-fts5', async (dir) => {
    const { sqlite, ms } = buildFts5(dir, texts);
    sqlite.close();
    return ms;
  });
}
