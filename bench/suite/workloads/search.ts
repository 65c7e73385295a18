import { COMMON_KEYWORD, RARE_KEYWORD } from '../records.ts';
import { Samples } from '../stats.ts';
import { withTempDir } from '../temp-dir.ts';
import type { ResultRow } from '../result-types.ts';
import type { AdapterId, LogAdapter } from '../types.ts';
import type { Workload } from '../workload.ts';
import { fill } from './tail.ts';

/**
 * Keyword search (case-insensitive substring on content, the most recent 20 matches) against
 * the corpus size (one session of N messages): Mnemo's recall `searchSession` (newest first,
 * stops at 20; scans above 20 000 rows go to the search worker pool), raw lmdb-js doing the same
 * reverse scan inline (the limit), the demo's JSONL scan (reads the whole file) and SQLite LIKE
 * on `json_extract(json, '$.content')` ordered by id descending.
 *
 * Two keywords: a COMMON one (every 20th message: 20 hits are found near the end) and a RARE
 * one (only message 4: every engine has to scan the whole session).
 */
const SEARCHERS: readonly AdapterId[] = ['raw-lmdb', 'mnemo-lmdb', 'jsonl', 'sqlite'];

export const searchWorkload: Workload = {
  id: 'search',
  title: 'Keyword search (most recent 20) vs corpus size',
  async run(ctx) {
    const started = performance.now();
    const { lengths, limit, searches, capSeconds } = ctx.sizes.search;
    const rows: ResultRow[] = [];
    const notes: string[] = [];
    const adapters = ctx.adapters.filter((a) => SEARCHERS.includes(a.info.id));
    for (const length of lengths) {
      for (const factory of adapters) {
        const step = ctx.progress.step(`search ${factory.info.label} @ ${length.toLocaleString('en-US')} msgs`, searches * 2);
        const m = await withTempDir(factory.info.id, async (dir) => {
          const adapter = await factory.open(dir);
          try {
            await fill(adapter, 'corpus', length);
            const common = await timeSearches(adapter, COMMON_KEYWORD, limit, searches, capSeconds, step.tick);
            const rare = await timeSearches(adapter, RARE_KEYWORD, limit, searches, capSeconds, step.tick);
            return { common, rare };
          } finally {
            await adapter.close();
          }
        });
        step.done();
        const expectedCommon = Math.min(limit, Math.floor(length / 20));
        const wrong = [
          m.common.hits !== expectedCommon ? `common: ${m.common.hits} hits, expected ${expectedCommon}` : '',
          m.rare.hits !== 1 ? `rare: ${m.rare.hits} hits, expected 1` : '',
        ].filter((s) => s !== '');
        if (wrong.length > 0) notes.push(`${factory.info.label} @ ${length}: ${wrong.join('; ')}`);
        rows.push({
          adapter: factory.info.id,
          x: length,
          metrics: {
            rareP50Ms: m.rare.summary.p50Ms,
            rareP99Ms: m.rare.summary.p99Ms,
            commonP50Ms: m.common.summary.p50Ms,
            commonP99Ms: m.common.summary.p99Ms,
          },
          ...(wrong.length > 0 ? { note: 'wrong results' } : {}),
        });
      }
    }
    return {
      id: 'search',
      title: this.title,
      description: `Latency of one keyword search returning the most recent ${limit} matching messages of a session, by the session's size. "rare" matches only one early message (a full scan for everyone); "common" matches every 20th message (an engine that scans newest-first can stop early). Lower is better.`,
      xLabel: 'corpus size (messages)',
      params: { lengths, limit, searches, capSeconds, common: COMMON_KEYWORD, rare: RARE_KEYWORD },
      columns: [
        { key: 'rareP50Ms', label: 'rare p50 ms', digits: 2 },
        { key: 'rareP99Ms', label: 'rare p99 ms', digits: 2 },
        { key: 'commonP50Ms', label: 'common p50 ms', digits: 3 },
        { key: 'commonP99Ms', label: 'common p99 ms', digits: 3 },
      ],
      ratios: [
        { metric: 'rareP50Ms', baseline: 'mnemo-lmdb', label: 'rare time ÷ Mnemo' },
        { metric: 'commonP50Ms', baseline: 'mnemo-lmdb', label: 'common time ÷ Mnemo' },
      ],
      rows,
      charts: [
        { file: 'search-rare.svg', kind: 'lines', title: 'Search p50, rare keyword (full scan) vs corpus size', metric: 'rareP50Ms', yLabel: 'p50 ms (log)', logY: true, logX: true },
        { file: 'search-common.svg', kind: 'lines', title: 'Search p50, common keyword (most recent 20) vs corpus size', metric: 'commonP50Ms', yLabel: 'p50 ms (log)', logY: true, logX: true },
      ],
      notes: ['Ratios here are time ÷ Mnemo: above 1× is slower than Mnemo.', ...notes],
      seconds: (performance.now() - started) / 1000,
    };
  },
};

async function timeSearches(
  adapter: LogAdapter,
  keyword: string,
  limit: number,
  count: number,
  capSeconds: number,
  tick: (n?: number) => void,
): Promise<{ summary: ReturnType<Samples['summary']>; hits: number }> {
  const search = adapter.search!.bind(adapter);
  let hits = 0;
  for (let i = 0; i < 3; i++) hits = (await search('corpus', keyword, limit)).length;
  const samples = new Samples();
  const deadline = performance.now() + capSeconds * 1000;
  for (let i = 0; i < count && performance.now() < deadline; i++) {
    const s = performance.now();
    await search('corpus', keyword, limit);
    samples.add(performance.now() - s);
    tick();
  }
  return { summary: samples.summary(), hits };
}
