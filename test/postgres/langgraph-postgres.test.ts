/**
 * MnemoSaver and MnemoStore on PostgreSQL beyond the shared suites: under a runtime on
 * PostgreSQL storage, and several savers or stores on one schema at once (as separate
 * processes would be: each its own pool), where the database alone keeps a thread's history
 * linear and the items exact.
 */
import type { CheckpointTuple } from '@langchain/langgraph-checkpoint';
import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../src/errors.ts';
import { CheckpointConflictError, MnemoSaver, MnemoStore } from '../../src/langgraph/index.ts';
import { StorageError } from '../../src/memory/contract/memory-errors.ts';
import type { TreeNode } from '../../src/otp/index.ts';
import { startRuntime } from '../../src/runtime.ts';
import { echoGraph, userTurn } from '../programs/langgraph-echo-graph.ts';
import { sql, usePostgres, SERVER_START_TIMEOUT, postgresUrl } from '../support/postgres-server.ts';

const db = usePostgres();
let names = 0;

beforeAll(async () => {
  await postgresUrl();
}, SERVER_START_TIMEOUT);

function saverOn(schema: string): MnemoSaver {
  const saver = new MnemoSaver({ postgres: db.url, schema });
  db.cleanup(() => saver.close());
  return saver;
}

async function history(saver: MnemoSaver, threadId: string): Promise<CheckpointTuple[]> {
  const out: CheckpointTuple[] = [];
  for await (const t of saver.list({ configurable: { thread_id: threadId, checkpoint_ns: '' } })) out.push(t);
  return out.reverse();
}

function expectLinear(tuples: CheckpointTuple[]): void {
  expect(tuples[0]?.parentConfig).toBeUndefined();
  for (let i = 1; i < tuples.length; i++) {
    expect(tuples[i]!.parentConfig?.configurable?.['checkpoint_id']).toBe(tuples[i - 1]!.config.configurable?.['checkpoint_id']);
  }
}

describe('MnemoSaver and MnemoStore on a runtime with PostgreSQL storage', () => {
  it("keep their rows in the runtime's schema, across a restart; the writers join the runtime's tree", async () => {
    const schema = db.schema('lgrt');
    let runtime = await startRuntime({ name: `lgpg${++names}`, storage: { postgres: db.url, schema } });
    try {
      const saver = new MnemoSaver({ runtime });
      const store = new MnemoStore({ runtime });
      await echoGraph(saver).invoke(userTurn(1), { configurable: { thread_id: 't1' } });
      await store.put(['users', 'u1'], 'prefs', { theme: 'dark' });
      const tree: TreeNode = runtime.inspect();
      expect(tree.children.find((c) => c.id?.startsWith('langgraph_threads_'))?.type).toBe('supervisor');
      await runtime.stop();

      runtime = await startRuntime({ name: `lgpg${++names}`, storage: { postgres: db.url, schema } });
      const again = new MnemoSaver({ runtime });
      expect((await echoGraph(again).getState({ configurable: { thread_id: 't1' } })).values.messages).toHaveLength(2);
      expect((await new MnemoStore({ runtime }).get(['users', 'u1'], 'prefs'))?.value).toEqual({ theme: 'dark' });
      const [{ n }] = (await sql<{ n: string }>(db.url, `SELECT count(*) AS n FROM ${pg.escapeIdentifier(schema)}.langgraph_checkpoints`)) as [{ n: string }];
      expect(Number(n)).toBeGreaterThan(0);
    } finally {
      await runtime.stop();
    }
  });

  it('once the runtime stopped, the saver and the store refuse with store_closed', async () => {
    const schema = db.schema('lgrt');
    const runtime = await startRuntime({ name: `lgpg${++names}`, storage: { postgres: db.url, schema } });
    const saver = new MnemoSaver({ runtime });
    const store = new MnemoStore({ runtime });
    await echoGraph(saver).invoke(userTurn(1), { configurable: { thread_id: 't' } });
    await runtime.stop();
    const write = await saver.deleteThread('t').catch((e: unknown) => e);
    expect(write).toBeInstanceOf(StorageError);
    expect((write as StorageError).code).toBe('store_closed');
    expect(((await saver.getTuple({ configurable: { thread_id: 't' } }).catch((e: unknown) => e)) as StorageError).code).toBe('store_closed');
    expect(((await store.get(['a'], 'k').catch((e: unknown) => e)) as StorageError).code).toBe('store_closed');
  });

  it('refuses a postgres option that is neither a connection string nor a pool', () => {
    expect(() => new MnemoSaver({ postgres: '' })).toThrow(InvalidInputError);
    expect(() => new MnemoStore({ postgres: 42 as unknown as string })).toThrow(InvalidInputError);
  });
});

describe('channel values on PostgreSQL', () => {
  it('a growing message list is stored as deltas, and every checkpoint reads back whole from a fresh saver', async () => {
    const schema = db.schema('lgdelta');
    const saver = saverOn(schema);
    const config = { configurable: { thread_id: 'grow' } };
    for (let turn = 1; turn <= 12; turn++) await echoGraph(saver).invoke(userTurn(turn), config);
    const [rows] = (await sql<{ deltas: string; wholes: string }>(
      db.url,
      `SELECT count(*) FILTER (WHERE base IS NOT NULL) AS deltas, count(*) FILTER (WHERE base IS NULL AND type IS NOT NULL) AS wholes
       FROM ${pg.escapeIdentifier(schema)}.langgraph_channels WHERE channel = 'messages'`,
    )) as [{ deltas: string; wholes: string }];
    expect(Number(rows.deltas)).toBeGreaterThan(Number(rows.wholes));
    const fresh = saverOn(schema);
    const tuples = await history(fresh, 'grow');
    let previous = 0;
    for (const t of tuples) {
      const messages = (t.checkpoint.channel_values['messages'] ?? []) as { content: unknown }[];
      expect(messages.length).toBeGreaterThanOrEqual(previous);
      previous = messages.length;
    }
    const last = (await echoGraph(fresh).getState(config)).values.messages as { content: unknown }[];
    expect(last).toHaveLength(24);
    expect(String(last[22]!.content)).toMatch(/^Question 12:/);
  });
});

