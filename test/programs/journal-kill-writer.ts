/**
 * The writer of the journal kill test: a runtime whose journal holds every acknowledged append
 * for a minute before LMDB gets it (`lmdb.journalDelay`), so a kill finds the appends in the
 * journal only. Appends to a few conversations (some keyed, one with a system message) until
 * killed, printing `ack <conversation> <message_id> <content> <key>` per record after each
 * write resolves (stdout is a pipe: written synchronously). Prints `ready` first.
 *
 * Usage: tsx journal-kill-writer.ts <data dir>
 */
import { startRuntime } from '../../src/runtime.ts';

const dir = process.argv[2]!;
const runtime = await startRuntime({ dataDir: dir, lmdb: { journalDelay: 60_000 } });
process.stdout.write('ready\n');

async function writer(conversation: string): Promise<void> {
  for (let k = 0; ; k++) {
    const key = k % 3 === 0 ? `${conversation}-key-${k}` : '-';
    const role = conversation === 'conv-0' && k === 0 ? ('system' as const) : ('user' as const);
    const entries = [{ message: { role, content: `${conversation}.${k}.a` } }, { message: { role: 'user' as const, content: `${conversation}.${k}.b` } }];
    const records = await runtime.memory.append(conversation, entries, key === '-' ? {} : { idempotencyKey: key });
    process.stdout.write(records.map((r) => `ack ${conversation} ${r.message_id} ${r.message.content as string} ${key}\n`).join(''));
  }
}

for (let c = 0; c < 3; c++) void writer(`conv-${c}`);
