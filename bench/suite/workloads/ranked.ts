import { ENGINES, QUERY_CLASSES, runRankedSearch, type Engine } from '../ranked-search-run.ts';
import type { ResultRow } from '../result-types.ts';
import type { AdapterId } from '../types.ts';
import type { Workload } from '../workload.ts';

/**
 * Ranked search over one user's messages (ranked-search-run.ts): Mnemo's BM25 index in LMDB
 * against SQLite FTS5 bm25 and MiniSearch on the same corpus and queries, top 10, p50 / p95
 * per query class, build time, and Mnemo's index bytes against the text's.
 */
const ROW_ID: Record<Engine, AdapterId> = { mnemo: 'mnemo-lmdb', fts5: 'sqlite-fts5', minisearch: 'minisearch' };

export const rankedWorkload: Workload = {
  id: 'ranked',
  title: 'Ranked search (top 10) over one user, vs SQLite FTS5 and MiniSearch',
  async run(ctx) {
    const started = performance.now();
    const { size, perClass } = ctx.sizes.ranked;
    const step = ctx.progress.step(`ranked @ ${size.toLocaleString('en-US')} msgs`, 5);
    const r = await runRankedSearch(size, perClass, () => step.tick());
    step.done();
    const rows: ResultRow[] = ENGINES.map((engine) => {
      const metrics: Record<string, number | null> = {};
      for (const c of QUERY_CLASSES) {
        metrics[`${c}P50Ms`] = r.query[engine][c].p50Ms;
        metrics[`${c}P95Ms`] = r.query[engine][c].p95Ms;
        metrics[`${c}Answered`] = r.answered[engine][c] / perClass;
      }
      metrics.buildS = r.buildMs[engine] / 1000;
      metrics.indexToText = engine === 'mnemo' ? r.mnemoIndexBytes / r.textBytes : null;
      return { adapter: ROW_ID[engine], x: size, metrics };
    });
    const chineseNote = 'FTS5 (unicode61) and MiniSearch keep a run of Han characters as one token: a Chinese query finds only messages holding that exact run, usually none (the "answered" column); Mnemo cuts bigrams.';
    return {
      id: 'ranked',
      title: this.title,
      description: `Latency of one ranked query (top 10 by BM25, OR of the query's terms) over ${size.toLocaleString('en-US')} messages of one user (English-like Zipf text, one message in ten Chinese), ${perClass} queries per class, the engines taking turns. rare: one rare word; common: one frequent word; multi: three mid-frequency words; chinese: two Chinese words. Mnemo reads its LMDB index and fetches each hit's row and snippet; FTS5 returns rowid and content; MiniSearch (in memory) returns ids. Lower is better; index ÷ text: Mnemo's index pages over the text's UTF-8 bytes.`,
      xLabel: 'messages',
      params: { size, perClass },
      columns: [
        ...QUERY_CLASSES.flatMap((c) => [
          { key: `${c}P50Ms`, label: `${c} p50 ms`, digits: 3 },
          { key: `${c}P95Ms`, label: `${c} p95 ms`, digits: 2 },
        ]),
        { key: 'chineseAnswered', label: 'chinese answered', digits: 2 },
        { key: 'buildS', label: 'build s', digits: 1 },
        { key: 'indexToText', label: 'index ÷ text', digits: 2 },
      ],
      ratios: QUERY_CLASSES.map((c) => ({ metric: `${c}P50Ms`, baseline: 'mnemo-lmdb' as const, label: `${c} ÷ Mnemo` })),
      rows,
      charts: [],
      notes: [chineseNote, `Mnemo's index: ${Object.entries(r.indexBytesByDb).map(([k, v]) => `${k} ${(v / 2 ** 20).toFixed(1)} MiB`).join(', ')} for ${(r.textBytes / 2 ** 20).toFixed(1)} MiB of text.`],
      seconds: (performance.now() - started) / 1000,
    };
  },
};
