/**
 * bench/tracing.ts: the CPU a chat turn costs with tracing on, side by side with tracing off, in
 * one run. The turn is `runtime.recall.chat` on the runtime's LMDB memory with the offline model
 * (`fallbackLlm()`, so the model-call span is there too); tracing on is what an application's
 * setup does: a tracer provider with a batch span processor (its exporter drops the spans: the
 * export's own cost is the exporter's, not Mnemo's) and an AsyncLocalStorage context manager.
 *
 * Three modes take turns in rounds (order reversed every other round, so a drift of the machine
 * or of the sessions' length falls on each alike): off; the context manager alone (what any
 * OpenTelemetry setup installs, Mnemo's spans or not); on. A batch is a mode's turns plus the
 * summary jobs they queued (waited for inside the batch, so background work is charged to the
 * mode that caused it); CPU is `process.cpuUsage()` (user + system, every thread) per turn. The
 * figure is the median over rounds of each round's ratio to its own "off" batch: the machine's
 * other load moves neighbouring batches together.
 *
 *   npx tsx bench/tracing.ts           40 rounds of 25 turns per mode
 *   npx tsx bench/tracing.ts --quick   10 rounds
 */
import { BasicTracerProvider, BatchSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { trace } from '@opentelemetry/api';
import { fallbackLlm } from '../src/llm/index.ts';
import { startRuntime } from '../src/runtime.ts';
import { median } from './suite/stats.ts';
import { withTempDir } from './suite/temp-dir.ts';
import { startTracing } from '../test/support/otel.ts';

const ROUNDS = process.argv.includes('--quick') ? 10 : 40;
const TURNS = 25;

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
      await runtime.recall.summaryIdle();
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
    const traced = n;
    const samples: Record<'off' | 'context' | 'on', number[]> = { off: [], context: [], on: [] };
    const modes = ['off', 'context', 'on'] as const;
    for (let r = 0; r < ROUNDS; r++) {
      for (const mode of r % 2 === 0 ? modes : [...modes].reverse()) {
        const stopTracing = mode === 'off' ? undefined : on(mode === 'context');
        samples[mode].push(await turns());
        await stopTracing?.();
      }
    }
    const ratio = (mode: 'context' | 'on') => median(samples[mode].map((x, r) => x / samples.off[r]!));
    const pct = (x: number) => `${x >= 1 ? '+' : ''}${((x - 1) * 100).toFixed(1)}%`;
    const [rContext, rOn] = [ratio('context'), ratio('on')];
    console.log(`bench/tracing.ts: ${ROUNDS} rounds of ${TURNS} turns per mode, Node ${process.version}; ${(exported / ((ROUNDS + 1) * TURNS)).toFixed(1)} spans a turn (${traced - TURNS} warm-up turns included)`);
    console.log(
      `CPU per chat turn (medians): off ${median(samples.off).toFixed(3)} ms, context manager alone ${median(samples.context).toFixed(3)} ms, on ${median(samples.on).toFixed(3)} ms`,
    );
    console.log(`tracing on vs off: ${pct(rOn)} (the context manager alone: ${pct(rContext)}; Mnemo's spans over it: ${pct(rOn / rContext)})`);
  } finally {
    await runtime.stop();
  }
});
