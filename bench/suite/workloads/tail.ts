import { messagesOf } from '../records.ts';
import { nextTurn } from '../event-loop.ts';
import { Samples } from '../stats.ts';
import { withTempDir } from '../temp-dir.ts';
import type { ResultRow } from '../result-types.ts';
import type { LogAdapter } from '../types.ts';
import type { Workload } from '../workload.ts';

/**
 * Tail read: the last 50 messages of one conversation, against the conversation's length. The
 * conversation is filled with the store's bulk path (not timed), a few reads warm up, then
 * reads run back to back (up to `reads`, or `capSeconds`). A flat line means the read costs the
 * same however long the conversation grows.
 */
export const tailWorkload: Workload = {
  id: 'tail',
  title: 'Tail read (last 50) vs conversation length',
  async run(ctx) {
    const started = performance.now();
    const { lengths, window, reads, capSeconds } = ctx.sizes.tail;
    const rows: ResultRow[] = [];
    for (const length of lengths) {
      for (const factory of ctx.adapters) {
        const step = ctx.progress.step(`tail ${factory.info.label} @ ${length.toLocaleString('en-US')} msgs`, reads);
        const m = await withTempDir(factory.info.id, async (dir) => {
          const adapter = await factory.open(dir);
          try {
            await fill(adapter, 'tail-0', length);
            const check = await adapter.tail('tail-0', window);
            if (check.length !== Math.min(window, length)) throw new Error(`${factory.info.id}: tail returned ${check.length}`);
            for (let i = 0; i < 5; i++) await adapter.tail('tail-0', window);
            const samples = new Samples();
            const deadline = performance.now() + capSeconds * 1000;
            const t0 = performance.now();
            for (let i = 0; i < reads && performance.now() < deadline; i++) {
              const s = performance.now();
              await adapter.tail('tail-0', window);
              samples.add(performance.now() - s);
              step.tick();
            }
            return { samples: samples.summary(), seconds: (performance.now() - t0) / 1000 };
          } finally {
            await adapter.close();
          }
        });
        step.done();
        rows.push({
          adapter: factory.info.id,
          x: length,
          metrics: { readsPerSec: m.samples.count / m.seconds, p50Ms: m.samples.p50Ms, p99Ms: m.samples.p99Ms, reads: m.samples.count },
          ...(m.samples.count < reads ? { note: `${m.samples.count} reads in the ${capSeconds} s cap` } : {}),
        });
      }
    }
    return {
      id: 'tail',
      title: this.title,
      description: `Time to read the last ${window} messages of one conversation, by the conversation's length (messages). Lower is better; a flat line is a cost that does not grow with history.`,
      xLabel: 'conversation length',
      params: { lengths, window, reads, capSeconds },
      columns: [
        { key: 'p50Ms', label: 'p50 ms', digits: 3 },
        { key: 'p99Ms', label: 'p99 ms', digits: 3 },
        { key: 'readsPerSec', label: 'reads/s', digits: 0 },
      ],
      ratios: [
        { metric: 'readsPerSec', baseline: 'raw-lmdb', label: 'reads/s ÷ raw lmdb-js' },
        { metric: 'readsPerSec', baseline: 'mnemo-lmdb', label: 'reads/s ÷ Mnemo' },
      ],
      rows,
      charts: [{ file: 'tail-read.svg', kind: 'lines', title: `Tail read (last ${window}) p50 vs conversation length`, metric: 'p50Ms', yLabel: 'p50 ms (log)', logY: true, logX: true }],
      notes: ['LangGraph: the conversation is one checkpoint holding the whole history (what a read sees); reading it deserializes every message.'],
      seconds: (performance.now() - started) / 1000,
    };
  },
};

/** Fills a conversation in chunks (bounded memory for the records). */
export async function fill(adapter: LogAdapter, conversation: string, length: number, conversationIndex = 0): Promise<void> {
  const chunk = adapter.info.id.startsWith('langgraph') ? length : 10_000;
  for (let from = 0; from < length; from += chunk) {
    await adapter.load(conversation, messagesOf(conversationIndex, from, Math.min(chunk, length - from)));
    await nextTurn();
  }
}
