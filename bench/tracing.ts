/**
 * bench/tracing.ts: the CPU a chat turn costs with tracing on, side by side with tracing off, in
 * one run. The turn is `runtime.recall.chat` on the runtime's LMDB memory with the offline model
 * (`fallbackLlm()`, so the model-call span is there too); tracing on is what an application's
 * setup does: a tracer provider with a batch span processor (its exporter drops the spans: the
 * export's own cost is the exporter's, not Mnemo's) and an AsyncLocalStorage context manager.
 * Batches of turns alternate off / on; CPU is `process.cpuUsage()` (user + system) per turn, the
 * ratio is of the medians of the batches.
 *
 *   npx tsx bench/tracing.ts           30 batches of 20 turns per mode
 *   npx tsx bench/tracing.ts --quick   8 batches
 */
import { BasicTracerProvider, BatchSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { trace } from '@opentelemetry/api';
import { fallbackLlm } from '../src/llm/index.ts';
import { startRuntime } from '../src/runtime.ts';
import { median } from './suite/stats.ts';
import { withTempDir } from './suite/temp-dir.ts';
import { startTracing } from '../test/support/otel.ts';

const BATCHES = process.argv.includes('--quick') ? 8 : 30;
const TURNS = 20;

let exported = 0;
const dropping: SpanExporter = {
  export: (spans: ReadableSpan[], done) => {
    exported += spans.length;
    done({ code: 0 });
  },
  shutdown: async () => undefined,
};

await withTempDir('tracing', async (dir) => {
  const runtime = await startRuntime({ dataDir: dir, recall: { llm: fallbackLlm({ language: 'en' }), language: 'en' } });
  try {
    let n = 0;
    const turns = async (): Promise<number> => {
      const t0 = process.cpuUsage();
      for (let i = 0; i < TURNS; i++) await runtime.recall.chat({ userId: 'bench', sessionId: `s${n % 50}`, message: `turn ${n++}: I like green tea` });
      const used = process.cpuUsage(t0);
      return (used.user + used.system) / 1000 / TURNS;
    };
    /** Tracing on: the context manager of test/support/otel.ts, and (unless `contextOnly`) a batching provider that drops. */
    const on = (contextOnly = false) => {
      const tracing = startTracing();
      trace.disable();
      const provider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(dropping)] });
      if (!contextOnly) trace.setGlobalTracerProvider(provider);
      return async () => {
        await provider.shutdown();
        await tracing.stop();
      };
    };
    await turns(); // warm-up, untraced
    const stop = on();
    await turns(); // warm-up, traced
    await stop();
    // Three modes in turn: off; the context manager alone (AsyncLocalStorage, what any OTel
    // setup installs, Mnemo's spans or not); on. The middle one tells the two costs apart.
    const samples: Record<'off' | 'context' | 'on', number[]> = { off: [], context: [], on: [] };
    const modes = ['off', 'context', 'on'] as const;
    for (let b = 0; b < BATCHES; b++) {
      for (const mode of b % 2 === 0 ? modes : [...modes].reverse()) {
        const stopTracing = mode === 'off' ? undefined : on(mode === 'context');
        samples[mode].push(await turns());
        await stopTracing?.();
      }
    }
    const [mOff, mContext, mOn] = modes.map((m) => median(samples[m])) as [number, number, number];
    const pct = (x: number) => `${(((x - mOff) / mOff) * 100).toFixed(1)}%`;
    console.log(`bench/tracing.ts: ${BATCHES} batches of ${TURNS} turns per mode, Node ${process.version}; ${exported} spans exported (${(exported / ((BATCHES + 1) * TURNS)).toFixed(1)} a turn)`);
    console.log(`CPU per chat turn: tracing off ${mOff.toFixed(3)} ms; context manager alone ${mContext.toFixed(3)} ms (${pct(mContext)}); tracing on ${mOn.toFixed(3)} ms (${pct(mOn)}; Mnemo's spans: ${(((mOn - mContext) / mOff) * 100).toFixed(1)}%)`);
  } finally {
    await runtime.stop();
  }
});
