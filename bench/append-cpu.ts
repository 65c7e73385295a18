/**
 * CPU per durable append, side by side: the suite's append workload (N conversations, each
 * appending one message at a time and awaiting its ack, all at once) over raw lmdb-js, Mnemo's
 * standalone LMDB store and the runtime, taking turns (A B C A B C ...). Prints, per store, the
 * median throughput, process CPU per append (`process.cpuUsage()`: user + system, every thread,
 * so lmdb-js's write thread too), GC time per append (`PerformanceObserver` 'gc' entries) and
 * the p99 of each append's latency (call to ack, as the suite's append workload measures it: the
 * conversations are new, so their first appends include activation).
 * On a loaded machine wall throughput follows the CPU ratio, so both are shown.
 *
 *   npx tsx bench/append-cpu.ts [--conversations 1000] [--per 20] [--repeats 5] [--adapters raw-lmdb,mnemo-store,mnemo-lmdb]
 */
import { PerformanceObserver } from 'node:perf_hooks';
import { rawLmdb } from './suite/adapters/raw-lmdb.ts';
import { mnemoLmdb, mnemoStore } from './suite/adapters/mnemo.ts';
import { conversationName, messageAt } from './suite/records.ts';
import { withTempDir } from './suite/temp-dir.ts';
import { Samples } from './suite/stats.ts';
import { nextTurn } from './suite/event-loop.ts';
import type { AdapterFactory, LogAdapter } from './suite/types.ts';

const args = process.argv.slice(2);
const arg = (name: string, fallback: string): string => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1]! : fallback;
};
const conversations = Number(arg('conversations', '1000'));
const per = Number(arg('per', '20'));
const repeats = Number(arg('repeats', '5'));
const factories: Record<string, AdapterFactory> = { 'raw-lmdb': rawLmdb, 'mnemo-store': mnemoStore, 'mnemo-lmdb': mnemoLmdb };
const chosen = arg('adapters', 'raw-lmdb,mnemo-store,mnemo-lmdb').split(',');

let gcMs = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcMs += e.duration;
}).observe({ entryTypes: ['gc'] });

interface Run {
  perSec: number;
  cpuUs: number;
  gcUs: number;
  p99Ms: number;
}

async function warmUp(adapter: LogAdapter): Promise<void> {
  await Promise.all(
    Array.from({ length: 10 }, async (_, w) => {
      for (let i = 0; i < 30; i++) await adapter.append(`warm-${w}`, messageAt(w, i));
    }),
  );
  await nextTurn();
}

async function once(factory: AdapterFactory): Promise<Run> {
  return withTempDir(factory.info.id, async (dir) => {
    const adapter = await factory.open(dir);
    try {
      await warmUp(adapter);
      const messages = Array.from({ length: conversations }, (_, c) => Array.from({ length: per }, (_, i) => messageAt(c, i)));
      const latencies = new Samples();
      const gc0 = gcMs;
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      await Promise.all(
        messages.map(async (mine, c) => {
          const id = conversationName('conv', c);
          for (const m of mine) {
            const s = performance.now();
            await adapter.append(id, m);
            latencies.add(performance.now() - s);
          }
        }),
      );
      const seconds = (performance.now() - t0) / 1000;
      const cpu = process.cpuUsage(cpu0);
      const n = conversations * per;
      return { perSec: n / seconds, cpuUs: (cpu.user + cpu.system) / n, gcUs: ((gcMs - gc0) * 1000) / n, p99Ms: latencies.summary().p99Ms };
    } finally {
      await adapter.close();
    }
  });
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

const runs = new Map<string, Run[]>();
for (let r = 0; r < repeats; r++) {
  for (const id of chosen) {
    const run = await once(factories[id]!);
    runs.set(id, [...(runs.get(id) ?? []), run]);
    process.stderr.write(`${id} run ${r + 1}: ${run.perSec.toFixed(0)}/s, ${run.cpuUs.toFixed(1)} µs CPU, ${run.gcUs.toFixed(1)} µs GC per append, p99 ${run.p99Ms.toFixed(1)} ms\n`);
  }
}
const base = runs.get('raw-lmdb');
console.log(`${conversations} conversations x ${per} appends, ${repeats} interleaved runs, medians:`);
for (const [id, all] of runs) {
  const perSec = median(all.map((x) => x.perSec));
  const p99 = median(all.map((x) => x.p99Ms));
  const ratio = base === undefined ? '' : ` (${(perSec / median(base.map((x) => x.perSec))).toFixed(2)}x raw)`;
  const p99Ratio = base === undefined ? '' : ` (${(p99 / median(base.map((x) => x.p99Ms))).toFixed(2)}x raw)`;
  console.log(
    `  ${id.padEnd(12)} ${perSec.toFixed(0).padStart(7)}/s${ratio}  CPU ${median(all.map((x) => x.cpuUs)).toFixed(1)} µs/append  GC ${median(all.map((x) => x.gcUs)).toFixed(1)} µs/append  p99 ${p99.toFixed(1)} ms${p99Ratio}`,
  );
}
