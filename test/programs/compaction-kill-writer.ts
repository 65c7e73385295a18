/**
 * The writer of the compaction kill test: starts a runtime on a data directory, appends to ten
 * conversations (printing `ack <conversation> <message_id> <content>` once each append resolved:
 * stdout is a pipe, written synchronously), frees pages (a large message, cleared), prints
 * then runs `runtime.compact({ copy })` (`pages` or `rebuild`, its third argument) and SIGKILLs
 * itself when the compaction reaches the step named by its second argument (`COMPACTION_STEPS`;
 * the first time, for `rebuilding`), after printing `at <step>`. At `settled` it
 * prints `bytes <size of data.mdb>` (final until the swap) and issues appends that the pause
 * holds: they are never acknowledged before a kill. With `none` it prints `compacted` and exits 0.
 *
 * Usage: tsx compaction-kill-writer.ts <data dir> <step | none> <pages | rebuild>
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { startRuntime } from '../../src/runtime.ts';
import { createFaultInjector } from '../../src/memory/runtime/fault-injector.ts';

const [dir, stopAt, copy] = [process.argv[2]!, process.argv[3]!, process.argv[4] as 'pages' | 'rebuild'];
const held: Array<Promise<void>> = [];
const runtime = await startRuntime({
  dataDir: dir,
  recall: false,
  faults: {
    ...createFaultInjector(),
    compactStep: (step) => {
      if (step === 'settled') {
        // Settled, so data.mdb is final until the swap.
        process.stdout.write(`bytes ${statSync(join(dir, 'data.mdb')).size}\n`);
        for (let c = 0; c < 10; c++) {
          held.push(runtime.memory.append(`conv-${c}`, [{ message: { role: 'user', content: `held-${c}` } }]).then((r) => print(r, `conv-${c}`)));
        }
      }
      if (step !== stopAt) return;
      process.stdout.write(`at ${step}\n`);
      process.kill(process.pid, 'SIGKILL');
    },
  },
});

function print(records: ReadonlyArray<{ message_id: number; message: { content: unknown } }>, conversation: string): void {
  process.stdout.write(records.map((r) => `ack ${conversation} ${r.message_id} ${String(r.message.content)}\n`).join(''));
}

await Promise.all(
  Array.from({ length: 10 }, async (_, c) => {
    for (let k = 0; k < 30; k++) {
      const records = await runtime.memory.append(`conv-${c}`, [{ message: { role: 'user', content: `m-${c}-${k}-${'x'.repeat(200)}` } }]);
      print(records, `conv-${c}`);
    }
  }),
);
for (let c = 0; c < 5; c++) await runtime.memory.add(`big-${c}`, [{ role: 'user', content: 'y'.repeat(50_000) }]);
for (let c = 0; c < 5; c++) await runtime.memory.clear(`big-${c}`);
await runtime.compact({ copy });
await Promise.all(held);
process.stdout.write('compacted\n');
await runtime.stop();
