import { lmdbRecall } from '../../support/lmdb-recall.ts';
import { performance } from 'node:perf_hooks';
import { acquireEnvironment } from '../../../src/memory/lmdb/lmdb-environment.ts';
import { createLmdbStore } from '../../../src/memory/lmdb/lmdb-store.ts';
import { createRecall } from '../../../src/recall/index.ts';
import { storedRowText as dailyRowText } from '../../../src/recall/storage/lmdb/search/search-index.ts';
import { commit, HIGH, openRecallDbs } from '../../../src/recall/storage/lmdb/recall-dbs.ts';
import { searchDbBytes } from '../ranked-search-run.ts';
import { searchCorpus } from '../search-corpus.ts';
import { median } from '../stats.ts';
import { withTempDir } from '../temp-dir.ts';
import type { Workload } from '../workload.ts';

/**
 * What the ranked index costs the write path: durable offline chat turns through recall
 * (`recall.chat`: the user's and the assistant's session rows, their daily mirror rows, the
 * dialogue log; fsync on), `conversations` at once, for a user whose writes index themselves
 * and for a user whose index is off (rows from before the index: not live), the two taking
 * turns run after run (A B B A ...), the first pair discarded as warm-up. Reported: turns/s of
 * each (median run), the throughput the index costs (1 − indexed ÷ unindexed), the main
 * thread's CPU time per turn of each and the index's share of it (less noisy than wall time
 * on a shared machine), and the indexed user's index bytes against their text.
 */
export const upkeepWorkload: Workload = {
  id: 'upkeep',
  title: 'Index upkeep: chat turns with and without the ranked index',
  async run(ctx) {
    const started = performance.now();
    const { conversations, turns, repeats } = ctx.sizes.upkeep;
    const step = ctx.progress.step(`upkeep @ ${conversations} conversations`, 2 * (repeats + 1));
    const corpus = searchCorpus(7);
    const m = await withTempDir('upkeep', async (dir) => {
      const env = acquireEnvironment(dir);
      const memory = createLmdbStore({ path: dir });
      const recall = lmdbRecall({ memory, env, timeZone: 'UTC' });
      const dbs = openRecallDbs(env);
      try {
        await commit(dbs, () => dbs.counters.put(['off', 'daily-rows'], 1)); // not live: no index
        let next = 0;
        const run = async (user: 'on' | 'off') => {
          const base = next;
          next += conversations * turns;
          const c0 = process.cpuUsage();
          const t0 = performance.now();
          await Promise.all(
            Array.from({ length: conversations }, async (_, c) => {
              for (let k = 0; k < turns; k++) {
                await recall.chat({ userId: user, sessionId: `c${c}`, message: corpus.message(base + c * turns + k) });
              }
            }),
          );
          const wall = performance.now() - t0;
          const cpu = process.cpuUsage(c0);
          step.tick();
          return { perSecond: (conversations * turns) / (wall / 1000), cpuMsPerTurn: (cpu.user + cpu.system) / 1000 / (conversations * turns) };
        };
        await run('off');
        await run('on');
        const on: { perSecond: number; cpuMsPerTurn: number }[] = [];
        const off: { perSecond: number; cpuMsPerTurn: number }[] = [];
        for (let r = 0; r < repeats; r++) {
          if (r % 2 === 0) {
            off.push(await run('off'));
            on.push(await run('on'));
          } else {
            on.push(await run('on'));
            off.push(await run('off'));
          }
        }
        const bytes = searchDbBytes(dbs.search);
        // The indexed text: every daily row of the indexed user (both sides of each turn).
        let textBytes = 0;
        for (const { value } of dbs.daily.getRange({ start: ['on'], end: ['on', HIGH] })) textBytes += Buffer.byteLength(dailyRowText(value));
        return { on, off, textBytes, bytes };
      } finally {
        await recall.close();
        await memory.close();
        await new Promise((r) => setTimeout(r, 0));
        await env.release();
      }
    });
    step.done();
    const onRate = median(m.on.map((r) => r.perSecond));
    const offRate = median(m.off.map((r) => r.perSecond));
    const onCpu = median(m.on.map((r) => r.cpuMsPerTurn));
    const offCpu = median(m.off.map((r) => r.cpuMsPerTurn));
    const pairCosts = m.on.map((r, i) => 1 - r.perSecond / m.off[i]!.perSecond);
    return {
      id: 'upkeep',
      title: this.title,
      description: `Durable offline chat turns through recall, ${conversations} conversations at once, ${turns} turns each per run, ${repeats} runs per user kind taking turns: a user whose writes index themselves (indexed) and one whose index is off (unindexed). Throughput cost = 1 − indexed ÷ unindexed turns/s (median runs; target ≤ 0.25); CPU share = the index's part of the main thread's CPU time per turn. Index ÷ text: the search dbs' pages (the unindexed user holds none) over the UTF-8 bytes of the indexed user's rows (small: fixed costs weigh more than at 1M).`,
      xLabel: 'conversations',
      params: { conversations, turns, repeats },
      columns: [
        { key: 'indexedPerSecond', label: 'indexed turns/s', digits: 0 },
        { key: 'unindexedPerSecond', label: 'unindexed turns/s', digits: 0 },
        { key: 'throughputCost', label: 'throughput cost', digits: 2 },
        { key: 'pairCostMedian', label: 'cost, median of pairs', digits: 2 },
        { key: 'indexedCpuMs', label: 'indexed CPU ms/turn', digits: 3 },
        { key: 'unindexedCpuMs', label: 'unindexed CPU ms/turn', digits: 3 },
        { key: 'cpuShare', label: 'index CPU share', digits: 2 },
        { key: 'indexToText', label: 'index ÷ text', digits: 2 },
      ],
      ratios: [],
      rows: [
        {
          adapter: 'mnemo-lmdb',
          x: conversations,
          metrics: {
            indexedPerSecond: onRate,
            unindexedPerSecond: offRate,
            throughputCost: 1 - onRate / offRate,
            pairCostMedian: median(pairCosts),
            indexedCpuMs: onCpu,
            unindexedCpuMs: offCpu,
            cpuShare: (onCpu - offCpu) / onCpu,
            indexToText: (m.bytes.postings! + m.bytes.meta!) / m.textBytes,
          },
        },
      ],
      charts: [],
      notes: [`runs (turns/s) indexed ${m.on.map((r) => r.perSecond.toFixed(0)).join(', ')}; unindexed ${m.off.map((r) => r.perSecond.toFixed(0)).join(', ')}`],
      seconds: (performance.now() - started) / 1000,
    };
  },
};
