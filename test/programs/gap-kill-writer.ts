/**
 * The writer of the daily-repair kill test: starts a runtime on a data directory, prints
 * `ready`, and runs offline chat turns on one session until a turn's session row of the
 * chosen kind is durable; then it SIGKILLs itself before the turn mirrors that row into the
 * daily view (the gap there was between the MessageLog commit and the recall commit; the daily
 * row now rides in the session row's commit, so the kill finds both or neither). The kill is
 * deterministic: the runtime's MessageLog is wrapped, and the process dies as the append of
 * that row resolves.
 *
 * Usage: tsx gap-kill-writer.ts <data dir> <session id> <user|assistant> <turns before the kill>
 */
import { startRuntime } from '../../src/runtime.ts';

const [dir, sessionId, role, turns] = [process.argv[2]!, process.argv[3]!, process.argv[4]!, Number(process.argv[5] ?? 0)];
const runtime = await startRuntime({ dataDir: dir, lmdb: { noSync: true } });
const memory = runtime.memory;
const append = memory.append.bind(memory);
let seen = 0;
memory.append = async (conversationId, entries, options) => {
  const stored = await append(conversationId, entries, options);
  const first = entries[0]?.message;
  if (conversationId.endsWith(`/${sessionId}`) && first?.role === role && seen++ === turns) process.kill(process.pid, 'SIGKILL');
  return stored;
};
process.stdout.write('ready\n');
for (let k = 0; ; k++) await runtime.recall.chat({ userId: 'u', sessionId, message: `${sessionId} t${k}` });
