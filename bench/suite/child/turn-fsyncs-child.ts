/**
 * The child of the turn-fsyncs workload, run under `strace -f` when strace is installed: a
 * runtime with LMDB on the given directory, a warm-up turn, then offline chat turns of one new
 * session between markers written to stderr with write(2), which strace sees too:
 * `MNEMO-TURN-BEGIN first|later <txn id>` and `MNEMO-TURN-END <txn id>`, with the environment's
 * last transaction id (each LMDB commit adds one), so commits are counted without strace too.
 *
 * Usage: node --import tsx turn-fsyncs-child.ts <data dir> <turns>
 */
import { writeSync } from 'node:fs';
import { startRuntime } from '../../../src/runtime.ts';
import { acquireEnvironment } from '../../../src/memory/lmdb/lmdb-environment.ts';

const [dir, turns] = [process.argv[2]!, Number(process.argv[3] ?? 4)];
const runtime = await startRuntime({ name: 'turn-fsyncs', dataDir: dir });
// The runtime's own environment (one per directory per process, shared).
const lease = acquireEnvironment(dir);
const txnId = () => (lease.root.getStats() as { lastTxnId: number }).lastTxnId;
await runtime.recall.chat({ userId: 'warm', sessionId: 'w', message: 'warm up' });
for (let k = 0; k < turns; k++) {
  writeSync(2, `MNEMO-TURN-BEGIN ${k === 0 ? 'first' : 'later'} ${txnId()}\n`);
  await runtime.recall.chat({ userId: 'u', sessionId: 's', message: `message ${k}` });
  writeSync(2, `MNEMO-TURN-END ${txnId()}\n`);
}
await lease.release();
await runtime.stop();