describe('several savers on one schema (separate pools, as separate processes)', () => {
  it('start at once on an empty schema: the tables are made once, every saver works', async () => {
    const schema = db.schema('lgmig');
    const savers = Array.from({ length: 6 }, () => saverOn(schema));
    await Promise.all(savers.map((s, i) => echoGraph(s).invoke(userTurn(i), { configurable: { thread_id: `t${i}` } })));
    const [{ version }] = (await sql<{ version: number }>(db.url, `SELECT version FROM ${pg.escapeIdentifier(schema)}.langgraph_schema_version`)) as [{ version: number }];
    expect(version).toBe(1);
  });

  it('concurrent runs on one thread from different savers keep one linear history: each losing run is told', async () => {
    const schema = db.schema('lgrace');
    const savers = [saverOn(schema), saverOn(schema), saverOn(schema)];
    const config = { configurable: { thread_id: 'shared' } };
    await echoGraph(savers[0]!).invoke(userTurn(0), config);
    for (let round = 1; round <= 5; round++) {
      const runs = await Promise.allSettled(savers.map((s) => echoGraph(s).invoke(userTurn(round), config)));
      expect(runs.filter((r) => r.status === 'fulfilled').length).toBeGreaterThanOrEqual(1);
      for (const r of runs) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(CheckpointConflictError);
    }
    const tuples = await history(savers[1]!, 'shared');
    expectLinear(tuples);
    // Every checkpoint of the chain reads back on every saver, with all its messages.
    const last = await echoGraph(savers[2]!).getState(config);
    expect(last.values.messages.length % 2).toBe(0);
    expect(last.values.messages.length).toBeGreaterThanOrEqual(12);
  });

  it('writers that retry after a conflict all land, one after another, with no turn lost', async () => {
    const schema = db.schema('lgretry');
    const savers = [saverOn(schema), saverOn(schema), saverOn(schema), saverOn(schema)];
    const config = { configurable: { thread_id: 'retry' } };
    await echoGraph(savers[0]!).invoke(userTurn(0), config);
    await Promise.all(
      savers.map(async (s, i) => {
        const graph = echoGraph(s);
        for (;;) {
          try {
            await graph.invoke(userTurn(100 + i), config);
            return;
          } catch (error) {
            if (!(error instanceof CheckpointConflictError)) throw error;
          }
        }
      }),
    );
    expectLinear(await history(savers[0]!, 'retry'));
    const messages = (await echoGraph(savers[3]!).getState(config)).values.messages as { content: unknown }[];
    expect(messages).toHaveLength(2 * 5);
    for (let i = 0; i < 4; i++) expect(messages.some((m) => String(m.content).startsWith(`Question ${100 + i}:`))).toBe(true);
  });

  it("a put naming a parent another saver moved past is refused, nothing written; fork: true branches", async () => {
    const schema = db.schema('lgstale');
    const [a, b] = [saverOn(schema), saverOn(schema)];
    const config = { configurable: { thread_id: 't' } };
    await echoGraph(a).invoke(userTurn(1), config);
    const old = (await a.getTuple(config))!;
    await echoGraph(b).invoke(userTurn(2), config);
    const count = (await history(a, 't')).length;
    const put = await a
      .put(old.config, { ...old.checkpoint, id: '1f0' + 'a'.repeat(33) }, { source: 'loop', step: 99, parents: {} }, {})
      .catch((e: unknown) => e);
    expect(put).toBeInstanceOf(CheckpointConflictError);
    expect((put as CheckpointConflictError).details.reason).toBe('stale_parent');
    expect((await history(a, 't')).length).toBe(count);
    await a.put({ configurable: { ...old.config.configurable, fork: true } }, { ...old.checkpoint, id: '1f0' + 'b'.repeat(33) }, { source: 'loop', step: 99, parents: {} }, {});
    expect((await b.getTuple({ configurable: { thread_id: 't', checkpoint_id: '1f0' + 'b'.repeat(33) } }))?.parentConfig?.configurable?.['checkpoint_id']).toBe(
      old.config.configurable?.['checkpoint_id'],
    );
  });
});

describe('several stores on one schema', () => {
  it('concurrent batches from different stores keep the items and namespaces exact', async () => {
    const schema = db.schema('lgitems');
    const stores = [0, 1, 2].map(() => {
      const store = new MnemoStore({ postgres: db.url, schema });
      db.cleanup(() => store.close());
      return store;
    });
    await Promise.all(Array.from({ length: 30 }, (_, i) => stores[i % 3]!.put(['n', `g${i % 2}`], `k${i}`, { i })));
    await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        stores[(i + 1) % 3]!.batch([
          { namespace: ['n', `g${i % 2}`], key: `k${i}`, value: i % 3 === 0 ? null : { i, again: true } },
          { namespace: ['n', `g${(i + 1) % 2}`], key: `k${(i + 7) % 30}`, value: { touched: i } },
        ]),
      ),
    );
    const items = await stores[0]!.search(['n'], { limit: 100 });
    expect(items.length).toBeGreaterThan(0);
    expect(new Set(items.map((i) => `${i.namespace.join(':')}/${i.key}`)).size).toBe(items.length);
    expect(await stores[1]!.listNamespaces()).toEqual([
      ['n', 'g0'],
      ['n', 'g1'],
    ]);
  });
});
