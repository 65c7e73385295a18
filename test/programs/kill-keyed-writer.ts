/**
 * The writer of the exactly-once kill test: starts a runtime on a data directory, first retries
 * every write the previous (killed) writer left unacknowledged, with the same idempotency key,
 * then appends new keyed batches to many conversations until it is killed. Lines on stdout
 * (a pipe: written synchronously, so a line printed survives the kill):
 *
 * - `ready` once the runtime is up;
 * - `try <conversation> <key> <size>` before a new keyed append is issued;
 * - `ack <conversation> <key> <firstId> <size>` after an append (new or retried) resolved.
 *
 * A batch's messages are `<key>#0`, `<key>#1`, ... so a retry carries the same content.
 *
 * Usage: tsx kill-keyed-writer.ts <data dir> <round> <conversations> <retry json file>
 */
import { readFileSync } from 'node:fs';
import { startRuntime } from '../../src/runtime.ts';

interface Pending {
  conversation: string;
  key: string;
  size: number;
}

const [dir, round, count, retryFile] = [process.argv[2]!, Number(process.argv[3]), Number(process.argv[4]), process.argv[5]!];
const pending = JSON.parse(readFileSync(retryFile, 'utf8')) as Pending[];
const runtime = await startRuntime({ dataDir: dir, idleMs: round % 2 === 0 ? 20 : 60_000 });
process.stdout.write('ready\n');

const entries = (key: string, size: number) => Array.from({ length: size }, (_, i) => ({ message: { role: 'user' as const, content: `${key}#${i}` } }));

async function send(p: Pending): Promise<void> {
  const records = await runtime.memory.append(p.conversation, entries(p.key, p.size), { idempotencyKey: p.key });
  process.stdout.write(`ack ${p.conversation} ${p.key} ${records[0]!.message_id} ${records.length}\n`);
}

async function writer(conversation: string, lane: number): Promise<void> {
  for (let k = 0; ; k++) {
    const p = { conversation, key: `r${round}.${lane}.${k}`, size: 1 + ((k + lane) % 3) };
    process.stdout.write(`try ${p.conversation} ${p.key} ${p.size}\n`);
    await send(p);
    if (k % 10 === 9) await new Promise((r) => setTimeout(r, 1 + (k % 30)));
  }
}

// Retries first (each lane's unacknowledged write is its last), then new writes.
await Promise.all(pending.map(send));
for (let c = 0; c < count; c++) {
  for (let lane = 0; lane < 2; lane++) void writer(`conv-${c}`, lane);
}
