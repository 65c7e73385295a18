/**
 * One thread, one linear history: MnemoSaver's single-writer semantics (thread-writer.ts), one
 * suite for every storage: test/langgraph/saver-history.test.ts runs it on LMDB,
 * test/postgres/langgraph-saver-history.test.ts on PostgreSQL.
 */
import { HumanMessage, type BaseMessage } from '@langchain/core/messages';
import { emptyCheckpoint, uuid6, type Checkpoint, type CheckpointMetadata, type CheckpointTuple } from '@langchain/langgraph-checkpoint';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../src/errors.ts';
import { CheckpointConflictError, type MnemoSaver } from '../../src/langgraph/index.ts';
import { echoGraph, userTurn } from '../programs/langgraph-echo-graph.ts';

/** One empty storage per test, and a saver on it. */
export interface SaverStorage {
  setUp(): Promise<void> | void;
  open(): MnemoSaver;
  /** After each test, once the saver is closed. */
  tearDown(): Promise<void> | void;
}

let saver: MnemoSaver;

const meta = (step: number, source: CheckpointMetadata['source'] = 'loop'): CheckpointMetadata => ({ source, step, parents: {} });
const checkpoint = (): Checkpoint => ({ ...emptyCheckpoint(), id: uuid6(-1) });
const root = (thread: string) => ({ configurable: { thread_id: thread, checkpoint_ns: '' } });

async function history(thread: string): Promise<CheckpointTuple[]> {
  const out: CheckpointTuple[] = [];
  for await (const t of saver.list(root(thread))) out.push(t);
  return out.reverse();
}

function expectLinear(tuples: CheckpointTuple[]): void {
  expect(tuples[0]?.parentConfig).toBeUndefined();
  for (let i = 1; i < tuples.length; i++) {
    expect(tuples[i]!.parentConfig?.configurable?.['checkpoint_id']).toBe(tuples[i - 1]!.config.configurable?.['checkpoint_id']);
  }
}

