/**
 * bench/ai-sdk.ts: what `mnemoMiddleware` (src/ai-sdk/) adds to a turn, side by side with the
 * bare model, in one run. The model is the AI SDK's own mock (`ai/test`), answering at once, so
 * the difference is the middleware's work alone: before the call, the session window, the
 * ranked facts (and, in the third case, 5 hits of ranked search); after it, `recall.recordTurn`
 * (two durable LMDB commits on the runtime, as a `recall.chat` turn offline). Samples of the
 * cases alternate, so load on the machine falls on all alike; each case's p50 and p99, and the
 * p50 the middleware adds. `recall.chat` offline is measured beside them for scale.
 *
 *   npx tsx bench/ai-sdk.ts            300 turns per case
 *   npx tsx bench/ai-sdk.ts --quick    60
 */
import { generateText, streamText, wrapLanguageModel, type LanguageModelMiddleware } from 'ai';
import { MockLanguageModelV4, simulateReadableStream } from 'ai/test';
import { mnemoMiddleware } from '../src/ai-sdk/index.ts';
import { startRuntime } from '../src/runtime.ts';
import { Samples } from './suite/stats.ts';
import { withTempDir } from './suite/temp-dir.ts';

const SAMPLES = process.argv.includes('--quick') ? 60 : 300;
const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } };
const finishReason = { unified: 'stop' as const, raw: 'stop' };
const reply = 'Got it: I will remember that you like green tea and live in Lisbon.';
const mock = () =>
  new MockLanguageModelV4({
    doGenerate: async () => ({ content: [{ type: 'text', text: reply }], finishReason, usage, warnings: [] }),
    doStream: async () => ({
      stream: simulateReadableStream({
        chunkDelayInMs: null,
        chunks: [
          { type: 'stream-start', warnings: [] },
          { type: 'text-start', id: 't' },
          ...reply.split(' ').map((w) => ({ type: 'text-delta' as const, id: 't', delta: `${w} ` })),
          { type: 'text-end', id: 't' },
          { type: 'finish', finishReason, usage },
        ],
      }),
    }),
  });

await withTempDir('ai-sdk', async (dir) => {
  const runtime = await startRuntime({ dataDir: dir, recall: { language: 'en' } });
  try {
    for (let i = 0; i < 20; i++) await runtime.recall.remember('bench', { text: `fact number ${i}: likes item ${i} a lot` });
    const wrapped = (middleware: LanguageModelMiddleware) => wrapLanguageModel({ model: mock(), middleware });
    type Case = { name: string; turn: (i: number) => PromiseLike<unknown>; samples: Samples };
    const bare = mock();
    const generate = wrapped(mnemoMiddleware({ runtime, userId: 'bench', sessionId: 'generate' }));
    const recalled = wrapped(mnemoMiddleware({ runtime, userId: 'bench', sessionId: 'recall', recall: 5 }));
    const streamed = wrapped(mnemoMiddleware({ runtime, userId: 'bench', sessionId: 'stream' }));
    const bareStream = mock();
    const cases: Case[] = [
      { name: 'generateText, bare model', turn: (i) => generateText({ model: bare, prompt: `I like green tea, turn ${i}` }), samples: new Samples() },
      { name: 'generateText, mnemoMiddleware', turn: (i) => generateText({ model: generate, prompt: `I like green tea, turn ${i}` }), samples: new Samples() },
      { name: 'generateText, mnemoMiddleware recall: 5', turn: (i) => generateText({ model: recalled, prompt: `I like green tea, turn ${i}` }), samples: new Samples() },
      { name: 'streamText, bare model', turn: (i) => streamText({ model: bareStream, prompt: `I like green tea, turn ${i}` }).text, samples: new Samples() },
      { name: 'streamText, mnemoMiddleware', turn: (i) => streamText({ model: streamed, prompt: `I like green tea, turn ${i}` }).text, samples: new Samples() },
      // For scale: Mnemo's own offline turn (two durable commits; the middleware's store is one).
      { name: 'recall.chat offline (reference)', turn: (i) => runtime.recall.chat({ userId: 'bench', sessionId: 'chat', message: `I like green tea, turn ${i}` }), samples: new Samples() },
    ];
    for (let i = 0; i < 10; i++) for (const c of cases) await c.turn(-i); // warm-up
    for (let i = 0; i < SAMPLES; i++) {
      const order = i % 2 === 0 ? cases : [...cases].reverse();
      for (const c of order) {
        const t0 = performance.now();
        await c.turn(i);
        c.samples.add(performance.now() - t0);
      }
    }
    const p50 = (c: Case) => c.samples.summary().p50Ms;
    console.log(`bench/ai-sdk.ts: ${SAMPLES} turns per case, Node ${process.version}`);
    for (const c of cases) {
      const s = c.samples.summary();
      console.log(`${c.name.padEnd(42)} p50 ${s.p50Ms.toFixed(3)} ms   p99 ${s.p99Ms.toFixed(3)} ms`);
    }
    console.log(`added by the middleware (p50): generateText ${(p50(cases[1]!) - p50(cases[0]!)).toFixed(3)} ms, with recall: 5 ${(p50(cases[2]!) - p50(cases[0]!)).toFixed(3)} ms, streamText ${(p50(cases[4]!) - p50(cases[3]!)).toFixed(3)} ms`);
  } finally {
    await runtime.stop();
  }
});
