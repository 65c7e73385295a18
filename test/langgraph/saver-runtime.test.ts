/**
 * MnemoSaver and MnemoStore on a Mnemo runtime: one LMDB environment with the runtime's
 * memory, thread writers supervised in the runtime's tree.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../src/errors.ts';
import { MnemoSaver, MnemoStore } from '../../src/langgraph/index.ts';
import { StorageError } from '../../src/memory/contract/memory-errors.ts';
import type { TreeNode } from '../../src/otp/index.ts';
import { startRuntime, type Runtime } from '../../src/runtime.ts';
import { echoGraph, userTurn } from '../programs/langgraph-echo-graph.ts';

let dataDir: string;
let runtime: Runtime;
let names = 0;

beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'mnemo-lg-runtime-'));
  runtime = await startRuntime({ dataDir, name: `lgrt${++names}` });
});

afterEach(async () => {
  await runtime.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

function threadsSupervisor(tree: TreeNode): TreeNode | undefined {
  return tree.children.find((c) => c.id?.startsWith('langgraph_threads_'));
}

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('MnemoSaver on a runtime', () => {
  it("keeps checkpoints in the runtime's environment, next to its messages, across a restart", async () => {
    const saver = new MnemoSaver({ runtime });
    await runtime.memory.add('c1', [{ role: 'user', content: 'hello' }]);
    await echoGraph(saver).invoke(userTurn(1), { configurable: { thread_id: 't1' } });
    await runtime.stop();

    runtime = await startRuntime({ dataDir, name: `lgrt${++names}` });
    const again = new MnemoSaver({ runtime });
    expect(await runtime.memory.get('c1')).toEqual([{ role: 'user', content: 'hello' }]);
    expect((await echoGraph(again).getState({ configurable: { thread_id: 't1' } })).values.messages).toHaveLength(2);
  });

  it('after runtime.compact(), a saver made before refuses with store_closed (its handles are closed); a new one reads everything', async () => {
    const saver = new MnemoSaver({ runtime });
    await echoGraph(saver).invoke(userTurn(1), { configurable: { thread_id: 't1' } });
    await runtime.compact();
    await expect(echoGraph(saver).invoke(userTurn(2), { configurable: { thread_id: 't1' } })).rejects.toMatchObject({ code: 'store_closed' });
    const again = new MnemoSaver({ runtime });
    expect((await echoGraph(again).getState({ configurable: { thread_id: 't1' } })).values.messages).toHaveLength(2);
    await echoGraph(again).invoke(userTurn(2), { configurable: { thread_id: 't1' } });
    expect((await echoGraph(again).getState({ configurable: { thread_id: 't1' } })).values.messages).toHaveLength(4);
  });

  it("runs one writer per active thread under a supervisor in the runtime's tree", async () => {
    const saver = new MnemoSaver({ runtime });
    const graph = echoGraph(saver);
    await Promise.all(['a', 'b', 'c'].map((t) => graph.invoke(userTurn(1), { configurable: { thread_id: t } })));
    const sup = threadsSupervisor(runtime.inspect());
    expect(sup?.type).toBe('supervisor');
    expect(sup?.children.filter((c) => c.status === 'running')).toHaveLength(3);
  });

  it('a thread writer passivates when idle; the next write starts a new one', async () => {
    const saver = new MnemoSaver({ runtime, idleMs: 20 });
    const graph = echoGraph(saver);
    const config = { configurable: { thread_id: 't' } };
    await graph.invoke(userTurn(1), config);
    await until(() => (threadsSupervisor(runtime.inspect())?.children.length ?? 0) === 0, 'the writer to passivate');
    await graph.invoke(userTurn(2), config);
    expect((await graph.getState(config)).values.messages).toHaveLength(4);
  });

  it('once the runtime stopped, writes and reads reject with store_closed', async () => {
    const saver = new MnemoSaver({ runtime });
    await echoGraph(saver).invoke(userTurn(1), { configurable: { thread_id: 't' } });
    await runtime.stop();
    const error = await saver.deleteThread('t').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StorageError);
    expect((error as StorageError).code).toBe('store_closed');
    const read = await saver.getTuple({ configurable: { thread_id: 't' } }).catch((e: unknown) => e);
    expect((read as StorageError).code).toBe('store_closed');
  });

  it('close() removes its supervisor from the tree; the runtime carries on', async () => {
    const saver = new MnemoSaver({ runtime });
    await echoGraph(saver).invoke(userTurn(1), { configurable: { thread_id: 't' } });
    await saver.close();
    expect(threadsSupervisor(runtime.inspect())).toBeUndefined();
    await runtime.memory.add('c1', [{ role: 'user', content: 'still here' }]);
    expect(await runtime.memory.get('c1')).toHaveLength(1);
  });

  it('refuses a runtime without LMDB storage', async () => {
    const memoryRuntime = await startRuntime({ storage: 'memory', name: `lgrt${++names}` });
    try {
      expect(() => new MnemoSaver({ runtime: memoryRuntime })).toThrow(InvalidInputError);
    } finally {
      await memoryRuntime.stop();
    }
  });
});

describe('MnemoStore on a runtime', () => {
  it("keeps items in the runtime's environment across a restart", async () => {
    const store = new MnemoStore({ runtime });
    await store.put(['users', 'u1'], 'prefs', { theme: 'dark' });
    await runtime.stop();
    runtime = await startRuntime({ dataDir, name: `lgrt${++names}` });
    expect((await new MnemoStore({ runtime }).get(['users', 'u1'], 'prefs'))?.value).toEqual({ theme: 'dark' });
  });
});
