import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { monitor, stop, whereis } from '../../src/otp/index.ts';
import { startRuntime, type Runtime } from '../../src/runtime.ts';

// runtime.recall: the layered memory as supervised children of the root (search pool, then the
// recall service), reached through a facade that always uses the live incarnation.

let runtime: Runtime | undefined;
let dir: string | undefined;
afterEach(async () => {
  await runtime?.stop();
  runtime = undefined;
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

const start = async (options: Parameters<typeof startRuntime>[0] = {}) => {
  dir = mkdtempSync(join(tmpdir(), 'mnemo-recall-sup-'));
  runtime = await startRuntime({ name: 'recall_sup', dataDir: dir, lmdb: { noSync: true }, ...options });
  return runtime;
};

it('the tree holds the search pool and the recall service after the memory', async () => {
  const rt = await start();
  const ids = rt.inspect().children.map((c) => c.id);
  expect(ids).toEqual(['lmdb_environment', 'default_memory', 'conversations', 'search_pool', 'recall']);
});

it('a turn through runtime.recall is stored in the runtime memory', async () => {
  const rt = await start();
  const turn = await rt.recall.chat({ userId: 'alice', sessionId: 'coffee', message: 'hello' });
  expect(turn.reply).toBe('收到：hello。我已经记录到记忆中。');
  expect(turn.title).toBe('hello');
  expect((await rt.memory.tail('session/alice/coffee', 10)).map((r) => r.message_id)).toEqual([1, 2]);
});

it('a crashed recall process is restarted and calls reach the new incarnation', async () => {
  const rt = await start();
  await rt.recall.chat({ userId: 'alice', sessionId: 's1', message: 'before the crash' });
  const first = whereis('recall_sup_recall');
  expect(first).toBeDefined();
  const down = new Promise((resolve) => monitor(first!, (d) => resolve(d.reason)));
  // The recall process traps exits, so an exit signal from outside its supervisor would only reach
  // handleInfo (gen_server's rule); gen_server:stop with a crash reason runs terminate and exits with it.
  const crash = { crashed: new Error('injected') } as const;
  void stop(first!, crash);
  await down;
  // Called while the supervisor may still be restarting it: the facade waits.
  const rows = await rt.recall.getSessionMessages('alice', 's1');
  expect(rows.map((r) => r.content)).toEqual(['before the crash', '收到：before the crash。我已经记录到记忆中。']);
  const second = whereis('recall_sup_recall');
  expect(second).toBeDefined();
  expect(second).not.toBe(first);
  const node = rt.inspect().children.find((c) => c.id === 'recall');
  expect(node?.restarts).toBe(1);
});

it('with in-memory storage the layered memory is unavailable, with a typed error', async () => {
  const rt = await start({ storage: 'memory' });
  await expect(rt.recall.listSessions('alice')).rejects.toMatchObject({ code: 'recall_unavailable' });
  expect(rt.inspect().children.map((c) => c.id)).not.toContain('recall');
});

it('recall: false leaves it out of the tree', async () => {
  const rt = await start({ recall: false });
  expect(rt.inspect().children.map((c) => c.id)).toEqual(['lmdb_environment', 'default_memory', 'conversations']);
  await expect(rt.recall.chat({ userId: 'a', sessionId: 'b', message: 'c' })).rejects.toMatchObject({ code: 'recall_unavailable' });
});

it('after stop, calls are refused with store_closed', async () => {
  const rt = await start();
  await rt.stop();
  await expect(rt.recall.listSessions('alice')).rejects.toMatchObject({ code: 'store_closed' });
});