export function describeSaverHistory(name: string, storage: SaverStorage): void {
  describe(name, () => {
    beforeEach(async () => {
      await storage.setUp();
      saver = storage.open();
    });

    afterEach(async () => {
      await saver.close();
      await storage.tearDown();
    });

    describe('MnemoSaver: one writer per thread', () => {
      it('concurrent graph runs on one thread keep one linear history: each losing run is told, none forks', async () => {
        const graph = echoGraph(saver);
        const config = { configurable: { thread_id: 't' } };
        await graph.invoke(userTurn(0), config);
        const runs = await Promise.allSettled([1, 2, 3, 4].map((i) => graph.invoke(userTurn(i), config)));
        const won = runs.filter((r) => r.status === 'fulfilled');
        const lost = runs.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
        expect(won.length).toBeGreaterThanOrEqual(1);
        for (const r of lost) {
          expect(r.reason).toBeInstanceOf(CheckpointConflictError);
          expect((r.reason as CheckpointConflictError).code).toBe('checkpoint_conflict');
        }
        const tuples = await history('t');
        expectLinear(tuples);
        const state = await graph.getState(config);
        expect(state.values.messages).toHaveLength(2 * (1 + won.length));
      });

      it('writers that retry after a conflict all land, one after another, with no turn lost', async () => {
        const graph = echoGraph(saver);
        const config = { configurable: { thread_id: 't' } };
        const runWithRetry = async (i: number) => {
          for (;;) {
            try {
              return await graph.invoke(userTurn(i), config);
            } catch (error) {
              if (!(error instanceof CheckpointConflictError)) throw error;
            }
          }
        };
        await Promise.all([1, 2, 3, 4, 5].map(runWithRetry));
        expectLinear(await history('t'));
        const messages = (await graph.getState(config)).values.messages;
        expect(messages).toHaveLength(10);
        const asked = messages.filter((m: BaseMessage) => m.getType() === 'human').map((m: BaseMessage) => String(m.content).slice(0, 11));
        expect(asked.sort()).toEqual(['Question 1:', 'Question 2:', 'Question 3:', 'Question 4:', 'Question 5:']);
      });

      it('first writers racing on a brand-new thread: one root is written, the others are refused', async () => {
        const graph = echoGraph(saver);
        const config = { configurable: { thread_id: 'new' } };
        const runs = await Promise.allSettled([1, 2, 3].map((i) => graph.invoke(userTurn(i), config)));
        expect(runs.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        for (const r of runs) if (r.status === 'rejected') expect((r.reason as CheckpointConflictError).details.parentId).toBeUndefined();
        const tuples = await history('new');
        expect(tuples.filter((t) => t.parentConfig === undefined)).toHaveLength(1);
        expectLinear(tuples);
      });

      it('of puts naming the same parent, one is written and the others are refused with nothing written', async () => {
        const first = await saver.put(root('t'), checkpoint(), meta(0), {});
        const rivals = [checkpoint(), checkpoint(), checkpoint()];
        const results = await Promise.allSettled(rivals.map((c) => saver.put(first, c, meta(1), {})));
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        const refused = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as CheckpointConflictError] : []));
        expect(refused).toHaveLength(2);
        for (const e of refused) {
          expect(e.details).toMatchObject({ threadId: 't', checkpointNs: '', parentId: first.configurable?.['checkpoint_id'], reason: 'stale_parent' });
        }
        expect(await history('t')).toHaveLength(2);
      });

      it('a put naming an old checkpoint is refused unless it asks to fork', async () => {
        const c1 = await saver.put(root('t'), checkpoint(), meta(0), {});
        await saver.put(c1, checkpoint(), meta(1), {});
        await expect(saver.put(c1, checkpoint(), meta(2), {})).rejects.toBeInstanceOf(CheckpointConflictError);
        const forked = await saver.put({ configurable: { ...c1.configurable, fork: true } }, checkpoint(), meta(2), {});
        expect((await saver.getTuple(forked))?.parentConfig?.configurable?.['checkpoint_id']).toBe(c1.configurable?.['checkpoint_id']);
        const langgraphFork = await saver.put(c1, checkpoint(), meta(2, 'fork'), {});
        expect((await saver.getTuple(root('t')))?.config).toEqual(langgraphFork);
      });

      it('time travel with fork: true branches a graph from an old checkpoint; without it the run is refused', async () => {
        const graph = echoGraph(saver);
        const config = { configurable: { thread_id: 't' } };
        for (let i = 0; i < 3; i++) await graph.invoke(userTurn(i), config);
        const states = [];
        for await (const s of graph.getStateHistory(config)) states.push(s);
        const old = states.find((s) => s.values.messages?.length === 2 && s.next.length === 0)!;
        await expect(graph.invoke(userTurn(9), old.config)).rejects.toBeInstanceOf(CheckpointConflictError);
        const branched = await graph.invoke(userTurn(9), { configurable: { ...old.config.configurable, fork: true } });
        expect(branched.messages.map((m) => String(m.content).slice(0, 11))).toEqual(['Question 0:', 'Turn 1: you', 'Question 9:', 'Turn 2: you']);
        expect((await graph.getState(config)).values.messages).toHaveLength(4);
      });

      it('re-putting a checkpoint under the same parent is accepted (a retry); under another parent it is refused', async () => {
        const c1 = await saver.put(root('t'), checkpoint(), meta(0), {});
        const c2 = checkpoint();
        await saver.put(c1, c2, meta(1), {});
        await expect(saver.put(c1, c2, meta(1), {})).resolves.toEqual({ configurable: { thread_id: 't', checkpoint_ns: '', checkpoint_id: c2.id } });
        const other = await saver.put(root('t'), c2, meta(1), {}).catch((e: unknown) => e);
        expect((other as CheckpointConflictError).details.reason).toBe('exists');
      });

      it('namespaces of one thread have their own heads', async () => {
        const a = await saver.put(root('t'), checkpoint(), meta(0), {});
        const b = await saver.put({ configurable: { thread_id: 't', checkpoint_ns: 'sub:1' } }, checkpoint(), meta(0), {});
        await saver.put(a, checkpoint(), meta(1), {});
        await saver.put(b, checkpoint(), meta(1), {});
        const sub: CheckpointTuple[] = [];
        for await (const t of saver.list({ configurable: { thread_id: 't', checkpoint_ns: 'sub:1' } })) sub.push(t);
        expect(sub).toHaveLength(2);
        expectLinear(await history('t'));
      });
    });

    describe('MnemoSaver: writes and deletion', () => {
      it('concurrent putWrites of many tasks on one checkpoint keep every write', async () => {
        const c1 = await saver.put(root('t'), checkpoint(), meta(0), {});
        await Promise.all(Array.from({ length: 20 }, (_, i) => saver.putWrites(c1, [['messages', `m${i}`], ['other', i]], `task-${String(i).padStart(2, '0')}`)));
        const writes = (await saver.getTuple(c1))?.pendingWrites ?? [];
        expect(writes).toHaveLength(40);
        expect(writes.slice(0, 2)).toEqual([
          ['task-00', 'messages', 'm0'],
          ['task-00', 'other', 0],
        ]);
      });

      it('a regular write already stored is kept; a special write (error, interrupt) replaces its predecessor', async () => {
        const c1 = await saver.put(root('t'), checkpoint(), meta(0), {});
        await saver.putWrites(c1, [['messages', 'first']], 'task');
        await saver.putWrites(c1, [['messages', 'second']], 'task');
        await saver.putWrites(c1, [['__error__', 'boom 1']], 'task');
        await saver.putWrites(c1, [['__error__', 'boom 2']], 'task');
        expect((await saver.getTuple(c1))?.pendingWrites).toEqual([
          ['task', '__error__', 'boom 2'],
          ['task', 'messages', 'first'],
        ]);
      });

      it('deleteThread removes every namespace of the thread, its values and writes, and nothing else', async () => {
        const graph = echoGraph(saver);
        await graph.invoke(userTurn(1), { configurable: { thread_id: 'gone' } });
        await graph.invoke(userTurn(1), { configurable: { thread_id: 'kept' } });
        await saver.put({ configurable: { thread_id: 'gone', checkpoint_ns: 'sub:1' } }, checkpoint(), meta(0), {});
        await saver.deleteThread('gone');
        expect(await saver.getTuple(root('gone'))).toBeUndefined();
        expect(await saver.getTuple({ configurable: { thread_id: 'gone', checkpoint_ns: 'sub:1' } })).toBeUndefined();
        expect((await graph.getState({ configurable: { thread_id: 'kept' } })).values.messages).toHaveLength(2);
        const graphAgain = await graph.invoke(userTurn(2), { configurable: { thread_id: 'gone' } });
        expect(graphAgain.messages).toHaveLength(2);
      });
    });

    describe('MnemoSaver: bad input', () => {
      const codeOf = async (p: Promise<unknown>) => {
        const e = await p.then(() => undefined, (x: unknown) => x);
        expect(e).toBeInstanceOf(InvalidInputError);
        return (e as InvalidInputError).code;
      };

      it('rejects a missing or malformed thread_id with invalid_id, writing nothing', async () => {
        expect(await codeOf(saver.put({ configurable: {} }, checkpoint(), meta(0), {}))).toBe('invalid_id');
        expect(await codeOf(saver.put({ configurable: { thread_id: 'a\u0000b' } }, checkpoint(), meta(0), {}))).toBe('invalid_id');
        expect(await codeOf(saver.put({ configurable: { thread_id: { id: 1 } } }, checkpoint(), meta(0), {}))).toBe('invalid_id');
        expect(await codeOf(saver.putWrites(root('t'), [['a', 1]], 'task'))).toBe('invalid_id');
        const all: CheckpointTuple[] = [];
        for await (const t of saver.list({})) all.push(t);
        expect(all).toEqual([]);
      });

      it('takes a numeric thread_id as its decimal string', async () => {
        await echoGraph(saver).invoke({ messages: [new HumanMessage('hi')] }, { configurable: { thread_id: 42 } });
        expect((await saver.getTuple({ configurable: { thread_id: '42' } }))?.config.configurable?.['thread_id']).toBe('42');
      });
    });
  });
}
