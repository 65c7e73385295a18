/**
 * What one steady append costs, counted rather than timed (the counts are the same in every
 * run, on a loaded machine too): N conversations that have already appended (so activation is
 * done), then bursts in which every conversation appends a few messages one after the other, all
 * conversations at once, as the suite's append workload does after its first appends. Per append it prints the promises made
 * (`async_hooks` PROMISE inits, the bench's own included: the same for every adapter) and the
 * bytes allocated on the JS heap (heap used after minus before a round, with a young generation
 * large enough that no collection runs inside it: a burst that collected is discarded), and,
 * timed and so noisy, the process CPU per append in those bursts (the median).
 *
 *   node --expose-gc --min-semi-space-size=64 --max-semi-space-size=64 --import tsx bench/append-steady.ts [--conversations 1000] [--rounds 5] [--adapters raw-lmdb,mnemo-store,mnemo-lmdb]
 */
import { createHook } from 'node:async_hooks';
import { PerformanceObserver } from 'node:perf_hooks';
import { rawLmdb } from './suite/adapters/raw-lmdb.ts';
import { mnemoLmdb, mnemoStore } from './suite/adapters/mnemo.ts';
import { conversationName, messageAt } from './suite/records.ts';
import { withTempDir } from './suite/temp-dir.ts';
import { nextTurn } from './suite/event-loop.ts';
import type { AdapterFactory, LogAdapter } from './suite/types.ts';

const args = process.argv.slice(2);
const arg = (name: string, fallback: string): string => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1]! : fallback;
};
const conversations = Number(arg('conversations', '1000'));
const rounds = Number(arg('rounds', '5'));
/** Appends per conversation in a measured burst: few enough that no collection runs inside one. */
const PER = 4;
const factories: Record<string, AdapterFactory> = { 'raw-lmdb': rawLmdb, 'mnemo-store': mnemoStore, 'mnemo-lmdb': mnemoLmdb };
const chosen = arg('adapters', 'raw-lmdb,mnemo-store,mnemo-lmdb').split(',');
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with node --expose-gc (see the usage line)');

let promises = 0;
const hook = createHook({
  init(_id, type) {
    if (type === 'PROMISE') promises++;
  },
});
let collections = 0;
new PerformanceObserver((list) => {
  collections += list.getEntries().length;
}).observe({ entryTypes: ['gc'] });

const ids = Array.from({ length: conversations }, (_, c) => conversationName('conv', c));
let next = 0;
/** Every conversation appends `per` messages, one at a time, all conversations at once (the
 * suite's append workload: the write path stays as crowded as there). */
const burst = (adapter: LogAdapter, per: number): Promise<unknown> => {
  const from = next;
  next += per;
  return Promise.all(
    ids.map(async (id, c) => {
      for (let i = from; i < from + per; i++) await adapter.append(id, messageAt(c, i));
    }),
  );
};

async function measure(factory: AdapterFactory): Promise<{ promises: number; bytes: number; cpuUs: number }> {
  return withTempDir(factory.info.id, async (dir) => {
    const adapter = await factory.open(dir);
    next = 0;
    try {
      await burst(adapter, 3); // activation, then steady
      await nextTurn();
      const counts: number[] = [];
      const bytes: number[] = [];
      const cpus: number[] = [];
      const n = conversations * PER;
      for (let r = 0; r < rounds; r++) {
        promises = 0;
        hook.enable();
        await burst(adapter, PER);
        hook.disable();
        counts.push(promises / n);
        await nextTurn();
        gc!();
        await nextTurn();
        const gcs = collections;
        const before = process.memoryUsage().heapUsed;
        const cpu0 = process.cpuUsage();
        await burst(adapter, PER);
        const cpu = process.cpuUsage(cpu0);
        const after = process.memoryUsage().heapUsed;
        cpus.push((cpu.user + cpu.system) / n);
        await nextTurn();
        if (collections === gcs) bytes.push((after - before) / n);
      }
      const min = (xs: number[]) => (xs.length === 0 ? NaN : Math.min(...xs));
      const median = [...cpus].sort((a, b) => a - b)[Math.floor(cpus.length / 2)]!;
      return { promises: min(counts), bytes: min(bytes), cpuUs: median };
    } finally {
      await adapter.close();
    }
  });
}

console.log(`${conversations} conversations, steady appends (each conversation's 4th and later), fewest of ${rounds} bursts of ${PER}:`);
for (const id of chosen) {
  const m = await measure(factories[id]!);
  console.log(
    `  ${id.padEnd(12)} ${m.promises.toFixed(1).padStart(5)} promises/append  ${(m.bytes / 1024).toFixed(2).padStart(6)} KB allocated/append  CPU ${m.cpuUs.toFixed(1)} µs/append`,
  );
}
