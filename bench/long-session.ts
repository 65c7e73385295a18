/**
 * bench/long-session.ts: one session of many turns through the real HTTP server (loopback, the
 * runtime's LMDB, recall as `mnemo` runs it: language `auto`, rolling summaries on) with a
 * scripted OpenAI-compatible model (test/support/chat-completions-stub.ts). It reports what the
 * model is sent per turn (o200k tokens of the chat request's messages, and of its tool
 * definitions) at turn 50 and at the last turn, and whether a fact the user stated in turn 3
 * is still in what the model is sent at the last turn, and where (the `[SUMMARY]` section).
 *
 * The scripted model: a chat request (it offers tools) is answered at once with a short reply,
 * no tool call; a title request with a title; a summary request (recall's summarizer: a system
 * instruction, no tools) with a summary that carries over the facts the previous summary listed
 * and adds the user's new "my ... is ..." sentences, plus one line naming the latest topics, as
 * the summary instruction asks of a model. Deterministic: token counts are the same every run.
 *
 *   npx tsx bench/long-session.ts                 2,000 turns, summaries on
 *   npx tsx bench/long-session.ts --turns 300
 *   npx tsx bench/long-session.ts --no-summary    the same without summaries (the Demo's context)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { openAICompatible } from '../src/llm/index.ts';
import { o200kTokenCounter } from '../src/provider/token-counter.ts';
import type { Message } from '../src/message.ts';
import { startRuntime } from '../src/runtime.ts';
import { startServer } from '../src/server/index.ts';
import { completion, startChatStub } from '../test/support/chat-completions-stub.ts';
import { http } from '../test/support/http.ts';

export interface LongSessionOptions {
  turns: number;
  /** Rolling summaries on (recall's default) or off. */
  summary: boolean;
  /** LMDB without fsync (tests): the token counts do not depend on it. Default false. */
  noSync?: boolean;
  /** Told of progress, every 250 turns. */
  log?: (line: string) => void;
}

export interface TurnInput {
  turn: number;
  /** o200k tokens of the chat request's messages (system prompt with the memory context, and the user's message). */
  messageTokens: number;
  /** o200k tokens of its tool definitions (JSON), the same every turn. */
  toolTokens: number;
  total: number;
  /** The `[SUMMARY]` section's text in the system prompt, `''` when none. */
  summary: string;
  system: string;
}

export interface LongSessionResult {
  turns: number;
  summary: boolean;
  at50: TurnInput;
  last: TurnInput;
  /** `last.total / at50.total`. */
  ratio: number;
  /** The turn-3 fact's words are in what the model got at the last turn, and where. */
  factAtLast: { inContext: boolean; inSummary: boolean };
  summaryRequests: number;
  summaries: number;
  /** The largest model input of any turn (total tokens) and its turn. */
  peak: { turn: number; total: number };
  wallMs: number;
}

export const FACT_TURN = 3;
const FACT = 'By the way, my favourite city is Lisbon and I go there every spring.';
const LATER_FACT = 'Also, my dog is called Pixel and she is four years old.';
const TOPICS = ['the weather', 'a book about rivers', 'sourdough bread', 'the train timetable', 'a chess opening', 'garden tomatoes', 'a film from 1962', 'the new bike lane'];

/** The user's message of turn `i` (from 1): the fact at turn 3, another halfway, small talk otherwise. */
export function message(i: number, turns: number): string {
  if (i === FACT_TURN) return FACT;
  if (i === Math.floor(turns / 2)) return LATER_FACT;
  return `Turn ${i}: let us talk about ${TOPICS[i % TOPICS.length]} for a while, nothing important, just passing the time.`;
}

/** The scripted summarizer: the facts listed before, the new "my ... is ..." sentences, the latest topics. */
export function scriptedSummary(request: string): string {
  const [, previous = '', fresh = ''] = /^Previous summary:\n([\s\S]*?)\n\nNew messages:\n([\s\S]*)$/.exec(request) ?? [];
  const facts = previous.split('\n').filter((l) => l.startsWith('- '));
  const said = fresh.split('\n').filter((l) => l.startsWith('user: ')).map((l) => l.slice('user: '.length));
  for (const line of said) {
    const fact = /\bmy [^.]* is [^.]*\./i.exec(line)?.[0];
    if (fact !== undefined && !facts.includes(`- ${fact}`)) facts.push(`- ${fact}`);
  }
  const topics = [...new Set(said.map((l) => /talk about (.+?) for a while/.exec(l)?.[1]).filter((t): t is string => t !== undefined))].slice(-3);
  return ['Facts the user stated:', ...facts, `Lately: ${topics.join(', ') || 'small talk'}.`].join('\n');
}

