/**
 * The writer of the flush-order test, run under `strace -f`: starts a runtime on a data
 * directory, then appends to one conversation one write at a time (each awaited), then a round
 * of concurrent appends to several conversations (one group commit), then appends with an
 * `onNumbered` hook (a shared commit: straight to LMDB, not through the journal). After each
 * write resolves it writes `MNEMO-ACK <n> <content>` to stderr with a synchronous write(2), so
 * strace shows the acknowledgement as a syscall, ordered against the flushes.
 *
 * With a fourth argument `nosync` the runtime runs with `lmdb.noSync` (no journal, no flush at
 * all): the test's control, showing that its check does see an acknowledgement without a flush.
 *
 * Usage: tsx flush-order-writer.ts <data dir> <serial appends> <concurrent conversations> <shared appends> [nosync]
 */
import { writeSync } from 'node:fs';
import { startRuntime } from '../../src/runtime.ts';

const [dir, serial, concurrent, shared] = [process.argv[2]!, Number(process.argv[3] ?? 20), Number(process.argv[4] ?? 8), Number(process.argv[5] ?? 4)];
const noSync = process.argv[6] === 'nosync';
const runtime = await startRuntime({ name: 'flush-order', dataDir: dir, ...(noSync ? { lmdb: { noSync } } : {}) });
await runtime.memory.append('warm', [{ message: { role: 'user', content: 'warm up' } }]);
writeSync(2, 'MNEMO-BEGIN\n');
let n = 0;
const ack = (content: string) => writeSync(2, `MNEMO-ACK ${++n} ${content}\n`);
for (let i = 0; i < serial; i++) {
  const content = `serial ${i}`;
  await runtime.memory.append('serial', [{ message: { role: 'user', content } }]);
  ack(content);
}
// Issued in one event turn: one flush for all, each acknowledged after it.
await Promise.all(
  Array.from({ length: concurrent }, async (_, c) => {
    const content = `concurrent ${c}`;
    await runtime.memory.append(`conv-${c}`, [{ message: { role: 'user', content } }]);
    ack(content);
  }),
);
for (let i = 0; i < shared; i++) {
  const content = `shared ${i}`;
  await runtime.memory.append('shared', [{ message: { role: 'user', content } }], { onNumbered: () => undefined });
  ack(content);
}
writeSync(2, 'MNEMO-END\n');
await runtime.stop();
