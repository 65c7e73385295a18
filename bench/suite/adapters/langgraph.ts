import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { AIMessage, HumanMessage, type BaseMessage } from '@langchain/core/messages';
import {
  emptyCheckpoint,
  MemorySaver,
  uuid6,
  type BaseCheckpointSaver,
  type Checkpoint,
  type CheckpointTuple,
} from '@langchain/langgraph-checkpoint';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import type { AdapterFactory, AdapterInfo, BenchMessage, LogAdapter } from '../types.ts';

/**
 * LangGraph.js checkpointers holding each conversation as graph state, the way a
 * `MessagesAnnotation` graph stores it: a thread per conversation, and per appended message one
 * checkpoint whose `messages` channel holds the FULL list of LangChain messages (the default
 * `messagesStateReducer` channel is a BinaryOperatorAggregate: every checkpoint serializes the
 * whole accumulated value; the opt-in `DeltaChannel` is beta and not used here). An append is
 * what a graph step does: `getTuple` (load and revive the latest checkpoint), add the message,
 * `put` the new checkpoint (parent = the previous one, next channel version).
 *
 * This is a lower bound on LangGraph's cost: a real `graph.invoke` also writes an input
 * checkpoint and pending writes per step.
 *
 * `load` writes only the final checkpoint (the whole history in one), not one per message,
 * which is the state a read sees; the real store would also hold every earlier checkpoint.
 */
function toLc(message: BenchMessage): BaseMessage {
  const fields = { content: message.content, id: randomUUID() };
  return message.role === 'user' ? new HumanMessage(fields) : new AIMessage(fields);
}

function fromLc(message: BaseMessage): BenchMessage {
  return { role: message.getType() === 'human' ? 'user' : 'assistant', content: String(message.content) };
}

function saverAdapter(info: AdapterInfo, saver: BaseCheckpointSaver, onClose: () => void): LogAdapter {
  const configOf = (thread: string) => ({ configurable: { thread_id: thread, checkpoint_ns: '' } });
  const messagesOf = (tuple: CheckpointTuple | undefined): BaseMessage[] =>
    (tuple?.checkpoint.channel_values['messages'] as BaseMessage[] | undefined) ?? [];

  const putMessages = async (thread: string, added: BenchMessage[]) => {
    const tuple = await saver.getTuple(configOf(thread));
    const previous = tuple?.checkpoint ?? emptyCheckpoint();
    const step = ((tuple?.metadata?.step as number | undefined) ?? -1) + 1;
    const version = saver.getNextVersion(previous.channel_versions['messages'] as number | undefined);
    const checkpoint: Checkpoint = {
      v: 4,
      id: uuid6(step),
      ts: new Date().toISOString(),
      channel_values: { messages: [...messagesOf(tuple), ...added.map(toLc)] },
      channel_versions: { ...previous.channel_versions, messages: version },
      versions_seen: previous.versions_seen,
    };
    await saver.put(tuple?.config ?? configOf(thread), checkpoint, { source: 'loop', step, parents: {} }, { messages: version });
  };

  return {
    info,
    append: (c, message) => putMessages(c, [message]),
    load: (c, messages) => putMessages(c, [...messages]),
    async tail(c, n) {
      return messagesOf(await saver.getTuple(configOf(c))).slice(-n).map(fromLc);
    },
    async search(c, keyword, limit) {
      const key = keyword.trim().toLowerCase();
      const all = messagesOf(await saver.getTuple(configOf(c))).map(fromLc);
      return all.filter((m) => m.content.toLowerCase().includes(key)).slice(-limit);
    },
    async close() {
      onClose();
    },
  };
}

export const langgraphMemory: AdapterFactory = {
  info: {
    id: 'langgraph-memory',
    label: 'LangGraph MemorySaver',
    durable: false,
    durability: 'none (in-memory)',
    notes: 'a checkpoint per message with the full messages channel',
  },
  async open() {
    return saverAdapter(langgraphMemory.info, new MemorySaver(), () => undefined);
  },
};

export const langgraphSqlite: AdapterFactory = {
  info: {
    id: 'langgraph-sqlite',
    label: 'LangGraph SqliteSaver',
    durable: true,
    durability: 'fsync of the WAL per checkpoint (SqliteSaver sets WAL; synchronous=FULL set here)',
    notes: 'a checkpoint per message with the full messages channel',
  },
  async open(dir) {
    const db = new Database(join(dir, 'checkpoints.db'));
    const saver = new SqliteSaver(db);
    // The saver sets WAL on first use; make FULL explicit so it is the same durability as the rest.
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    return saverAdapter(langgraphSqlite.info, saver, () => db.close());
  },
};
