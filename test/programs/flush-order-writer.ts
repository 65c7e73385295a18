/**
 * The writer of the flush-order test, run under `strace -f`: starts a runtime on a data
 * directory, then appends to one conversation one write at a time (each awaited), and then
 * a round of concurrent appends to several conversations (one group commit). After each write
 * resolves it writes `MNEMO-ACK <n>` to stderr with a synchronous write(2), so strace shows the
 * acknowledgement as a syscall, ordered against the commit's fdatasync and O_DSYNC write.
 *
 * With a fourth argument `nosync` the runtime runs with `lmdb.noSync` (no flush at all): the
 * test's control, showing that its check does see an acknowledgement without a flush.
 *
 * Usage: tsx flush-order-writer.ts <data dir> <serial appends> <concurrent conversations> [nosync]
 */
import { writeSync } from 'node:fs';
import { startRuntime } from '../../src/runtime.ts';

const [dir, serial, concurrent] = [process.argv[2]!, Number(process.argv[3] ?? 20), Number(process.argv[4] ?? 8)];
const noSync = process.argv[5] === 'nosync';
const runtime = await startRuntime({ name: 'flush-order', dataDir: dir, ...(noSync ? { lmdb: { noSync } } : {}) });
await runtime.memory.append('warm', [{ message: { role: 'user', content: 'warm up' } }]);
writeSync(2, 'MNEMO-BEGIN\n');
let n = 0;
for (let i = 0; i < serial; i++) {
  await runtime.memory.append('serial', [{ message: { role: 'user', content: `serial ${i}` } }]);
  writeSync(2, `MNEMO-ACK ${++n}\n`);
}
// Issued in one event turn: one commit for all, each acknowledged after it.
await Promise.all(
  Array.from({ length: concurrent }, async (_, c) => {
    await runtime.memory.append(`conv-${c}`, [{ message: { role: 'user', content: `concurrent ${c}` } }]);
    writeSync(2, `MNEMO-ACK ${++n}\n`);
  }),
);
writeSync(2, 'MNEMO-END\n');
await runtime.stop();
