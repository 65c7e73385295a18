import { CURRENT_SOURCES, fts5BuildMs, mnemoRebuildMs } from '../index-build-run.ts';
import type { ResultRow } from '../result-types.ts';
import { searchCorpus } from '../search-corpus.ts';
import type { Workload } from '../workload.ts';

/**
 * Building the ranked index of one user's history (index-build-run.ts): Mnemo's bulk rebuild
 * over rows already stored against SQLite FTS5's build over the same texts, the two taking
 * turns `repeats` times; each row is the median build (min and max beside it).
 */
export const indexBuildWorkload: Workload = {
  id: 'index-build',
  title: 'Ranked index build of one user, vs SQLite FTS5',
  async run(ctx) {
    const started = performance.now();
    const { size, repeats } = ctx.sizes.indexBuild;
    const corpus = searchCorpus(42);
    const texts = Array.from({ length: size }, (_, i) => corpus.message(i));
    const mnemo: number[] = [];
    const fts5: number[] = [];
    const step = ctx.progress.step(`index-build @ ${size.toLocaleString('en-US')} msgs`, repeats * 2);
    for (let r = 0; r < repeats; r++) {
      mnemo.push(await mnemoRebuildMs(CURRENT_SOURCES, corpus, texts));
      step.tick();
      fts5.push(await fts5BuildMs(texts));
      step.tick();
    }
    step.done();
    const row = (adapter: ResultRow['adapter'], ms: number[]): ResultRow => {
      const sorted = [...ms].sort((a, b) => a - b);
      return {
        adapter,
        x: size,
        metrics: { buildS: sorted[Math.floor((sorted.length - 1) / 2)]! / 1000, minBuildS: sorted[0]! / 1000, maxBuildS: sorted[sorted.length - 1]! / 1000, rowsPerSec: (size * 1000) / sorted[Math.floor((sorted.length - 1) / 2)]! },
      };
    };
    return {
      id: 'index-build',
      title: this.title,
      description: `Seconds to build the ranked index of ${size.toLocaleString('en-US')} messages of one user (the ranked workload's corpus: English-like Zipf text, one message in ten Chinese): Mnemo's bulk rebuild (rebuildUserIndex, main thread, over rows already in LMDB) and SQLite FTS5 (porter unicode61, one transaction, synchronous=OFF) over the same texts. Only the build is timed. Lower is better.`,
      xLabel: 'messages',
      params: { size, repeats },
      columns: [
        { key: 'buildS', label: 'build s', digits: 2 },
        ...(repeats > 1
          ? [
              { key: 'minBuildS', label: 'min', digits: 2 },
              { key: 'maxBuildS', label: 'max', digits: 2 },
            ]
          : []),
        { key: 'rowsPerSec', label: 'rows/s', digits: 0 },
      ],
      ratios: [{ metric: 'buildS', baseline: 'sqlite-fts5', label: 'time ÷ FTS5' }],
      rows: [row('mnemo-lmdb', mnemo), row('sqlite-fts5', fts5)],
      charts: [],
      notes: [
        'The corpus is synthetic (bench/suite/search-corpus.ts, seed 42), not LoCoMo\'s own turns: the same texts for both engines at any size. `npx tsx bench/index-build.ts` times the same builds plus a whole Demo folder import, and takes a `--baseline` checkout.',
        ...(repeats > 1 ? [`Median of ${repeats} builds each, the two engines taking turns.`] : []),
      ],
      seconds: (performance.now() - started) / 1000,
    };
  },
};
