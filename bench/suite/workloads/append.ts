import { conversationName, messageAt } from '../records.ts';
import { nextTurn } from '../event-loop.ts';
import { Samples, type LatencySummary } from '../stats.ts';
import { withTempDir } from '../temp-dir.ts';
import type { AdapterId, LogAdapter } from '../types.ts';
import { rateColumns, type ResultRow } from '../result-types.ts';
import type { Workload } from '../workload.ts';

/**
 * Durable append throughput and latency at 1, 100 and 1000 concurrent conversations: each
 * conversation has one writer that appends its messages one at a time, awaiting each ack (as a
 * chat turn does), and all writers run at once. A fresh store per adapter, level and repeat,
 * warmed up on other conversations first. Throughput = acknowledged appends / wall time;
 * latency = call to ack of each append. Repeats are interleaved across stores; the row is the
 * run with the median throughput.
 */
interface Run {
  ops: number;
  seconds: number;
  latency: LatencySummary;
  capped: boolean;
}

export const appendWorkload: Workload = {
  id: 'append',
  title: 'Durable append: throughput and latency vs concurrent conversations',
  async run(ctx) {
    const started = performance.now();
    const { levels, capSeconds, warmup, repeats } = ctx.sizes.append;
    const rows: ResultRow[] = [];
    for (const level of levels) {
      const total = level.conversations * level.perConversation;
      const runs = new Map<AdapterId, Run[]>();
      for (let r = 0; r < repeats; r++) {
        for (const factory of ctx.withDiagnostics) {
          const round = repeats > 1 ? ` (run ${r + 1}/${repeats})` : '';
          const step = ctx.progress.step(`append ${factory.info.label} @ ${level.conversations} conv${round}`, total);
          const run = await withTempDir(factory.info.id, async (dir) => {
            const adapter = await factory.open(dir);
            try {
              await warmUp(adapter, warmup);
              return await measure(adapter, level.conversations, level.perConversation, capSeconds, () => step.tick());
            } finally {
              await adapter.close();
            }
          });
          step.done();
          runs.set(factory.info.id, [...(runs.get(factory.info.id) ?? []), run]);
        }
      }
      for (const [adapter, all] of runs) {
        const sorted = [...all].sort((a, b) => a.ops / a.seconds - b.ops / b.seconds);
        const run = sorted[Math.floor((sorted.length - 1) / 2)]!;
        rows.push({
          adapter,
          x: level.conversations,
          metrics: {
            opsPerSec: run.ops / run.seconds,
            p50Ms: run.latency.p50Ms,
            p99Ms: run.latency.p99Ms,
            ops: run.ops,
            seconds: run.seconds,
            minOpsPerSec: sorted[0]!.ops / sorted[0]!.seconds,
            maxOpsPerSec: sorted[sorted.length - 1]!.ops / sorted[sorted.length - 1]!.seconds,
          },
          ...(run.capped ? { note: `capped at ${capSeconds} s after ${run.ops} of ${total} appends` } : {}),
        });
      }
    }
    return {
      id: 'append',
      title: this.title,
      description:
        'Appends per second acknowledged as durable (and per-append latency) when N conversations each append one message at a time, all at once. Higher throughput is better.',
      xLabel: 'concurrent conversations',
      params: {
        levels: levels.map((l) => l.conversations),
        perConversation: levels.map((l) => l.perConversation),
        capSeconds,
        warmup,
        repeats,
      },
      columns: rateColumns('opsPerSec', 'appends/s', repeats),
      ratios: [
        { metric: 'opsPerSec', baseline: 'raw-lmdb', label: '÷ raw lmdb-js' },
        { metric: 'opsPerSec', baseline: 'mnemo-lmdb', label: '÷ Mnemo' },
      ],
      rows,
      charts: [
        { file: 'append-throughput.svg', kind: 'bars', title: 'Durable appends/s by concurrent conversations', metric: 'opsPerSec', yLabel: 'appends/s (log)', logY: true },
        { file: 'append-p99.svg', kind: 'bars', title: 'Append p99 latency by concurrent conversations', metric: 'p99Ms', yLabel: 'p99 ms (log)', logY: true },
      ],
      notes: [
        'In-memory stores (Mnemo in-memory, LangGraph MemorySaver) do no I/O: they are shown for scale, not as durable peers.',
        '"Mnemo store, no actors" is a diagnostic: the same LMDB store used standalone, without the runtime; the gap to "Mnemo (LMDB)" is what the per-conversation actors cost.',
        ...(repeats > 1 ? [`Each row is the median of ${repeats} interleaved runs (min and max shown).`] : []),
      ],
      seconds: (performance.now() - started) / 1000,
    };
  },
};

async function warmUp(adapter: LogAdapter, count: number): Promise<void> {
  for (let i = 0; i < count / 2; i++) await adapter.append('warm-0', messageAt(0, i));
  await Promise.all(
    Array.from({ length: 10 }, async (_, w) => {
      for (let i = 0; i < count / 20; i++) await adapter.append(`warm-${w + 1}`, messageAt(w + 1, i));
    }),
  );
  await nextTurn();
}

async function measure(adapter: LogAdapter, conversations: number, perConversation: number, capSeconds: number, tick: () => void): Promise<Run> {
  const samples = new Samples();
  const t0 = performance.now();
  const deadline = t0 + capSeconds * 1000;
  let capped = false;
  let last = t0;
  await Promise.all(
    Array.from({ length: conversations }, async (_, c) => {
      const id = conversationName('conv', c);
      for (let i = 0; i < perConversation; i++) {
        if (performance.now() > deadline) {
          capped = true;
          return;
        }
        const s = performance.now();
        await adapter.append(id, messageAt(c, i));
        last = performance.now();
        samples.add(last - s);
        tick();
      }
    }),
  );
  return { ops: samples.count, seconds: (last - t0) / 1000, latency: samples.summary(), capped };
}
