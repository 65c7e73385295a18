import { runChild } from '../child/spawn-child.ts';
import type { LiveAnswer } from '../child/child-task.ts';
import { withTempDir } from '../temp-dir.ts';
import type { ResultRow } from '../result-types.ts';
import type { Workload } from '../workload.ts';

/**
 * What one live Mnemo conversation costs in memory (child/live-conversations.ts): N
 * conversations with one appended message each, all their actors live, in a fresh process per
 * N; RSS growth per conversation without LMDB's mapped pages (the stored messages), as a ratio
 * to the 4 KB target and to an Erlang process (~2.7 KB, what beamai's session process costs).
 * Mnemo only: the other stores keep no per-conversation process.
 */
const TARGET_BYTES = 4096;
const ERLANG_PROCESS_BYTES = 2700;

export const liveWorkload: Workload = {
  id: 'live',
  title: 'Memory per live conversation',
  async run(ctx) {
    const started = performance.now();
    const { conversations } = ctx.sizes.live;
    const rows: ResultRow[] = [];
    for (const n of conversations) {
      const step = ctx.progress.step(`live conversations @ ${n.toLocaleString('en-US')}`, 1);
      const a = await withTempDir('live', (dir) => runChild<LiveAnswer>({ kind: 'live', dir, conversations: n, census: false }, 1_800_000));
      step.tick();
      step.done();
      const mapped = (a.mappedRss - a.baselineMappedRss) / n;
      const rss = (a.rss - a.baselineRss) / n;
      const live = rss - mapped;
      rows.push({
        adapter: 'mnemo-lmdb',
        x: n,
        metrics: {
          bytesPerConversation: live,
          vsTarget: live / TARGET_BYTES,
          vsErlang: live / ERLANG_PROCESS_BYTES,
          rssPerConversation: rss,
          mappedPerConversation: mapped,
          heapPerConversation: (a.heapUsed - a.baselineHeap) / n,
          liveActors: a.liveActors,
        },
      });
    }
    return {
      id: 'live',
      title: this.title,
      description:
        'RSS growth per live conversation (one appended message each, every actor live, after GC), without the pages of LMDB’s mapped data file the stored messages took; against the 4 KB target and an Erlang process (~2.7 KB). Lower is better.',
      xLabel: 'live conversations',
      params: { conversations, targetBytes: TARGET_BYTES, erlangProcessBytes: ERLANG_PROCESS_BYTES },
      columns: [
        { key: 'bytesPerConversation', label: 'RSS B/conv', digits: 0 },
        { key: 'vsTarget', label: '÷ 4 KB target', digits: 2 },
        { key: 'vsErlang', label: '÷ Erlang process', digits: 2 },
        { key: 'rssPerConversation', label: 'with LMDB pages B/conv', digits: 0 },
        { key: 'heapPerConversation', label: 'JS heap B/conv', digits: 0 },
      ],
      ratios: [],
      rows,
      charts: [],
      notes: [
        'A conversation at rest hibernates: no xstate actor, only its lane, context and the shell’s records (README, Memory per live conversation).',
        'The process is warmed on a runtime of its own first, so compiled code and the grown young generation are in the baseline.',
      ],
      seconds: (performance.now() - started) / 1000,
    };
  },
};
