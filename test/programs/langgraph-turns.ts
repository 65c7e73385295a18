/**
 * A process that runs conversation turns through a StateGraph checkpointed by MnemoSaver.
 *
 *   tsx test/programs/langgraph-turns.ts <dataDir | postgres://url> <threadId> <firstTurn> <turns> [schema]
 *
 * A `postgres://` first argument puts the saver on PostgreSQL (in `schema`), else on LMDB.
 * Runs turns firstTurn, firstTurn+1, ... (`turns` = -1: until killed), printing
 * `ack <turn> <messages>` once each turn's invoke resolved, then `state <json>` (the thread's
 * message texts and ids) and exits 0 after closing the saver.
 */
import { MnemoSaver } from '../../src/langgraph/index.ts';
import { echoGraph, userTurn } from './langgraph-echo-graph.ts';

const [dataDir, threadId, first, count, schema] = process.argv.slice(2);
if (dataDir === undefined || threadId === undefined || first === undefined || count === undefined) {
  console.error('usage: langgraph-turns.ts <dataDir | postgres://url> <threadId> <firstTurn> <turns> [schema]');
  process.exit(2);
}
const saver = dataDir.startsWith('postgres://') ? new MnemoSaver({ postgres: dataDir, ...(schema === undefined ? {} : { schema }) }) : new MnemoSaver({ path: dataDir });
const graph = echoGraph(saver);
const config = { configurable: { thread_id: threadId } };
const turns = Number(count);
for (let turn = Number(first); turns < 0 || turn < Number(first) + turns; turn++) {
  const result = await graph.invoke(userTurn(turn), config);
  console.log(`ack ${turn} ${result.messages.length}`);
}
const state = await graph.getState(config);
const messages = (state.values.messages ?? []) as { id?: string; content: unknown; getType(): string }[];
console.log(`state ${JSON.stringify(messages.map((m) => ({ id: m.id, type: m.getType(), text: String(m.content).slice(0, 14) })))}`);
await saver.close();
