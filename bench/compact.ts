/**
 * `npx tsx bench/compact.ts [--mb 1024] [--runs 3] [--copy pages|rebuild] [--words 400] [--dir DIR]`:
 * the pause of `runtime.compact({ copy })` on a data directory of about `--mb` MiB of messages
 * (default 1 GiB; `--copy rebuild` is what `eraseUser(u, { compact: true })` runs).
 *
 * Fills a runtime (LMDB, the layered memory on with its search pool, as `mnemo` runs) with
 * appends to 200 conversations (20 messages of `--words` words, ~6 bytes each, per append) until
 * `data.mdb` reaches the size, clears a tenth of the conversations (free pages, as an erasure
 * leaves), then compacts
 * `--runs` times. Each run reports: data.mdb before and after; the holder's settle, copy, swap
 * and reopen (`ms`); the pause (`pauseMs`: from the first write held to the last child running
 * again); and the wait of one append issued at the start of the pause (when every child is
 * stopped), resolved after it. The page cache holds the file (the machine has the RAM): a cold
 * cache adds the read of the live pages. `--dir` keeps the filled directory for another run.
 */
import { mkdtempSync, rmSync, statSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRuntime } from '../src/runtime.ts';
import { createFaultInjector } from '../src/memory/runtime/fault-injector.ts';

const flag = (name: string, fallback: string): string => {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? process.argv[at + 1]! : fallback;
};
const targetBytes = Number(flag('mb', '1024')) * 1024 * 1024;
const runs = Number(flag('runs', '3'));
const copy = flag('copy', 'pages') as 'pages' | 'rebuild';
const wordsPerMessage = Number(flag('words', '400'));
const keep = process.argv.includes('--dir');
const dataDir = keep ? flag('dir', '') : join(mkdtempSync(join(tmpdir(), 'mnemo-bench-compact-')), 'data');

let heldIssuedAt = 0;
let held: Promise<number> | undefined;
const runtime = await startRuntime({
  dataDir,
  faults: {
    ...createFaultInjector(),
    compactStep: (step) => {
      if (step !== 'settled') return;
      heldIssuedAt = performance.now();
      held = runtime.memory.append('probe', [{ message: { role: 'user', content: 'issued during the pause' } }]).then(() => performance.now() - heldIssuedAt);
    },
  },
});
const size = () => (existsSync(join(dataDir, 'data.mdb')) ? statSync(join(dataDir, 'data.mdb')).size : 0);

const CONVERSATIONS = 200;
const words = 'lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt'.split(' ');
const text = (seed: number) => Array.from({ length: wordsPerMessage }, (_, i) => words[(seed * 31 + i * 7) % words.length]).join(' ');
const started = performance.now();
let batches = 0;
while (size() < targetBytes) {
  await Promise.all(
    Array.from({ length: CONVERSATIONS }, (_, c) =>
      runtime.memory.append(`bench-${c}`, Array.from({ length: 20 }, (_, i) => ({ message: { role: 'user' as const, content: `${batches}.${i} ${text(batches + c + i)}` } }))),
    ),
  );
  batches++;
}
for (let c = 0; c < CONVERSATIONS; c += 10) await runtime.memory.clear(`bench-${c}`);
process.stdout.write(`filled ${(size() / 2 ** 20).toFixed(0)} MiB in ${((performance.now() - started) / 1000).toFixed(0)} s (${batches * CONVERSATIONS * 20} messages)\n`);

for (let run = 1; run <= runs; run++) {
  const r = await runtime.compact({ copy });
  const wait = await held!;
  process.stdout.write(
    `run ${run} (${copy}): data.mdb ${(r.bytesBefore / 2 ** 20).toFixed(0)} -> ${(r.bytesAfter / 2 ** 20).toFixed(0)} MiB; ` +
      `settle+copy+swap+reopen ${r.ms.toFixed(0)} ms; pause ${r.pauseMs.toFixed(0)} ms; an append issued in the pause waited ${wait.toFixed(0)} ms\n`,
  );
}
await runtime.stop();
if (!keep) rmSync(join(dataDir, '..'), { recursive: true, force: true });
