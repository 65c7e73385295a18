/**
 * bench/tracing.ts: the CPU a chat turn costs with tracing on, side by side with tracing off, in
 * one run. The turn is `runtime.recall.chat` on the runtime's LMDB memory with the offline model
 * (`fallbackLlm()`, so the model-call span is there too); tracing on is what an application's
 * setup does: a tracer provider with a batch span processor (its exporter drops the spans: the
 * export's own cost is the exporter's, not Mnemo's) and an AsyncLocalStorage context manager
 * (test/support/otel.ts).
 *
 * Four modes take turns in short rounds: off (nothing registered); the context manager alone
 * (what any OpenTelemetry setup installs, Mnemo's spans or not); spans sampled out (that setup
 * with a provider whose sampler is `AlwaysOffSampler`: Mnemo's calls reach the SDK, which makes
 * ids and records nothing); on. The context manager is turned on in all but "off" (one
 * `context.with`): on Node 20 and 22 AsyncLocalStorage's first `run` hooks every promise of the
 * process from then on, and in an application that first `run` is not Mnemo's (the SDK's batch
 * processor makes one per export, an instrumented HTTP server one per request). Mnemo's spans
 * make none since they are passed their parents: without this the traced batches would pay that
 * hook only after an export, at random. The providers and one
 * context manager are registered and unregistered between batches, so a switch makes no
 * garbage of its own. A batch pays part of the batch before it (the garbage it left, collected
 * now; the spans the batch processor still holds): the modes' order in a round follows a
 * Williams square, four orders in turn in which each mode comes once in each place and, within
 * the rounds, once after each other mode, so neither a drift within a round nor what a batch
 * inherits favours one mode. A batch is a mode's turns plus the summary jobs they queued
 * (waited for inside the batch: background work is charged to the mode that caused it); CPU is `process.cpuUsage()` (user + system, every thread) per turn. The figure is the
 * median over the rounds of each round's ratio to its own "off" batch: on a shared machine the
 * other load moves neighbouring batches together, so short rounds, many of them, are steadier
 * than long ones (the middle half of the rounds' ratios is printed to show the spread).
 *
 *   npx tsx bench/tracing.ts           400 rounds of 4 turns per mode
 *   npx tsx bench/tracing.ts --quick   100 rounds
 */
import { AlwaysOffSampler, BasicTracerProvider, BatchSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { context, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { fallbackLlm } from '../src/llm/index.ts';
import { startRuntime } from '../src/runtime.ts';
import { median } from './suite/stats.ts';
import { withTempDir } from './suite/temp-dir.ts';
import { AsyncLocalContextManager } from '../test/support/otel.ts';

const ROUNDS = process.argv.includes('--quick') ? 100 : 400;
const TURNS = 4;
const MODES = ['off', 'context', 'sampled-out', 'on'] as const;
type Mode = (typeof MODES)[number];
/** The rounds' orders of MODES (indices): a Williams square, balanced for place and for the mode before. */
const WILLIAMS = [
  [0, 1, 3, 2],
  [1, 2, 0, 3],
  [2, 3, 1, 0],
  [3, 0, 2, 1],
] as const;

let exported = 0;
const dropping: SpanExporter = {
  export: (spans: ReadableSpan[], done) => {
    exported += spans.length;
    done({ code: 0 });
  },
  shutdown: async () => undefined,
};
const provider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(dropping)] });
const sampledOut = new BasicTracerProvider({ sampler: new AlwaysOffSampler(), spanProcessors: [new BatchSpanProcessor(dropping)] });
const manager = new AsyncLocalContextManager();
function use(mode: Mode): void {
  trace.disable();
  context.disable();
  if (mode === 'off') return;
  context.setGlobalContextManager(manager);
  // Turned on as in an application, where the first `context.with` comes within seconds (the
  // batch processor's first export, an instrumented server's first request), not from Mnemo.
  context.with(ROOT_CONTEXT, () => undefined);
  if (mode === 'on') trace.setGlobalTracerProvider(provider);
  if (mode === 'sampled-out') trace.setGlobalTracerProvider(sampledOut);
}

await withTempDir('tracing', async (dir) => {
  const runtime = await startRuntime({ dataDir: dir, recall: { llm: fallbackLlm({ language: 'en' }), language: 'en' } });
  try {
    let n = 0;
    let onTurns = 0;
    const batch = async (mode: Mode): Promise<number> => {
      use(mode);
      const t0 = process.cpuUsage();
      for (let i = 0; i < TURNS; i++) await runtime.recall.chat({ userId: 'bench', sessionId: `s${n % 50}`, message: `turn ${n++}: I like green tea` });
      await runtime.recall.summaryIdle();
      const used = process.cpuUsage(t0);
      if (mode === 'on') onTurns += TURNS;
      return (used.user + used.system) / 1000 / TURNS;
    };
    for (let i = 0; i < 25; i++) for (const mode of MODES) await batch(mode); // warm-up
    const samples: Record<Mode, number[]> = { off: [], context: [], 'sampled-out': [], on: [] };
    for (let r = 0; r < ROUNDS; r++) {
      for (const i of WILLIAMS[r % WILLIAMS.length]!) samples[MODES[i]!].push(await batch(MODES[i]!));
    }
    await provider.forceFlush();
    use('off');
    const ratios = (mode: Mode) => samples[mode].map((x, r) => x / samples.off[r]!).sort((a, b) => a - b);
    const pct = (x: number) => `${x >= 1 ? '+' : ''}${((x - 1) * 100).toFixed(1)}%`;
    const quartiles = (v: number[]) => `${pct(v[Math.floor(v.length / 4)]!)} to ${pct(v[Math.floor((3 * v.length) / 4)]!)}`;
    const [rContext, rSampledOut, rOn] = [median(ratios('context')), median(ratios('sampled-out')), median(ratios('on'))];
    console.log(`bench/tracing.ts: ${ROUNDS} rounds of ${TURNS} turns per mode, Node ${process.version}; ${(exported / onTurns).toFixed(1)} spans a turn`);
    const ms = (mode: Mode) => `${median(samples[mode]).toFixed(3)} ms`;
    console.log(`CPU per chat turn (medians): off ${ms('off')}, context manager alone ${ms('context')}, spans sampled out ${ms('sampled-out')}, on ${ms('on')}`);
    console.log(
      `tracing on vs off: ${pct(rOn)} (middle half of the rounds ${quartiles(ratios('on'))}); the context manager alone: ${pct(rContext)}; Mnemo's spans over it: ${pct(rOn / rContext)}`,
    );
    console.log(`of which Mnemo's calls with every span sampled out: ${pct(rSampledOut / rContext)}; the SDK's recording of the spans: ${pct(rOn / rSampledOut)}`);
  } finally {
    await runtime.stop();
    await provider.shutdown();
    await sampledOut.shutdown();
  }
});
