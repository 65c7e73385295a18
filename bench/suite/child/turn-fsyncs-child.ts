/**
 * The child of the turn-fsyncs workload, run under `strace -f`: a runtime with LMDB on the
 * given directory, a warm-up turn, then offline chat turns of one new session between markers
 * that strace sees as write(2) calls: `MNEMO-TURN-BEGIN first|later`, `MNEMO-TURN-END`.
 *
 * Usage: node --import tsx turn-fsyncs-child.ts <data dir> <turns>
 */
import { writeSync } from 'node:fs';
import { startRuntime } from '../../../src/runtime.ts';

const [dir, turns] = [process.argv[2]!, Number(process.argv[3] ?? 4)];
const runtime = await startRuntime({ name: 'turn-fsyncs', dataDir: dir });
await runtime.recall.chat({ userId: 'warm', sessionId: 'w', message: 'warm up' });
for (let k = 0; k < turns; k++) {
  writeSync(2, `MNEMO-TURN-BEGIN ${k === 0 ? 'first' : 'later'}\n`);
  await runtime.recall.chat({ userId: 'u', sessionId: 's', message: `message ${k}` });
  writeSync(2, 'MNEMO-TURN-END\n');
}
await runtime.stop();
