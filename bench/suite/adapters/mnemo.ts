import { startRuntime, type Runtime } from '../../../src/runtime.ts';
import type { MessageLog } from '../../../src/index.ts';
import { createLmdbStore } from '../../../src/memory/index.ts';
import type { AdapterFactory, AdapterInfo, BenchMessage, LogAdapter } from '../types.ts';
import { BENCH_USER, lmdbKeyOf } from './lmdb-layout.ts';

/**
 * Mnemo as a user runs it: `startRuntime` (the supervision tree), `runtime.memory` (writes go
 * through one actor per conversation, group-committed; `add` resolves once committed and
 * flushed), and `runtime.recall` (the layered memory, supervised with its search pool: large
 * scans on worker threads) for keyword search and chat turns.
 *
 * Conversation keys are recall's session ids (`session/bench/<c>`), so search reads what the
 * other workloads wrote.
 */
let runtimes = 0;

const lmdbInfo: AdapterInfo = {
  id: 'mnemo-lmdb',
  label: 'Mnemo (LMDB)',
  durable: true,
  durability: 'one O_DIRECT + O_DSYNC write of the write-ahead journal (LMDB takes the batch later), or under many conversations an LMDB commit + fdatasync (ack after `flushed`), via runtime.memory.add (per-conversation actor, group commit)',
  notes: 'startRuntime({storage: "lmdb"}): the product path, through the per-conversation actors',
  compaction: "runtime.compact({ copy: 'rebuild' }) (`mnemo compact --rebuild`): data.mdb rewritten entry by entry in key order, pages packed",
};

const memoryInfo: AdapterInfo = {
  id: 'mnemo-memory',
  label: 'Mnemo (in-memory)',
  durable: false,
  durability: 'none (in-memory store owned by the store actor)',
  notes: 'startRuntime({storage: "memory"}): same actors, no disk',
};

/** Starts a runtime on `dir` (with LMDB, `runtime.recall` comes with it). */
export function startMnemo(dir: string, storage: 'lmdb' | 'memory'): Promise<Runtime> {
  return startRuntime({ name: `bench${++runtimes}`, dataDir: dir, storage });
}

/** A log's append, load and tail over `runtime.memory`, whatever the runtime's storage. */
export function memoryLog(memory: MessageLog): Pick<LogAdapter, 'append' | 'load' | 'tail'> {
  return {
    async append(c, message) {
      await memory.add(lmdbKeyOf(c), [message]);
    },
    async load(c, messages) {
      const key = lmdbKeyOf(c);
      for (let i = 0; i < messages.length; i += 10_000) await memory.add(key, messages.slice(i, i + 10_000));
    },
    async tail(c, n) {
      return (await memory.tail(lmdbKeyOf(c), n)).map((r) => r.message as BenchMessage);
    },
  };
}

function mnemoFactory(info: AdapterInfo, storage: 'lmdb' | 'memory'): AdapterFactory {
  return {
    info,
    async open(dir) {
      const runtime = await startMnemo(dir, storage);
      const recall = runtime.storage.kind === 'lmdb' ? runtime.recall : undefined;
      const adapter: LogAdapter = {
        info,
        ...memoryLog(runtime.memory),
        ...(recall === undefined
          ? {}
          : {
              async search(c: string, keyword: string, limit: number) {
                const rows = await recall.searchSession({ userId: BENCH_USER, sessionId: c, keyword, limit });
                return rows.map((r) => ({ role: r.role as BenchMessage['role'], content: r.content }));
              },
            }),
        ...(storage === 'lmdb' ? { compact: async () => void (await runtime.compact({ copy: 'rebuild' })) } : {}),
        close: () => runtime.stop(),
      };
      return adapter;
    },
  };
}

export const mnemoLmdb = mnemoFactory(lmdbInfo, 'lmdb');
export const mnemoMemory = mnemoFactory(memoryInfo, 'memory');

/**
 * Diagnostic, for the append workload only: Mnemo's LMDB store used standalone
 * (`createLmdbStore`, no runtime, no actors: a promise-chain lane per conversation), so the
 * table shows what the per-conversation actors cost on top of the store.
 */
export const mnemoStore: AdapterFactory = {
  info: {
    id: 'mnemo-store',
    label: 'Mnemo store, no actors',
    durable: true,
    durability: 'the same as Mnemo (LMDB): journal write, or LMDB commit + fdatasync, via createLmdbStore().add',
    notes: 'diagnostic: the same store without the runtime (no xstate actors, no router)',
    diagnostic: true,
  },
  async open(dir) {
    const store = createLmdbStore({ path: dir });
    return {
      info: mnemoStore.info,
      async append(c, message) {
        await store.add(lmdbKeyOf(c), [message]);
      },
      async load(c, messages) {
        await store.add(lmdbKeyOf(c), messages);
      },
      async tail(c, n) {
        return (await store.tail(lmdbKeyOf(c), n)).map((r) => r.message as BenchMessage);
      },
      close: () => store.close(),
    };
  },
};
