/**
 * bench/exactly-once.ts: the two targets of exactly-once appends and forks, as ratios in one run.
 *
 *   npx tsx bench/exactly-once.ts            full sizes
 *   npx tsx bench/exactly-once.ts --quick    small sizes
 *
 * - keys: `runtime.memory.append` throughput (LMDB, flushed before acknowledged) at 100
 *   concurrent conversations, each appending one message at a time, without and with an
 *   idempotency key on every append. Plain and keyed take turns in many short rounds
 *   (A B B A, then B A A B), and the median of the rounds' keyed/plain ratios is reported, so
 *   drift in the machine's load hits both sides of a round alike; beside it, the median ratio
 *   of each round's two plain runs (the noise floor of the machine). Target: keyed ≥ 90% of plain.
 * - floor: the same appends over raw lmdb-js (no Mnemo), with Mnemo's layout (JSON rows
 *   `[conversation, id]` → `{ts, meta, message}`, each put conditional on its id being free,
 *   ack after `flushed`), without and with a second row per append beside the message (a key
 *   row: `[conversation, '\u0001' + key]` → 20 bytes), the two taking turns the same way. It is
 *   what a durable key row per append costs LMDB itself, whatever the code around it.
 * - fork: the latency of `fork` from a conversation of 10 and of 100,000 messages (each fork
 *   into a fresh id, at the source's last message), median of many, plus a `tail(c, 50)` of
 *   the fork. Target: the same cost at both sizes (ratio ≈ 1).
 * Writes bench/results/exactly-once.json.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'lmdb';
import { join } from 'node:path';
import type { Message } from '../src/memory/index.ts';
import { startRuntime, type Runtime } from '../src/runtime.ts';
import { median } from './suite/stats.ts';
import { makeTempDir } from './suite/temp-dir.ts';

const quick = process.argv.includes('--quick');
const sizes = quick ? { conversations: 100, perConversation: 10, repeats: 9, forks: 100 } : { conversations: 100, perConversation: 20, repeats: 31, forks: 500 };

const scratch = makeTempDir('once');
let dirs = 0;
const freshDir = () => {
  const dir = join(scratch, String(dirs++));
  mkdirSync(dir);
  return dir;
};
const messageOf = (i: number): Message => ({
  role: i % 2 === 0 ? 'user' : 'assistant',
  content: `message ${i}: ${'the agent remembers what the user said about the project deadline '.repeat(2)}`,
});

async function appendRun(runtime: Runtime, keyed: boolean, tag: string): Promise<number> {
  const { conversations, perConversation } = sizes;
  // One unmeasured write per conversation: the actor is started.
  await Promise.all(Array.from({ length: conversations }, (_, c) => runtime.memory.append(`${tag}-${c}`, [{ message: messageOf(0) }])));
  const started = performance.now();
  await Promise.all(
    Array.from({ length: conversations }, async (_, c) => {
      for (let i = 1; i <= perConversation; i++) {
        await runtime.memory.append(`${tag}-${c}`, [{ message: messageOf(i) }], keyed ? { idempotencyKey: `${tag}.${c}.${i}` } : undefined);
      }
    }),
  );
  return (conversations * perConversation) / ((performance.now() - started) / 1000);
}

async function benchKeys(): Promise<{ plain: number; keyed: number; ratio: number; ratios: number[]; control: number }> {
  const runtime = await startRuntime({ dataDir: freshDir(), recall: false });
  try {
    const plain: number[] = [];
    const keyed: number[] = [];
    const ratios: number[] = [];
    const controls: number[] = [];
    for (let r = 0; r < sizes.repeats; r++) {
      // A B B A (or B A A B): drift within a round hits both sides alike, and neither side
      // always meets a warmer (or fuller) environment. Ids `${r}p-*` and `${r}k-*` are neighbours
      // in the B-tree, so neither side always writes into the denser end of it.
      const order = r % 2 === 0 ? [false, true, true, false] : [true, false, false, true];
      const runs = { plain: [] as number[], keyed: [] as number[] };
      for (const [i, isKeyed] of order.entries()) (isKeyed ? runs.keyed : runs.plain).push(await appendRun(runtime, isKeyed, `${r}${isKeyed ? 'k' : 'p'}${i}`));
      const [p1, p2] = runs.plain as [number, number];
      const [k1, k2] = runs.keyed as [number, number];
      plain.push(p1, p2);
      keyed.push(k1, k2);
      ratios.push((k1 + k2) / (p1 + p2));
      // The same measurement of plain against plain: how far apart two equal runs land here.
      controls.push(order[0] === false ? p2 / p1 : p1 / p2);
    }
    return { plain: median(plain), keyed: median(keyed), ratio: median(ratios), ratios, control: median(controls) };
  } finally {
    await runtime.stop();
  }
}

/** Raw lmdb-js appends at the same concurrency, one row or two (a key row) per append: the floor. */
async function benchFloor(): Promise<{ ratio: number; ratios: number[] }> {
  const env = open({ path: freshDir(), maxDbs: 2 });
  const rows = env.openDB<object, [string, number]>('messages', { encoding: 'json' });
  const keyRows = env.openDB<Buffer, [string, string]>('messages', { encoding: 'binary' });
  const keyValue = Buffer.alloc(20);
  const ts = new Date().toISOString();
  const run = async (keyed: boolean, tag: string) => {
    const { conversations, perConversation } = sizes;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: conversations }, async (_, c) => {
        const id = `${tag}-${c}`;
        for (let i = 1; i <= perConversation; i++) {
          await rows.ifNoExists([id, i], () => {
            rows.put([id, i], { ts, meta: {}, message: messageOf(i) });
            if (keyed) keyRows.put([id, `\u0001${tag}.${c}.${i}`], keyValue);
          });
          await rows.flushed;
        }
      }),
    );
    return (conversations * perConversation) / ((performance.now() - started) / 1000);
  };
  try {
    const ratios: number[] = [];
    for (let r = 0; r < sizes.repeats; r++) {
      const order = r % 2 === 0 ? [false, true, true, false] : [true, false, false, true];
      const got = { plain: 0, keyed: 0 };
      for (const [i, keyed] of order.entries()) got[keyed ? 'keyed' : 'plain'] += await run(keyed, `${r}${keyed ? 'k' : 'p'}${i}`);
      ratios.push(got.keyed / got.plain);
    }
    return { ratio: median(ratios), ratios };
  } finally {
    await env.close();
  }
}

