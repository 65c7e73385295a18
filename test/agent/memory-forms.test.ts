import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/agent/index.ts';
import { createInMemoryStore, defaultMemory } from '../../src/memory/index.ts';
import type { ChatMemory } from '../../src/memory/contract/chat-memory.ts';
import type { Message } from '../../src/message.ts';
import { InvalidMemoryConfigError, type MemoryProvider } from '../../src/provider/index.ts';
import { scriptedLlm, text } from '../support/scripted-llm.ts';

const u = (c: string): Message => ({ role: 'user', content: c });
const a = (c: string): Message => ({ role: 'assistant', content: c });

// Without a runtime the default store is an unsupervised LMDB store under ./data: run in a
// temp directory so it lands there (vitest's forks pool lets a test file chdir).
let dir: string;
let cwd: string;
beforeAll(() => {
  cwd = process.cwd();
  dir = mkdtempSync(join(tmpdir(), 'mnemo-agent-'));
  process.chdir(dir);
});
afterAll(() => {
  process.chdir(cwd);
  rmSync(dir, { recursive: true, force: true });
});

/** Two runs of one agent: what the second LLM call was sent. */
async function secondCallSees(memory: unknown, conversationId = `c-${Math.random()}`): Promise<Message[]> {
  const llm = scriptedLlm([text('a1'), text('a2')]);
  const agent = createAgent({ llm, memory: memory as never, conversationId });
  await agent.run('u1');
  await agent.run('u2');
  return llm.calls[1]!.messages;
}

describe('agent memory forms', () => {
  it("'default' (and omitted) uses the shared default store, without a window", async () => {
    expect(defaultMemory()).toBeDefined();
    expect(existsSync(join(dir, 'data'))).toBe(true);
    const id = `default-${Date.now()}`;
    expect(await secondCallSees('default', id)).toEqual([u('u1'), a('a1'), u('u2')]);
    expect(await defaultMemory().get(id)).toEqual([u('u1'), a('a1'), u('u2'), a('a2')]);
    const omitted = createAgent({ llm: scriptedLlm([text('x')]), conversationId: `${id}-omitted` });
    await omitted.run('hi');
    expect(await defaultMemory().get(`${id}-omitted`)).toEqual([u('hi'), a('x')]);
  });

  it('agents share the default store, partitioned by conversation id', async () => {
    const one = createAgent({ llm: scriptedLlm([text('x')]), conversationId: 'share-1' });
    const two = createAgent({ llm: scriptedLlm([text('y')]), conversationId: 'share-2' });
    await one.run('from one');
    await two.run('from two');
    expect(await one.messages()).toEqual([u('from one'), a('x')]);
    expect(await two.messages()).toEqual([u('from two'), a('y')]);
  });

  it('{window: n} uses the shared default store and sends the last n messages', async () => {
    const id = `window-${Date.now()}`;
    expect(await secondCallSees({ window: 2 }, id)).toEqual([a('a1'), u('u2')]);
    expect(await defaultMemory().get(id)).toHaveLength(4);
  });

  it('{store} uses your store, without a window', async () => {
    const store = createInMemoryStore();
    expect(await secondCallSees({ store }, 'mine')).toEqual([u('u1'), a('a1'), u('u2')]);
    expect(await store.get('mine')).toHaveLength(4);
  });

  it('a provider object is used as is', async () => {
    const log: string[] = [];
    const data: Message[] = [];
    const provider: MemoryProvider = {
      history: async () => (log.push('history'), [...data]),
      append: async (_id, ms) => (log.push(`append ${ms.length}`), void data.push(...ms)),
      prepare: async (_id, ms) => (log.push('prepare'), [{ role: 'system', content: 'recalled' }, ...ms]),
      clear: async () => void (data.length = 0),
    };
    const llm = scriptedLlm([text('ok')]);
    await createAgent({ llm, memory: provider }).run('hi');
    expect(log).toEqual(['history', 'append 1', 'prepare', 'append 1']);
    expect(llm.calls[0]?.messages).toEqual([{ role: 'system', content: 'recalled' }, u('hi')]);
  });

  it("false and 'none' keep no memory: each run starts from nothing", async () => {
    for (const memory of [false, 'none'] as const) {
      const llm = scriptedLlm([text('a1'), text('a2')]);
      const agent = createAgent({ llm, memory });
      await agent.run('u1');
      await agent.run('u2');
      expect(llm.calls[1]?.messages).toEqual([u('u2')]);
      expect(await agent.messages()).toEqual([]);
      await agent.addMessage(u('ignored'));
      expect(await agent.messages()).toEqual([]);
      expect(agent.memory).toBeUndefined();
    }
  });

  it('rejects invalid forms at creation with invalid_memory_config', () => {
    const store: ChatMemory = createInMemoryStore();
    const invalid: unknown[] = [
      { window: 0 }, { window: -1 }, { window: 1.5 }, { window: '5' }, { store: 42 }, { store: {} },
      { window: 5, store }, { stroe: store }, true, 42, 'bogus', null, [], { history: () => [] },
    ];
    for (const memory of invalid) {
      let err: unknown;
      try {
        createAgent({ llm: scriptedLlm([]), memory: memory as never });
      } catch (e) {
        err = e;
      }
      expect(err, JSON.stringify(memory)).toBeInstanceOf(InvalidMemoryConfigError);
      expect((err as InvalidMemoryConfigError).code).toBe('invalid_memory_config');
    }
  });
});
