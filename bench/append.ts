/**
 * bench/append.ts: the conversation memory on its own (issue 3), next to raw lmdb-js.
 *
 *   npx tsx bench/append.ts            full sizes
 *   npx tsx bench/append.ts --quick    small sizes (well under a minute)
 *
 * One run, the same records and the same durability everywhere: every write is awaited, then
 * `flushed` (fdatasync) before it counts as acknowledged. Rows:
 * - append: throughput and p50/p99 latency at 1, 100 and 1000 concurrent conversations, each
 *   conversation appending one message at a time, for raw lmdb-js (the limit: the same key
 *   `[conversationId, id]` and JSON value, ids counted in memory), Mnemo's standalone LMDB store
 *   (no actors), and `runtime.memory` (the product path: a per-conversation actor each). Every
 *   conversation first writes one unmeasured message (for the runtime, that starts its actor;
 *   the cost of that first use is reported on its own as `activation`). Contenders take turns
 *   within each repeat; the median repeat is reported;
 * - tail: `runtime.memory.tail(c, 50)` on conversations of 100, 10k and 100k messages;
 * - restart: from `startRuntime` to the first read answered, with 1M messages on disk;
 * - rss: the process RSS after 100k conversations were touched and have passivated (in a
 *   fresh child process, from just after `startRuntime` to after the passivation).
 * Figures are printed with ratios and targets, and written to bench/results/append.json.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { open } from 'lmdb';
import { createLmdbStore, isoWithOffset, type Message } from '../src/memory/index.ts';
import { startRuntime } from '../src/runtime.ts';
import { Samples } from './suite/stats.ts';
import { makeTempDir } from './suite/temp-dir.ts';

const quick = process.argv.includes('--quick');
/** `--rss-child`: measure only RSS, in a fresh process, and print it as JSON (see `rssInChild`). */
const rssChild = process.argv.includes('--rss-child');
const sizes = quick
  ? { append: [[1, 300], [100, 20], [1000, 5]], repeats: 1, tail: [100, 10_000, 100_000], tailReads: 2000, restart: 100_000, rss: 10_000 }
  : { append: [[1, 2000], [100, 100], [1000, 30]], repeats: 3, tail: [100, 10_000, 100_000], tailReads: 10_000, restart: 1_000_000, rss: 100_000 };

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const scratch = makeTempDir('append');
let dirs = 0;
const freshDir = () => {
  const dir = join(scratch, String(dirs++));
  mkdirSync(dir);
  return dir;
};
const yieldTurn = () => new Promise((r) => setTimeout(r, 0));

/** The message every contender writes (about 200 bytes, like a chat turn). */
const messageOf = (c: number, i: number): Message => ({
  role: i % 2 === 0 ? 'user' : 'assistant',
  content: `message ${i} of conversation ${c}: ${'the agent remembers what the user said about the project deadline '.repeat(2)}`,
});
const conversationId = (c: number) => `conversation-${c}`;

interface AppendFigures {
  messagesPerSecond: number;
  p50Ms: number;
  p99Ms: number;
}

/** `conversations` loops, each appending `perConversation` messages one at a time, after one
 * unmeasured warm-up message each (returned: how long those first appends took). */