export async function runLongSession(options: LongSessionOptions): Promise<LongSessionResult> {
  const count = await o200kTokenCounter();
  const textTokens = (text: string) => count({ role: 'assistant', content: text }) - count({ role: 'assistant', content: '' });
  const inputs: TurnInput[] = [];
  let summaryRequests = 0;
  const stub = await startChatStub({
    reply: (body) => {
      const messages = (body['messages'] ?? []) as Message[];
      const tools = body['tools'] as unknown[] | undefined;
      const text = (m: Message | undefined) => (typeof m?.content === 'string' ? m.content : '');
      if (tools !== undefined && tools.length > 0) {
        const system = text(messages[0]);
        const user = text(messages.at(-1));
        const messageTokens = messages.reduce((sum, m) => sum + count(m), 0);
        const toolTokens = textTokens(JSON.stringify(tools));
        const summary = /^\[SUMMARY\]\n([\s\S]*?)\n\[SESSION\]\n/m.exec(system)?.[1] ?? '';
        inputs.push({ turn: inputs.length + 1, messageTokens, toolTokens, total: messageTokens + toolTokens, summary, system });
        return completion({ content: `Noted: ${user.split(/\s+/).slice(0, 8).join(' ')}` });
      }
      if (messages[0]?.role === 'system') {
        summaryRequests++;
        return completion({ content: scriptedSummary(text(messages[1])) });
      }
      return completion({ content: 'Small talk and a favourite city' });
    },
  });
  const dataDir = mkdtempSync(join(tmpdir(), 'mnemo-long-session-'));
  const llm = openAICompatible({ apiKey: 'sk-bench', baseURL: stub.baseURL, model: 'stub-model', maxRetries: 0 });
  const runtime = await startRuntime({
    name: `long_session_${process.pid}`,
    dataDir,
    storage: 'lmdb',
    ...(options.noSync ? { lmdb: { noSync: true } } : {}),
    recall: { llm, language: 'auto', pool: false, ...(options.summary ? {} : { summary: false }) },
  });
  const server = await startServer({ recall: runtime.recall, runtime, host: '127.0.0.1', port: 0, rateLimitPerMinute: 0 });
  const started = performance.now();
  try {
    for (let i = 1; i <= options.turns; i++) {
      const res = await http(server.url, 'POST', '/api/chat', { body: { user_id: 'bench', session_id: 'long', message: message(i, options.turns) } });
      if (res.status !== 200) throw new Error(`turn ${i}: ${res.status} ${res.text}`);
      if (inputs.length !== i) throw new Error(`turn ${i}: expected one chat request per turn, got ${inputs.length}`);
      if (i % 250 === 0) options.log?.(`  turn ${i}: ${inputs[i - 1]!.total} tokens in`);
    }
    const wallMs = performance.now() - started;
    await runtime.recall.summaryIdle();
    const summaries = (await http(server.url, 'GET', '/api/conversations/long/summaries?user_id=bench')).json as { items: unknown[] };
    const at50 = inputs[Math.min(50, inputs.length) - 1]!;
    const last = inputs.at(-1)!;
    const peak = inputs.reduce((a, b) => (b.total > a.total ? b : a));
    return {
      turns: options.turns,
      summary: options.summary,
      at50,
      last,
      ratio: last.total / at50.total,
      factAtLast: { inContext: last.system.includes('Lisbon'), inSummary: last.summary.includes('Lisbon') },
      summaryRequests,
      summaries: summaries.items.length,
      peak: { turn: peak.turn, total: peak.total },
      wallMs,
    };
  } finally {
    await server.close();
    await runtime.stop();
    await stub.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const at = args.indexOf('--turns');
  const turns = at >= 0 ? Number(args[at + 1]) : 2_000;
  if (!Number.isSafeInteger(turns) || turns < 50) throw new Error('--turns must be a whole number from 50');
  const summary = !args.includes('--no-summary');
  console.log(`long session: ${turns} turns through the server, summaries ${summary ? 'on' : 'off'}`);
  const r = await runLongSession({ turns, summary, log: console.log });
  const row = (t: TurnInput) => `${t.total} tokens (messages ${t.messageTokens}, tools ${t.toolTokens}; [SUMMARY] ${t.summary === '' ? 'none' : `${t.summary.length} chars`})`;
  console.log(`model input at turn 50:    ${row(r.at50)}`);
  console.log(`model input at turn ${r.turns}: ${row(r.last)}`);
  console.log(`ratio ${r.ratio.toFixed(3)} (bound 1.2); peak ${r.peak.total} at turn ${r.peak.turn}`);
  console.log(`turn-3 fact at turn ${r.turns}: in the context ${r.factAtLast.inContext}, in [SUMMARY] ${r.factAtLast.inSummary}`);
  console.log(`summary requests ${r.summaryRequests}, summaries stored ${r.summaries}; ${(r.wallMs / r.turns).toFixed(1)} ms a turn`);
  if (r.summary) console.log(`[SUMMARY] at turn ${r.turns}:\n${r.last.summary}`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
