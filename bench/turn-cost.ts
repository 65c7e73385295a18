/**
 * bench/turn-cost.ts: what one turn costs as a conversation grows (long-conversations issue,
 * item 1). One run, the runtime's LMDB memory, conversations of 100 and 100,000 messages
 * measured side by side (the two sizes take turns, sample after sample, in alternating order),
 * and the ratio of the medians:
 * - agent: `createAgent({ llm: fallbackLlm(), memory: { window: 50 } })`, one `run` per sample;
 * - agent, whole history: the same provider without its bounded reads (today's path for a
 *   plain `ChatMemory`: `history` + `prepare` over everything), for contrast;
 * - memory filter: `kernel.invoke` with `memoryFilter(runtime.memory, { window: 50 })`;
 * - token window: an agent over `tokenWindowProvider(runtime.memory, { maxTokens: 4000 })`
 *   (the o200k counter).
 * Each turn appends two messages, so a conversation grows a little while it is measured.
 *
 *   npx tsx bench/turn-cost.ts           200 samples per size (whole-history: 20)
 *   npx tsx bench/turn-cost.ts --quick   40 (whole-history: 5)
 */
import { cpus, loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';
import { createAgent } from '../src/agent/index.ts';
import { createKernel, memoryFilter, newContext, withConversationId } from '../src/kernel/index.ts';
import { fallbackLlm } from '../src/llm/index.ts';
import type { Message } from '../src/message.ts';
import { defaultProvider, o200kTokenCounter, tokenWindowProvider, type MemoryProvider } from '../src/provider/index.ts';
import { startRuntime } from '../src/runtime.ts';
import { Samples, type LatencySummary } from './suite/stats.ts';
import { withTempDir } from './suite/temp-dir.ts';

const SIZES = [100, 100_000] as const;
const BATCH = 5_000;

/** A realistic history: a system message, then user / assistant pairs with a tool round now and then. */
function history(n: number): Message[] {
  const out: Message[] = [{ role: 'system', content: 'You remember things.' }];
  for (let i = 0; out.length < n; i++) {
    out.push({ role: 'user', content: `message ${i}: 我叫张三，我喜欢手冲咖啡 and some more words to weigh like a real turn` });
    if (i % 10 === 5) {
      out.push({ role: 'assistant', content: null, tool_calls: [{ id: `t${i}`, type: 'function', function: { name: 'now', arguments: '{}' } }] });
      out.push({ role: 'tool', tool_call_id: `t${i}`, content: '2026-11-30T10:00:00Z' });
    }
    out.push({ role: 'assistant', content: `收到：message ${i}。我已经记录到记忆中。` });
  }
  return out.slice(0, n);
}

/** One case's p50/p99 at each history size, and the ratio of the p50s (largest ÷ smallest). */
export interface TurnCostRow {
  name: string;
  small: LatencySummary;
  large: LatencySummary;
  ratio: number;
}

export const TURN_COST_SIZES = SIZES;

/** Measures every case (`samples` per size; the whole-history case `wholeSamples`), logging each line. */
export function measureTurnCost(SAMPLES: number, WHOLE_SAMPLES: number, log: (line: string) => void = console.log): Promise<TurnCostRow[]> {
  const quick = SAMPLES < 200;
  const out: TurnCostRow[] = [];
  return withTempDir('turn-cost', async (dir) => {
  const runtime = await startRuntime({ dataDir: dir });
  const memory = runtime.memory;
  await o200kTokenCounter();
  try {
    const fill = async (id: string, n: number) => {
      const all = history(n);
      for (let at = 0; at < all.length; at += BATCH) await memory.add(id, all.slice(at, at + BATCH));
    };
    const whole = (p: MemoryProvider): MemoryProvider => ({ history: p.history, append: p.append, prepare: p.prepare, clear: p.clear });

    type Turn = (size: number) => Promise<unknown>;
    const cases: Array<{ name: string; samples: number; make: (size: number, id: string) => Turn }> = [
      {
        name: 'agent turn, { window: 50 }',
        samples: SAMPLES,
        make: (_s, id) => {
          const agent = createAgent({ llm: fallbackLlm(), memory: { window: 50 }, conversationId: id });
          return () => agent.run('我叫什么？');
        },
      },
      {
        name: 'agent turn, window 50 over the whole history (plain ChatMemory path)',
        samples: WHOLE_SAMPLES,
        make: (_s, id) => {
          const agent = createAgent({ llm: fallbackLlm(), memory: whole(defaultProvider(memory, 50)), conversationId: id });
          return () => agent.run('我叫什么？');
        },
      },
      {
        name: 'kernel memory filter, { window: 50 }',
        samples: SAMPLES,
        make: (_s, id) => {
          const kernel = createKernel({ llm: fallbackLlm(), filters: [memoryFilter(memory, { window: 50 })] });
          const context = withConversationId(newContext(), id);
          return () => kernel.invoke([{ role: 'user', content: '我叫什么？' }], { context });
        },
      },
      {
        name: 'agent turn, token window 4000',
        samples: SAMPLES,
        make: (_s, id) => {
          const agent = createAgent({ llm: fallbackLlm(), memory: tokenWindowProvider(memory, { maxTokens: 4000 }), conversationId: id });
          return () => agent.run('我叫什么？');
        },
      },
    ];

    log(`turn cost at ${SIZES.join(' vs ')} messages (${quick ? 'quick' : 'full'}; ${cpus().length} cores, load ${loadavg()[0]!.toFixed(1)})`);
    const rows: string[] = [];
    for (const [k, c] of cases.entries()) {
      const turns = new Map<number, Turn>();
      for (const size of SIZES) {
        const id = `case${k}-${size}`;
        await fill(id, size);
        turns.set(size, c.make(size, id));
      }
      const samples = new Map(SIZES.map((s) => [s, new Samples()]));
      for (const size of SIZES) for (let w = 0; w < Math.min(10, c.samples); w++) await turns.get(size)!(size);
      for (let i = 0; i < c.samples; i++) {
        // The sizes take turns, in alternating order, so neither always follows the other.
        for (const size of i % 2 === 0 ? SIZES : [...SIZES].reverse()) {
          const t0 = performance.now();
          await turns.get(size)!(size);
          samples.get(size)!.add(performance.now() - t0);
        }
      }
      const [small, large] = SIZES.map((s) => samples.get(s)!.summary());
      const ratio = large!.p50Ms / small!.p50Ms;
      out.push({ name: c.name, small: small!, large: large!, ratio });
      rows.push(`| ${c.name} | ${small!.p50Ms.toFixed(2)} | ${large!.p50Ms.toFixed(2)} | **${ratio.toFixed(2)}x** |`);
      log(`${c.name}: p50 ${small!.p50Ms.toFixed(2)} ms vs ${large!.p50Ms.toFixed(2)} ms -> ${ratio.toFixed(2)}x (p99 ${small!.p99Ms.toFixed(2)} / ${large!.p99Ms.toFixed(2)})`);
    }
    log('\n| turn | p50 ms, 100 messages | p50 ms, 100,000 messages | ratio |\n|---|---:|---:|---:|');
    for (const r of rows) log(r);
    return out;
  } finally {
    await runtime.stop();
  }
  });
}

// Run as a script (`npx tsx bench/turn-cost.ts [--quick]`); imported by the suite (workloads/turn-cost.ts).
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const quick = process.argv.includes('--quick');
  await measureTurnCost(quick ? 40 : 200, quick ? 5 : 20);
}