async function measureAppend(
  conversations: number,
  perConversation: number,
  append: (c: number, i: number) => Promise<unknown>,
): Promise<AppendFigures & { warmUpMs: number }> {
  const warmStart = performance.now();
  await Promise.all(Array.from({ length: conversations }, (_, c) => append(c, 0)));
  const warmUpMs = performance.now() - warmStart;
  const latencies = new Float64Array(conversations * perConversation);
  let n = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: conversations }, async (_, c) => {
      for (let i = 1; i <= perConversation; i++) {
        const t = performance.now();
        await append(c, i);
        latencies[n++] = performance.now() - t;
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  const summary = new Samples();
  for (const ms of latencies) summary.add(ms);
  const { p50Ms, p99Ms } = summary.summary();
  return { messagesPerSecond: latencies.length / seconds, p50Ms, p99Ms, warmUpMs };
}

type Measured = AppendFigures & { warmUpMs: number };

async function rawLmdb(conversations: number, perConversation: number): Promise<Measured> {
  const root = open({ path: freshDir() });
  const db = root.openDB('messages', { encoding: 'json' });
  const figures = await measureAppend(conversations, perConversation, async (c, i) => {
    await db.put([conversationId(c), i + 1], { ts: isoWithOffset(Date.now()), meta: {}, message: messageOf(c, i) });
    await db.flushed;
  });
  await yieldTurn();
  await root.close();
  return figures;
}

async function standaloneStore(conversations: number, perConversation: number): Promise<Measured> {
  const store = createLmdbStore({ path: freshDir() });
  const figures = await measureAppend(conversations, perConversation, (c, i) => store.add(conversationId(c), [messageOf(c, i)]));
  await store.close();
  return figures;
}

async function runtimeMemory(conversations: number, perConversation: number): Promise<Measured> {
  const runtime = await startRuntime({ name: `bench-append-${dirs}`, dataDir: freshDir() });
  const figures = await measureAppend(conversations, perConversation, (c, i) => runtime.memory.add(conversationId(c), [messageOf(c, i)]));
  await runtime.stop();
  return figures;
}

/** Writes `count` messages to conversation `c` with raw lmdb-js, 10k per commit. */
async function bulkLoad(root: ReturnType<typeof open>, c: string, count: number, from = 1): Promise<void> {
  const db = root.openDB('messages', { encoding: 'json' });
  const ts = isoWithOffset(Date.now());
  for (let i = 0; i < count; i += 10_000) {
    let last: Promise<boolean> | undefined;
    for (let k = i; k < Math.min(count, i + 10_000); k++) last = db.put([c, from + k], { ts, meta: {}, message: messageOf(0, k) });
    await last;
  }
  await db.flushed;
}

async function tails(): Promise<Array<{ length: number; microsPerRead: number }>> {
  const dir = freshDir();
  const root = open({ path: dir });
  for (const length of sizes.tail) await bulkLoad(root, `tail-${length}`, length);
  await yieldTurn();
  await root.close();
  const runtime = await startRuntime({ name: 'bench-tail', dataDir: dir });
  const out = [];
  for (const length of sizes.tail) {
    for (let i = 0; i < 200; i++) await runtime.memory.tail(`tail-${length}`, 50); // warm up
    const start = performance.now();
    for (let i = 0; i < sizes.tailReads; i++) await runtime.memory.tail(`tail-${length}`, 50);
    out.push({ length, microsPerRead: ((performance.now() - start) * 1000) / sizes.tailReads });
  }
  await runtime.stop();
  return out;
}

async function restart(): Promise<{ messages: number; conversations: number; firstReadMs: number; firstWriteMs: number }> {
  const dir = freshDir();
  const conversations = sizes.restart / 100;
  const root = open({ path: dir });
  const db = root.openDB('messages', { encoding: 'json' });
  const ts = isoWithOffset(Date.now());
  for (let c = 0; c < conversations; c += 100) {
    let last: Promise<boolean> | undefined;
    for (let k = c; k < c + 100; k++) for (let i = 1; i <= 100; i++) last = db.put([conversationId(k), i], { ts, meta: {}, message: messageOf(k, i) });
    await last;
  }
  await db.flushed;
  await yieldTurn();
  await root.close();
  const start = performance.now();
  const runtime = await startRuntime({ name: 'bench-restart', dataDir: dir });
  const tail = await runtime.memory.tail(conversationId(conversations - 1), 50);
  const firstReadMs = performance.now() - start;
  if (tail.length !== 50) throw new Error('restart: first read returned the wrong rows');
  const beforeWrite = performance.now();
  const [record] = await runtime.memory.append(conversationId(7), [{ message: messageOf(7, 101) }]);
  const firstWriteMs = performance.now() - beforeWrite;
  if (record?.message_id !== 101) throw new Error('restart: numbering did not continue');
  await runtime.stop();
  return { messages: sizes.restart, conversations, firstReadMs, firstWriteMs };
}

const mb = (bytes: number) => bytes / (1024 * 1024);

interface RssFigures {
  conversations: number;
  beforeMB: number;
  afterMB: number;
  growthMB: number;
  heapBeforeMB: number;
  heapAfterMB: number;
}

/** RSS is measured in a fresh process, so what the other rows left behind is not counted. */
function rssInChild(): RssFigures {
  const script = new URL(import.meta.url).pathname;
  const out = execFileSync(process.execPath, ['--import', 'tsx', script, '--rss-child', ...(quick ? ['--quick'] : [])], { encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').pop()!) as RssFigures;
}

async function rss(): Promise<RssFigures> {
  const idleMs = 500;
  const runtime = await startRuntime({ name: 'bench-rss', dataDir: freshDir(), idleMs });
  await runtime.memory.add('warm-up', [messageOf(0, 0)]);
  gc();
  const before = process.memoryUsage();
  const inFlight = 1000;
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < sizes.rss) {
        const c = next++;
        await runtime.memory.add(`touch-${c}`, [messageOf(c, 0)]);
      }
    }),
  );
  const conversationsLeft = () => runtime.inspect().children.find((n) => n.id === 'conversations')!.children.length;
  while (conversationsLeft() > 0) await new Promise((r) => setTimeout(r, idleMs));
  // V8 gives back the heap it grew during the burst over a few collections, not one.
  for (let i = 0; i < 5; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 200));
  }
  const after = process.memoryUsage();
  await runtime.stop();
  return {
    conversations: sizes.rss,
    beforeMB: mb(before.rss),
    afterMB: mb(after.rss),
    growthMB: mb(after.rss - before.rss),
    heapBeforeMB: mb(before.heapUsed),
    heapAfterMB: mb(after.heapUsed),
  };
}

