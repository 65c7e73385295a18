/**
 * bench/stream.ts: what streaming adds between the model and the client (streaming issue,
 * item 1). Everything on loopback in this one process: the streaming chat-completions stub
 * (test/support), the real runtime (LMDB) and HTTP server, and an SSE client reading
 * `POST /api/chat/stream`. Times are `performance.now()` of the stub writing a token and of
 * the client holding the parsed event.
 * - first token: stub writes its first text chunk → client has the first `delta` event
 *   (p50 / p99 over many turns, each on a fresh session);
 * - per token: a reply of N tokens written back to back; each token's write → its `delta`
 *   (median), and (client's span − stub's span) / N, the time streaming adds per token;
 * - the same two figures for `openAICompatible.stream` alone (no server), to show what is the
 *   official client's and what is Mnemo's.
 *
 *   npx tsx bench/stream.ts           200 turns for first token, 20 × 200 tokens
 *   npx tsx bench/stream.ts --quick   30 turns, 5 × 200 tokens
 */
import { cpus, loadavg } from 'node:os';
import { openAICompatible, type LlmService } from '../src/llm/index.ts';
import { startRuntime } from '../src/runtime.ts';
import { startServer } from '../src/server/index.ts';
import { startChatStub, type ChatStub } from '../test/support/chat-completions-stub.ts';
import { postSse } from '../test/support/sse.ts';
import { Samples } from './suite/stats.ts';
import { withTempDir } from './suite/temp-dir.ts';

const quick = process.argv.includes('--quick');
const FIRST_TOKEN_TURNS = quick ? 30 : 200;
const LONG_TURNS = quick ? 5 : 20;
const TOKENS = 200;
const WARMUP = 5;

const reply = (n: number): string => Array.from({ length: n }, (_, i) => `tok${i} `).join('');

interface Turn {
  /** stub write times of the text tokens */
  written: number[];
  /** client receive times of the deltas */
  received: number[];
}

async function overSse(url: string, stub: ChatStub, session: string): Promise<Turn> {
  const before = stub.tokenTimes.length;
  const received: number[] = [];
  const stream = await postSse(url, '/api/chat/stream', { user_id: 'bench', session_id: session, message: 'go' }, (e) => {
    if (e.event === 'delta') received.push(e.at);
  });
  const events = await stream.done;
  if (events.at(-1)?.event !== 'done') throw new Error(`stream ended with ${JSON.stringify(events.at(-1))}`);
  return { written: stub.tokenTimes[before]!, received };
}

async function direct(llm: LlmService, stub: ChatStub): Promise<Turn> {
  const before = stub.tokenTimes.length;
  const received: number[] = [];
  // With a tool offered, as a turn's call is (the stub answers a call without tools as a title).
  const tools = [{ name: 'search_session', description: 'search', parameters: { type: 'object', properties: {} } }];
  for await (const e of llm.stream!([{ role: 'user', content: 'go' }], { tools })) {
    if (e.type === 'text') received.push(performance.now());
  }
  return { written: stub.tokenTimes[before]!, received };
}

function firstToken(turns: Turn[]): Samples {
  const s = new Samples();
  for (const t of turns) s.add(t.received[0]! - t.written[0]!);
  return s;
}

function perToken(turns: Turn[]): { tokenLatency: Samples; addedPerTokenMs: number; stubSpanMs: number; clientSpanMs: number } {
  const tokenLatency = new Samples();
  let added = 0;
  let stubSpan = 0;
  let clientSpan = 0;
  for (const t of turns) {
    if (t.received.length !== t.written.length) throw new Error(`${t.written.length} tokens written, ${t.received.length} received`);
    for (let i = 0; i < t.written.length; i++) tokenLatency.add(t.received[i]! - t.written[i]!);
    const s = t.written.at(-1)! - t.written[0]!;
    const c = t.received.at(-1)! - t.written[0]!;
    stubSpan += s;
    clientSpan += c;
    added += (c - s) / t.written.length;
  }
  return { tokenLatency, addedPerTokenMs: added / turns.length, stubSpanMs: stubSpan / turns.length, clientSpanMs: clientSpan / turns.length };
}

async function scenario(tokens: number, turns: number, run: (stub: ChatStub, i: number) => Promise<Turn>, stub: ChatStub): Promise<Turn[]> {
  const out: Turn[] = [];
  for (let i = 0; i < WARMUP + turns; i++) {
    const t = await run(stub, i);
    if (t.written.length !== tokens) throw new Error(`expected ${tokens} tokens, got ${t.written.length}`);
    if (i >= WARMUP) out.push(t);
  }
  return out;
}

const f = (ms: number): string => `${ms.toFixed(3)} ms`;

await withTempDir('mnemo-bench-stream-', async (dir) => {
  let tokens = 1;
  const stub = await startChatStub({ toolCall: () => null, answer: () => reply(tokens), title: () => 'bench' });
  const llm = openAICompatible({ apiKey: 'bench', baseURL: stub.baseURL, model: 'stub', maxRetries: 0 });
  const runtime = await startRuntime({ name: 'mnemo_bench_stream', dataDir: dir, storage: 'lmdb', recall: { llm } });
  const server = await startServer({ recall: runtime.recall, runtime, host: '127.0.0.1', port: 0 });
  try {
    tokens = 3;
    const sseFirst = await scenario(3, FIRST_TOKEN_TURNS, (s, i) => overSse(server.url, s, `first${i}`), stub);
    const llmFirst = await scenario(3, FIRST_TOKEN_TURNS, (s) => direct(llm, s), stub);
    tokens = TOKENS;
    const sseLong = await scenario(TOKENS, LONG_TURNS, (s, i) => overSse(server.url, s, `long${i}`), stub);
    const llmLong = await scenario(TOKENS, LONG_TURNS, (s) => direct(llm, s), stub);

    const rows: [string, Samples, ReturnType<typeof perToken>][] = [
      ['POST /api/chat/stream', firstToken(sseFirst), perToken(sseLong)],
      ['openAICompatible.stream alone', firstToken(llmFirst), perToken(llmLong)],
    ];
    console.log(`# stream bench${quick ? ' (quick)' : ''}: ${cpus().length} cpus, load ${loadavg()[0]!.toFixed(2)}, node ${process.version}`);
    console.log(`first token: ${FIRST_TOKEN_TURNS} turns; per token: ${LONG_TURNS} turns × ${TOKENS} tokens\n`);
    console.log('| path | first token p50 | first token p99 | per-token latency p50 | added per token | stub span | client span |');
    console.log('|---|---|---|---|---|---|---|');
    for (const [name, first, long] of rows) {
      const a = first.summary();
      const t = long.tokenLatency.summary();
      console.log(`| ${name} | ${f(a.p50Ms)} | ${f(a.p99Ms)} | ${f(t.p50Ms)} | ${f(long.addedPerTokenMs)} | ${f(long.stubSpanMs)} | ${f(long.clientSpanMs)} |`);
    }
  } finally {
    await server.close();
    await runtime.stop();
    await stub.close();
  }
});
