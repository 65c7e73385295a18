/**
 * What activating a conversation costs: process CPU (`process.cpuUsage()`, every thread) of the
 * first durable write to each of N new conversations (the actor's start under the conversation
 * supervisor, its hydration, the write's commit) against the second write to each of them (the
 * steady path), N at once, through `runtime.memory.add` on LMDB. The difference is the
 * activation. Median of the rounds; each round takes N new conversations. With `--promises`,
 * it also counts the promises made per write (async_hooks PROMISE inits: deterministic, where
 * the timings are not on a shared machine); the hook slows every promise, so time without it.
 *
 *   npx tsx bench/activation.ts [--conversations 1000] [--rounds 8] [--promises]
 */
import { createHook } from 'node:async_hooks';
import { startRuntime } from '../src/runtime.ts';
import type { Message } from '../src/memory/index.ts';
import { median } from './suite/stats.ts';
import { withTempDir } from './suite/temp-dir.ts';

const args = process.argv.slice(2);
const arg = (name: string, fallback: number): number => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? Number(args[i + 1]) : fallback;
};
const conversations = arg('conversations', 1000);
const rounds = arg('rounds', 8);
const countPromises = args.includes('--promises');
let promises = 0;
const promiseHook = createHook({
  init(_id, type) {
    if (type === 'PROMISE') promises++;
  },
});
const message = (i: number): Message => ({ role: 'user', content: `message ${i}: the agent remembers what the user said about the project deadline` });

/** CPU µs (and promises) per write of one `add` to each of `ids`, all at once. */
async function cpuPerWrite(add: (id: string) => Promise<void>, ids: readonly string[], made: number[]): Promise<number> {
  promises = 0;
  if (countPromises) promiseHook.enable();
  const before = process.cpuUsage();
  await Promise.all(ids.map(add));
  const used = process.cpuUsage(before);
  promiseHook.disable();
  made.push(promises / ids.length);
  return (used.user + used.system) / ids.length;
}

await withTempDir('activation', async (dir) => {
  const runtime = await startRuntime({ dataDir: dir, recall: false });
  try {
    const first: number[] = [];
    const second: number[] = [];
    const firstPromises: number[] = [];
    const secondPromises: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const ids = Array.from({ length: conversations }, (_, c) => `round${r}-c${c}`);
      first.push(await cpuPerWrite((id) => runtime.memory.add(id, [message(1)]), ids, firstPromises));
      second.push(await cpuPerWrite((id) => runtime.memory.add(id, [message(2)]), ids, secondPromises));
    }
    // The first round warms the JIT and the environment: left out when there are others.
    const keep = (xs: number[]) => (xs.length > 1 ? xs.slice(1) : xs);
    const [f, s] = [median(keep(first)), median(keep(second))];
    console.log(
      `${conversations} conversations, ${rounds} rounds: first write ${f.toFixed(1)} µs CPU, second ${s.toFixed(1)} µs; activation ≈ ${(f - s).toFixed(1)} µs per conversation`,
    );
    if (countPromises) console.log(`promises per write: first ${median(keep(firstPromises)).toFixed(1)}, second ${median(keep(secondPromises)).toFixed(1)}`);
  } finally {
    await runtime.stop();
  }
});
