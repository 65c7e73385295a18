/**
 * Incremental storage: channel values are stored once per version, as deltas on the previous
 * version when they extend it, and every version reads back exactly.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Database } from 'lmdb';
import type { RunnableConfig } from '@langchain/core/runnables';
import { AIMessage, HumanMessage, type BaseMessage } from '@langchain/core/messages';
import { END, MessagesDeltaValue, START, StateGraph, StateSchema } from '@langchain/langgraph';
import { emptyCheckpoint, uuid6, type Checkpoint } from '@langchain/langgraph-checkpoint';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acquireEnvironment, type EnvironmentLease } from '../../src/memory/lmdb/lmdb-environment.ts';
import { MnemoSaver } from '../../src/langgraph/index.ts';
import { MAX_CHAIN_DEPTH, type BlobRow } from '../../src/langgraph/channel-blob.ts';
import { CHECKPOINT_DB_NAMES, type BlobKey } from '../../src/langgraph/storage/lmdb/lmdb-checkpoint-storage.ts';
import { echoGraph, userTurn } from '../programs/langgraph-echo-graph.ts';

let dir: string;
let saver: MnemoSaver;
let lease: EnvironmentLease;
let channels: Database<BlobRow, BlobKey>;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mnemo-lg-storage-'));
  saver = new MnemoSaver({ path: dir });
  lease = acquireEnvironment(dir);
  channels = lease.root.openDB<BlobRow, BlobKey>(CHECKPOINT_DB_NAMES.channels, {});
});

afterEach(async () => {
  await saver.close();
  await lease.release();
  rmSync(dir, { recursive: true, force: true });
});

function rowsOf(thread: string, channel: string): BlobRow[] {
  return [...channels.getRange({ start: [thread] as unknown as BlobKey })].filter((e) => e.key[0] === thread && e.key[2] === channel).map((e) => e.value);
}

const storedBytes = (row: BlobRow) => ('b' in row ? row.b.length : 'tail' in row ? row.tail.length : 0);

describe('MnemoSaver: incremental storage', () => {
  it('a growing message list stores each new version as the new messages only', async () => {
    const graph = echoGraph(saver);
    const config = { configurable: { thread_id: 't' } };
    for (let i = 0; i < 30; i++) await graph.invoke(userTurn(i), config);
    const rows = rowsOf('t', 'messages');
    expect(rows).toHaveLength(60);
    const deltas = rows.filter((r) => 'tail' in r);
    expect(deltas.length).toBeGreaterThan(50);
    for (const d of deltas) expect(storedBytes(d)).toBeLessThan(1500);

    const [, finalBytes] = await saver.serde.dumpsTyped((await graph.getState(config)).values.messages);
    const stored = rows.reduce((n, r) => n + storedBytes(r), 0);
    expect(stored).toBeLessThan(3 * finalBytes.length);
    let fullCopies = 0;
    for await (const t of saver.list(config)) fullCopies += (await saver.serde.dumpsTyped(t.checkpoint.channel_values['messages'] ?? []))[1].length;
    expect(fullCopies).toBeGreaterThan(15 * stored);
  });

  it('every checkpoint reads back exactly the value that was put, warm and after a restart', async () => {
    const next = (() => {
      let a = 99;
      return () => ((a = (a * 1103515245 + 12345) % 2147483648) / 2147483648);
    })();
    const expected = new Map<string, unknown[]>();
    let list: unknown[] = [];
    let config = { configurable: { thread_id: 't', checkpoint_ns: '' } } as { configurable: Record<string, unknown> };
    for (let step = 0; step < 120; step++) {
      const r = next();
      if (r < 0.6) list = [...list, ...Array.from({ length: 1 + Math.floor(next() * 3) }, (_, i) => ({ role: 'user', text: `m${step}.${i} ${'w'.repeat(Math.floor(next() * 200))}` }))];
      else if (r < 0.75 && list.length > 0) list = list.map((m, i) => (i === Math.floor(next() * list.length) ? { role: 'edited', text: `e${step}` } : m));
      else if (r < 0.85) list = list.slice(0, Math.floor(next() * list.length));
      else if (r < 0.9) list = [];
      const version = saver.getNextVersion(config.configurable['__v'] as number | undefined);
      const checkpoint: Checkpoint = { ...emptyCheckpoint(), id: uuid6(step), channel_values: { messages: list, counter: step }, channel_versions: { messages: version, counter: version } };
      const written = await saver.put(config, checkpoint, { source: 'loop', step, parents: {} }, { messages: version, counter: version });
      expected.set(checkpoint.id, list);
      config = { configurable: { ...written.configurable, __v: version } };
    }
    const check = async (s: MnemoSaver) => {
      for (const [id, list] of expected) {
        const tuple = await s.getTuple({ configurable: { thread_id: 't', checkpoint_ns: '', checkpoint_id: id } });
        expect(tuple?.checkpoint.channel_values['messages']).toEqual(list);
      }
    };
    await check(saver);
    expect(rowsOf('t', 'messages').some((r) => 'tail' in r)).toBe(true);
    await saver.close();
    saver = new MnemoSaver({ path: dir });
    await check(saver);
  });

  it(`a delta chain is cut after ${MAX_CHAIN_DEPTH} deltas: the next version is stored whole`, async () => {
    let list: string[] = ['x'.repeat(20_000)];
    let config: RunnableConfig = { configurable: { thread_id: 't', checkpoint_ns: '' } };
    let version: number | undefined;
    for (let step = 0; step < MAX_CHAIN_DEPTH + 10; step++) {
      list = [...list, `m${step}`];
      version = saver.getNextVersion(version);
      const checkpoint: Checkpoint = { ...emptyCheckpoint(), id: uuid6(step), channel_values: { messages: list }, channel_versions: { messages: version } };
      config = await saver.put(config, checkpoint, { source: 'loop', step, parents: {} }, { messages: version });
    }
    const rows = rowsOf('t', 'messages');
    expect(rows.filter((r) => 'b' in r)).toHaveLength(2);
    expect(Math.max(...rows.map((r) => ('d' in r ? r.d : 0)))).toBe(MAX_CHAIN_DEPTH);
    expect((await saver.getTuple(config))?.checkpoint.channel_values['messages']).toEqual(list);
  });

  it('a value that shares little with its previous version is stored whole', async () => {
    const put = async (config: RunnableConfig, step: number, value: string[]) => {
      const version = String(step + 1).padStart(16, '0') + '.a';
      const checkpoint: Checkpoint = { ...emptyCheckpoint(), id: uuid6(step), channel_values: { messages: value }, channel_versions: { messages: version } };
      return saver.put(config, checkpoint, { source: 'loop', step, parents: {} }, { messages: version });
    };
    const c1 = await put({ configurable: { thread_id: 't' } }, 0, ['a'.repeat(500)]);
    await put(c1, 1, ['b'.repeat(500)]);
    expect(rowsOf('t', 'messages').every((r) => 'b' in r)).toBe(true);
  });

  it("LangGraph's own DeltaChannel (beta) messages work on it, across a restart", async () => {
    const State = new StateSchema({ messages: MessagesDeltaValue });
    const build = (s: MnemoSaver) =>
      new StateGraph(State)
        .addNode('agent', async (state: { messages: BaseMessage[] }) => ({ messages: [new AIMessage(`r${state.messages.length}`)] }))
        .addEdge(START, 'agent')
        .addEdge('agent', END)
        .compile({ checkpointer: s });
    const config = { configurable: { thread_id: 'delta' } };
    for (let i = 0; i < 3; i++) await build(saver).invoke({ messages: [new HumanMessage(`q${i}`)] }, config);
    await saver.close();
    saver = new MnemoSaver({ path: dir });
    const result = await build(saver).invoke({ messages: [new HumanMessage('q3')] }, config);
    expect(result.messages.map((m: BaseMessage) => m.content)).toEqual(['q0', 'r1', 'q1', 'r3', 'q2', 'r5', 'q3', 'r7']);
  });
});
