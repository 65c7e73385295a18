import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInMemoryStore } from '../../src/memory/index.ts';
import { startRuntime } from '../../src/runtime.ts';
import { describeMessageLogContract } from '../../src/testing.ts';

// The same contract as the standalone stores, through the runtime: writes routed through
// per-conversation actors (short idle time, so some tests also cross passivations).

describeMessageLogContract('runtime.memory over LMDB', async ({ clock }) => {
  const dir = mkdtempSync(join(tmpdir(), 'mnemo-rt-'));
  const runtime = await startRuntime({ dataDir: dir, wallClock: clock, idleMs: 5 });
  return {
    log: runtime.memory,
    close: async () => {
      await runtime.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

describeMessageLogContract('runtime.memory in memory', async ({ clock }) => {
  const runtime = await startRuntime({ storage: 'memory', wallClock: clock, idleMs: 5 });
  return { log: runtime.memory, close: () => runtime.stop() };
});

describeMessageLogContract('runtime.memory over a custom store', async ({ clock }) => {
  const store = createInMemoryStore({ clock });
  const runtime = await startRuntime({ storage: { store }, idleMs: 5 });
  return {
    log: runtime.memory,
    close: async () => {
      await runtime.stop();
      await store.close();
    },
  };
});
