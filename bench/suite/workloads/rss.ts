import { runChild } from '../child/spawn-child.ts';
import type { RssAnswer } from '../child/child-task.ts';
import { withTempDir } from '../temp-dir.ts';
import type { ResultRow } from '../result-types.ts';
import type { Workload } from '../workload.ts';

/**
 * Resident memory against conversations touched: in a fresh process per point, a store is
 * opened, warmed on one conversation, garbage-collected, and its RSS taken; then N
 * conversations are touched (two appends and a tail read each, 100 at a time), GC again, RSS
 * again. The growth per conversation is what an idle conversation keeps costing.
 */
const MiB = 1024 * 1024;

export const rssWorkload: Workload = {
  id: 'rss',
  title: 'Resident memory vs conversations touched',
  async run(ctx) {
    const started = performance.now();
    const { touched, concurrency, capSeconds } = ctx.sizes.rss;
    const rows: ResultRow[] = [];
    for (const n of touched) {
      for (const factory of ctx.adapters) {
        const step = ctx.progress.step(`rss ${factory.info.label} @ ${n.toLocaleString('en-US')} conversations`, 1);
        const answer = await withTempDir(factory.info.id, (dir) =>
          runChild<RssAnswer>({ kind: 'rss', adapter: factory.info.id, dir, touched: n, concurrency, capSeconds }),
        );
        step.tick();
        step.done();
        rows.push({
          adapter: factory.info.id,
          x: n,
          metrics: {
            rssMiB: answer.rss / MiB,
            growthMiB: (answer.rss - answer.baselineRss) / MiB,
            bytesPerConversation: (answer.rss - answer.baselineRss) / Math.max(1, answer.touched),
            heapGrowthMiB: (answer.heapUsed - answer.baselineHeap) / MiB,
            touched: answer.touched,
          },
          ...(answer.touched < n ? { note: `capped at ${capSeconds} s after ${answer.touched.toLocaleString('en-US')} conversations` } : {}),
        });
      }
    }
    return {
      id: 'rss',
      title: this.title,
      description:
        'Process resident memory after N conversations were each touched (2 appends + a tail read), and its growth over the store just opened (after GC). Lower is better.',
      xLabel: 'conversations touched',
      params: { touched, concurrency, capSeconds },
      columns: [
        { key: 'rssMiB', label: 'RSS MiB', digits: 1 },
        { key: 'growthMiB', label: 'RSS growth MiB', digits: 1 },
        { key: 'bytesPerConversation', label: 'growth B/conv', digits: 0 },
        { key: 'heapGrowthMiB', label: 'JS heap growth MiB', digits: 1 },
      ],
      ratios: [{ metric: 'rssMiB', baseline: 'mnemo-lmdb', label: 'RSS ÷ Mnemo' }],
      rows,
      charts: [{ file: 'rss.svg', kind: 'lines', title: 'Resident memory vs conversations touched', metric: 'rssMiB', yLabel: 'RSS MiB (log)', logY: true, logX: true }],
      notes: [
        'Mnemo keeps an actor per conversation until it has been idle for idleMs (default 60 s); the figure is taken while they are all alive.',
        'RSS includes the pages of memory-mapped files a process touched (LMDB maps its data file).',
      ],
      seconds: (performance.now() - started) / 1000,
    };
  },
};
