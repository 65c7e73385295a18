/**
 * What activating a conversation costs: process CPU (`process.cpuUsage()`, every thread) of the
 * first durable write to each of N new conversations (the actor's start under the conversation
 * supervisor, its hydration, the write's commit) against the second write to each of them (the
 * steady path), N at once, through `runtime.memory.add` on LMDB. The difference is the
 * activation. Median of the rounds; each round takes N new conversations.
 *
 *   npx tsx bench/activation.ts [--conversations 1000] [--rounds 8]
 */
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
const message = (i: number): Message => ({ role: 'user', content: `message ${i}: the agent remembers what the user said about the project deadline` });

/** CPU µs per write of one `add` to each of `ids`, all at once. */
async function cpuPerWrite(add: (id: string) => Promise<void>, ids: readonly string[]): Promise<number> {
  const before = process.cpuUsage();
  await Promise.all(ids.map(add));
  const used = process.cpuUsage(before);
  return (used.user + used.system) / ids.length;
}

await withTempDir('activation', async (dir) => {
  const runtime = await startRuntime({ dataDir: dir, recall: false });
  try {
    const first: number[] = [];
    const second: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const ids = Array.from({ length: conversations }, (_, c) => `round${r}-c${c}`);
      first.push(await cpuPerWrite((id) => runtime.memory.add(id, [message(1)]), ids));
      second.push(await cpuPerWrite((id) => runtime.memory.add(id, [message(2)]), ids));
    }
    // The first round warms the JIT and the environment: left out when there are others.
    const keep = (xs: number[]) => (xs.length > 1 ? xs.slice(1) : xs);
    const [f, s] = [median(keep(first)), median(keep(second))];
    console.log(
      `${conversations} conversations, ${rounds} rounds: first write ${f.toFixed(1)} µs CPU, second ${s.toFixed(1)} µs; activation ≈ ${(f - s).toFixed(1)} µs per conversation`,
    );
  } finally {
    await runtime.stop();
  }
});