async function benchFork(): Promise<{ forkMs10: number; forkMs100k: number; ratio: number; tailMs10: number; tailMs100k: number }> {
  const runtime = await startRuntime({ dataDir: freshDir(), recall: false });
  try {
    const fill = async (id: string, n: number) => {
      for (let at = 0; at < n; at += 1000) {
        await runtime.memory.append(id, Array.from({ length: Math.min(1000, n - at) }, (_, i) => ({ message: messageOf(at + i) })));
      }
    };
    await fill('small', 10);
    await fill('large', 100_000);
    const time = async (source: string, at: number, label: string) => {
      const forkMs: number[] = [];
      const tailMs: number[] = [];
      for (let i = 0; i < sizes.forks; i++) {
        const id = `${label}-fork-${i}`;
        let t = performance.now();
        await runtime.memory.fork(source, at, id);
        forkMs.push(performance.now() - t);
        t = performance.now();
        await runtime.memory.tail(id, 50);
        tailMs.push(performance.now() - t);
      }
      return { fork: median(forkMs), tail: median(tailMs) };
    };
    // Interleave the two sizes in rounds, so drift hits both alike.
    const small: Array<{ fork: number; tail: number }> = [];
    const large: Array<{ fork: number; tail: number }> = [];
    for (let round = 0; round < 4; round++) {
      small.push(await time('small', 10, `s${round}`));
      large.push(await time('large', 100_000, `l${round}`));
    }
    const forkMs10 = median(small.map((s) => s.fork));
    const forkMs100k = median(large.map((s) => s.fork));
    return { forkMs10, forkMs100k, ratio: forkMs100k / forkMs10, tailMs10: median(small.map((s) => s.tail)), tailMs100k: median(large.map((s) => s.tail)) };
  } finally {
    await runtime.stop();
  }
}

try {
  const keys = await benchKeys();
  console.log(`append at ${sizes.conversations} conversations: plain ${keys.plain.toFixed(0)} msg/s, keyed ${keys.keyed.toFixed(0)} msg/s, keyed/plain ${keys.ratio.toFixed(3)} (median of ${keys.ratios.length} ABBA rounds; target >= 0.90; plain/plain control ${keys.control.toFixed(3)})`);
  const floor = await benchFloor();
  console.log(`floor, raw lmdb-js at ${sizes.conversations} conversations: two rows per append ÷ one row ${floor.ratio.toFixed(3)} (median of ${floor.ratios.length} ABBA rounds)`);
  const fork = await benchFork();
  console.log(
    `fork: ${fork.forkMs10.toFixed(3)} ms at 10 messages, ${fork.forkMs100k.toFixed(3)} ms at 100,000; ratio ${fork.ratio.toFixed(3)} (target ~1); tail(50) of the fork ${fork.tailMs10.toFixed(3)} / ${fork.tailMs100k.toFixed(3)} ms`,
  );
  mkdirSync(join(import.meta.dirname, 'results'), { recursive: true });
  writeFileSync(join(import.meta.dirname, 'results', 'exactly-once.json'), JSON.stringify({ quick, sizes, keys, floor, fork }, null, 2) + '\n');
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
