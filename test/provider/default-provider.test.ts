import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createInMemoryStore, createLmdbStore, type LmdbStore } from '../../src/memory/index.ts';
import type { ChatMemory } from '../../src/memory/contract/chat-memory.ts';
import type { Message } from '../../src/message.ts';
import { defaultProvider, InvalidMemoryConfigError, isMemoryProvider } from '../../src/provider/index.ts';

const u = (c: string): Message => ({ role: 'user', content: c });
const a = (c: string): Message => ({ role: 'assistant', content: c });
const tool = (id: string): Message => ({ role: 'tool', tool_call_id: id, content: 'r' });

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup) await c();
  cleanup = [];
});

function lmdbStore(): LmdbStore {
  const dir = mkdtempSync(join(tmpdir(), 'mnemo-provider-'));
  const store = createLmdbStore({ path: dir });
  cleanup.push(async () => {
    await new Promise((r) => setTimeout(r, 0));
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return store;
}

describe('defaultProvider', () => {
  it('history is [] for an unknown conversation', async () => {
    expect(await defaultProvider(createInMemoryStore()).history('nobody')).toEqual([]);
  });

  it('read-your-writes: history sees every append that resolved (LMDB store)', async () => {
    const provider = defaultProvider(lmdbStore());
    await provider.append('c', [u('u1')]);
    expect(await provider.history('c')).toEqual([u('u1')]);
    await provider.append('c', [a('a1'), u('u2')]);
    expect(await provider.history('c')).toEqual([u('u1'), a('a1'), u('u2')]);
  });

  it('without a window, prepare sends everything', async () => {
    const ms = [tool('x'), u('u1'), a('a1')];
    expect(await defaultProvider(createInMemoryStore()).prepare('c', ms)).toEqual(ms);
  });

  it('with a window, prepare is safeWindow and the store still keeps everything', async () => {
    const store = createInMemoryStore();
    const provider = defaultProvider(store, 2);
    const ms = [u('u1'), a('a1'), u('u2'), a('a2')];
    await provider.append('c', ms);
    expect(await provider.prepare('c', await provider.history('c'))).toEqual([u('u2'), a('a2')]);
    expect(await store.get('c')).toEqual(ms);
  });

  it('clear forgets that conversation only', async () => {
    const provider = defaultProvider(createInMemoryStore());
    await provider.append('c1', [u('x')]);
    await provider.append('c2', [u('y')]);
    await provider.clear('c1');
    expect(await provider.history('c1')).toEqual([]);
    expect(await provider.history('c2')).toEqual([u('y')]);
  });

  it('rejects a window that is not an integer > 0 with invalid_memory_config', () => {
    for (const w of [0, -1, 2.5, Number.NaN, Infinity]) {
      const err = (() => {
        try {
          defaultProvider(createInMemoryStore(), w);
        } catch (e) {
          return e;
        }
      })();
      expect(err, String(w)).toBeInstanceOf(InvalidMemoryConfigError);
      expect((err as InvalidMemoryConfigError).code).toBe('invalid_memory_config');
    }
  });

  it('rejects something that is not a store', () => {
    expect(() => defaultProvider({ get: async () => [] } as unknown as ChatMemory)).toThrow(InvalidMemoryConfigError);
  });

  it('is a MemoryProvider by duck typing', () => {
    expect(isMemoryProvider(defaultProvider(createInMemoryStore()))).toBe(true);
    expect(isMemoryProvider(createInMemoryStore())).toBe(false);
  });
});
