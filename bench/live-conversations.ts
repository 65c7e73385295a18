/**
 * What a live conversation costs in memory: N conversations with one appended message each,
 * all their actors live, in a fresh process per N (`--expose-gc`); RSS and heap growth per
 * conversation, against the 4 KB target and an Erlang process (~2.7 KB).
 *
 *   npx tsx bench/live-conversations.ts [N ...] [--census] [--spaces]     (default N: 10000 100000)
 *
 * `--census` adds, per N, the heap's growth per conversation by constructor name (a heap
 * snapshot before and after; slow above ~20k); `--spaces` where the growth went per V8 heap space.
 */
import { runChild } from './suite/child/spawn-child.ts';
import type { LiveAnswer } from './suite/child/live-conversations.ts';
import { withTempDir } from './suite/temp-dir.ts';

const TARGET = 4096;
const ERLANG = 2700;
const args = process.argv.slice(2);
const census = args.includes('--census');
const sizes = args.filter((a) => /^\d+$/.test(a)).map(Number);

for (const n of sizes.length > 0 ? sizes : [10_000, 100_000]) {
  const a = await withTempDir('live', (dir) => runChild<LiveAnswer>({ kind: 'live', dir, conversations: n, census }, 1_800_000));
  const rss = (a.rss - a.baselineRss) / n;
  const mapped = (a.mappedRss - a.baselineMappedRss) / n;
  const heap = (a.heapUsed - a.baselineHeap) / n;
  const live = rss - mapped;
  console.log(
    `${n.toLocaleString('en-US')} live conversations (${a.liveActors} actors, appends ${a.appendSeconds.toFixed(1)} s): ` +
      `RSS ${rss.toFixed(0)} B/conv (LMDB pages ${mapped.toFixed(0)}, the rest ${live.toFixed(0)} = ${(live / TARGET).toFixed(2)}x the 4 KB target, ${(live / ERLANG).toFixed(2)}x Erlang), heap ${heap.toFixed(0)} B/conv`,
  );
  if (args.includes('--spaces')) {
    for (const [space, v] of Object.entries(a.spaces)) {
      console.log(`  ${space.padEnd(28)} reserved ${((v.size - v.baselineSize) / n).toFixed(0).padStart(6)} B/conv  used ${((v.used - v.baselineUsed) / n).toFixed(0).padStart(6)} B/conv`);
    }
    console.log(`  malloced by V8 ${((a.malloced - a.baselineMalloced) / n).toFixed(0)} B/conv`);
  }
  for (const row of a.census ?? []) console.log(`  ${row.bytesPerConversation.toFixed(1).padStart(8)} B  ${String(row.count).padStart(8)}  ${row.name}`);
}