if (rssChild) {
  process.stdout.write(JSON.stringify(await rss()) + '\n');
  rmSync(scratch, { recursive: true, force: true });
  process.exit(0);
}

const line = (s: string) => process.stdout.write(`${s}\n`);
const f0 = (n: number) => n.toFixed(0);
const f2 = (n: number) => n.toFixed(2);

line(`Mnemo append bench (${quick ? 'quick' : 'full'}) on ${cpus().length} CPUs, load ${loadavg().map((l) => l.toFixed(2)).join(' ')}, node ${process.version}`);
line('');
line('append (durable: awaited write + flushed), messages/s and latency p50/p99 ms');
const append = [];
const median = (runs: Measured[]) => [...runs].sort((a, b) => a.messagesPerSecond - b.messagesPerSecond)[Math.floor(runs.length / 2)]!;
for (const [conversations, perConversation] of sizes.append as Array<[number, number]>) {
  const runs = { raw: [] as Measured[], store: [] as Measured[], mnemo: [] as Measured[] };
  for (let r = 0; r < sizes.repeats; r++) {
    runs.raw.push(await rawLmdb(conversations, perConversation));
    runs.store.push(await standaloneStore(conversations, perConversation));
    runs.mnemo.push(await runtimeMemory(conversations, perConversation));
  }
  const [raw, store, mnemo] = [median(runs.raw), median(runs.store), median(runs.mnemo)];
  const ratio = mnemo.messagesPerSecond / raw.messagesPerSecond;
  const activation = { conversations, ms: mnemo.warmUpMs, perConversationUs: (mnemo.warmUpMs * 1000) / conversations };
  append.push({ conversations, perConversation, repeats: sizes.repeats, raw, store, mnemo, ratioToRaw: ratio, storeRatioToRaw: store.messagesPerSecond / raw.messagesPerSecond, activation });
  const cell = (x: AppendFigures) => `${f0(x.messagesPerSecond).padStart(6)}/s ${f2(x.p50Ms)}/${f2(x.p99Ms)}`;
  line(
    `  ${String(conversations).padStart(4)} conv: raw ${cell(raw)} | store ${cell(store)} | runtime ${cell(mnemo)} | store/raw ${f2(store.messagesPerSecond / raw.messagesPerSecond)} runtime/raw ${f2(ratio)}`,
  );
}
line('activation (first append of each conversation through the runtime, actor start included):');
for (const a of append) line(`  ${String(a.conversations).padStart(4)} conversations: ${f0(a.activation.ms)} ms (${f0(a.activation.perConversationUs)} µs each)`);
line('');
const tail = await tails();
line('tail(c, 50) through runtime.memory, µs per read');
for (const t of tail) line(`  ${String(t.length).padStart(6)} messages: ${f2(t.microsPerRead)} µs`);
const tailRatio = tail[tail.length - 1]!.microsPerRead / tail[0]!.microsPerRead;
line(`  ${sizes.tail[sizes.tail.length - 1]} vs ${sizes.tail[0]}: ${f2(tailRatio)}x`);
line('');
const restarted = await restart();
line(`restart: ${restarted.messages} messages in ${restarted.conversations} conversations on disk; startRuntime to first read ${f2(restarted.firstReadMs)} ms, then first write ${f2(restarted.firstWriteMs)} ms`);
line('');
const memory = rssInChild();
line(`rss: ${memory.conversations} conversations touched and passivated: ${f0(memory.beforeMB)} MB -> ${f0(memory.afterMB)} MB (+${f0(memory.growthMB)} MB; heap ${f0(memory.heapBeforeMB)} -> ${f0(memory.heapAfterMB)} MB)`);
line('');

const atLeast100 = append.filter((a) => a.conversations >= 100);
const targets = {
  appendAt100PlusAtLeastHalfOfRaw: atLeast100.every((a) => a.ratioToRaw >= 0.5),
  tailAt100kWithin2xOf100: tailRatio <= 2,
  restartToFirstReadUnder200ms: restarted.firstReadMs <= 200,
  rssGrowthUnder100MB: memory.growthMB <= 100,
};
line('targets (reported, not asserted):');
for (const [name, met] of Object.entries(targets)) line(`  ${met ? 'met   ' : 'MISSED'} ${name}`);

const results = {
  bench: 'append',
  mode: quick ? 'quick' : 'full',
  at: new Date().toISOString(),
  machine: { cpus: cpus().length, model: cpus()[0]?.model, node: process.version, load: loadavg() },
  append,
  tail: { reads: sizes.tailReads, rows: tail, ratioLongestToShortest: tailRatio },
  restart: restarted,
  rss: memory,
  targets,
};
const out = join(dirname(new URL(import.meta.url).pathname), 'results', 'append.json');
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, JSON.stringify(results, null, 2) + '\n');
line(`wrote ${out}`);
rmSync(scratch, { recursive: true, force: true });
