import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/agent/index.ts';
import { danglingToolResults } from '../../src/agent/dangling-tool-calls.ts';
import { createKernel, memoryFilter, newContext, withConversationId } from '../../src/kernel/index.ts';
import type { MessageLog } from '../../src/memory/contract/message-log.ts';
import { createInMemoryStore, createLmdbStore } from '../../src/memory/index.ts';
import type { Message } from '../../src/message.ts';
import {
  defaultProvider,
  readLastTurn,
  readSafeWindow,
  readTokenWindow,
  safeWindow,
  tokenWindow,
  tokenWindowProvider,
} from '../../src/provider/index.ts';
import { startRuntime } from '../../src/runtime.ts';
import { scriptedLlm, text, toolCalls } from '../support/scripted-llm.ts';
import { defineTool } from '../../src/kernel/index.ts';

/** mulberry32: a small seeded PRNG, so a failing history can be replayed from its seed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A random history: system, user and assistant messages, assistant tool-call turns with 1-3
 * calls, their results, in random order, broken ones included (results before or without
 * their call, calls without results, results of unknown ids, duplicate results). Call ids are
 * `${idPrefix}0`, `${idPrefix}1`, ...
 */
function randomHistory(random: () => number, length: number, idPrefix = 'c'): Message[] {
  const out: Message[] = [];
  const open: string[] = [];
  let next = 0;
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const words = (): string => 'x'.repeat(1 + Math.floor(random() * 40));
  for (let i = 0; i < length; i++) {
    const r = random();
    if (r < 0.07) out.push({ role: 'system', content: `sys ${i} ${words()}` });
    else if (r < 0.3) out.push({ role: 'user', content: `u ${i} ${words()}` });
    else if (r < 0.45) out.push({ role: 'assistant', content: `a ${i} ${words()}` });
    else if (r < 0.6) {
      const calls = Array.from({ length: 1 + Math.floor(random() * 3) }, () => {
        const id = `${idPrefix}${next++}`;
        open.push(id);
        return { id, type: 'function' as const, function: { name: 'f', arguments: '{}' } };
      });
      out.push({ role: 'assistant', content: random() < 0.3 ? 'thinking' : null, tool_calls: calls });
    } else {
      // Mostly a result for an open call, sometimes an orphan, an early or a duplicate one.
      const id = open.length > 0 && random() < 0.8 ? open.splice(Math.floor(random() * open.length), 1)[0]! : pick([`${idPrefix}${next + 1}`, `${idPrefix}0`, 'ghost']);
      out.push({ role: 'tool', tool_call_id: id, content: `r ${i} ${words()}` });
    }
  }
  return out;
}

const count = (m: Message): number => 1 + Math.ceil(JSON.stringify(m).length / 16);

const dir = mkdtempSync(join(tmpdir(), 'mnemo-bounded-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const fresh = () => join(dir, Math.random().toString(36).slice(2));
const backends: Array<[string, () => Promise<MessageLog & { close?: () => Promise<void> }>]> = [
  ['in memory', async () => createInMemoryStore()],
  ['LMDB', async () => createLmdbStore({ path: fresh() })],
  [
    'runtime.memory (LMDB)',
    async () => {
      const runtime = await startRuntime({ dataDir: fresh(), name: `bounded-${Math.random().toString(36).slice(2)}` });
      return Object.assign(Object.create(runtime.memory) as MessageLog, { close: () => runtime.stop() });
    },
  ],
];

/** A log that counts whole-history reads (`get`). */
function counting(log: MessageLog): MessageLog & { gets: number } {
  const counted = { ...log, gets: 0 } as MessageLog & { gets: number };
  for (const k of ['add', 'append', 'clear', 'range', 'tail', 'systemMessages', 'lastId'] as const) {
    (counted as unknown as Record<string, unknown>)[k] = (log[k] as (...a: unknown[]) => unknown).bind(log);
  }
  counted.get = (id) => {
    counted.gets++;
    return log.get(id);
  };
  return counted;
}

describe.each(backends)('bounded readers over %s', (_name, make) => {
  it('readSafeWindow equals safeWindow over the whole history, for random histories and windows', async () => {
    const log = await make();
    for (let seed = 1; seed <= 60; seed++) {
      const random = prng(seed);
      const history = randomHistory(random, Math.floor(random() * 300));
      const id = `s${seed}`;
      // Several appends, as a conversation grows.
      for (let at = 0; at < history.length; at += 37) await log.add(id, history.slice(at, at + 37));
      for (const n of [1, 2, 3, 5, 8, 13, 50, 400, 1 + Math.floor(random() * 120)]) {
        expect(await readSafeWindow(log, id, n), `seed ${seed}, n ${n}`).toEqual(safeWindow(history, n));
      }
    }
    await log.close?.();
  });

  it('readTokenWindow equals tokenWindow over the whole history, for random histories and budgets', async () => {
    const log = await make();
    for (let seed = 100; seed <= 160; seed++) {
      const random = prng(seed);
      const history = randomHistory(random, Math.floor(random() * 300));
      const id = `t${seed}`;
      for (let at = 0; at < history.length; at += 50) await log.add(id, history.slice(at, at + 50));
      for (const budget of [1, 10, 40, 100, 300, 1000, 5000, 100_000, 1 + Math.floor(random() * 2000)]) {
        expect(await readTokenWindow(log, id, budget, count), `seed ${seed}, budget ${budget}`).toEqual(tokenWindow(history, budget, count));
      }
    }
    await log.close?.();
  });

  it('readLastTurn returns the history from its last user message on, and all of it without one', async () => {
    const log = await make();
    for (let seed = 200; seed <= 240; seed++) {
      const random = prng(seed);
      const history = randomHistory(random, Math.floor(random() * 200));
      const id = `l${seed}`;
      await log.add(id, history);
      const last = history.findLastIndex((m) => m.role === 'user');
      expect(await readLastTurn(log, id), `seed ${seed}`).toEqual(history.slice(Math.max(last, 0)));
    }
    await log.close?.();
  });

  it('healing from the last turn equals healing from the whole history when earlier turns are answered', async () => {
    const log = await make();
    for (let seed = 300; seed <= 340; seed++) {
      const random = prng(seed);
      // Earlier turns healed (as each run heals before it stores its user message), the last one random.
      const earlier = randomHistory(random, Math.floor(random() * 150));
      const healedEarlier = [...earlier, ...danglingToolResults(earlier)];
      const history = [...healedEarlier, { role: 'user', content: 'now' } as Message, ...randomHistory(random, Math.floor(random() * 20), 'last').filter((m) => m.role !== 'user')];
      const id = `h${seed}`;
      await log.add(id, history);
      expect(danglingToolResults(await readLastTurn(log, id)), `seed ${seed}`).toEqual(danglingToolResults(history));
    }
    await log.close?.();
  });

  it('providers with a window over a MessageLog read boundedly what prepare(history) gives', async () => {
    const log = await make();
    const history = randomHistory(prng(7), 400);
    await log.add('p', history);
    const windowed = defaultProvider(log, 20);
    expect(await windowed.prepareHistory!('p')).toEqual(await windowed.prepare('p', await windowed.history('p')));
    const tokens = tokenWindowProvider(log, { maxTokens: 300, countTokens: count });
    expect(await tokens.prepareHistory!('p')).toEqual(await tokens.prepare('p', await tokens.history('p')));
    // Without a window the default provider keeps the whole-history path.
    expect(defaultProvider(log).prepareHistory).toBeUndefined();
    await log.close?.();
  });

  it('an agent with a window over a MessageLog sends what the whole-history path sends', async () => {
    const log = await make();
    const history = randomHistory(prng(11), 250);
    await log.add('bounded', history);
    await log.add('whole', history);
    const wholeProvider = { ...defaultProvider(log, 30), prepareHistory: undefined, lastTurn: undefined };
    const one = scriptedLlm(() => text('ok'));
    const two = scriptedLlm(() => text('ok'));
    await createAgent({ llm: one, memory: defaultProvider(log, 30), conversationId: 'bounded' }).run('next');
    await createAgent({ llm: two, memory: wholeProvider, conversationId: 'whole' }).run('next');
    expect(one.calls[0]!.messages).toEqual(two.calls[0]!.messages);
    expect(await log.get('bounded')).toEqual(await log.get('whole'));
    await log.close?.();
  });

  it('memoryFilter with a window sends safeWindow of the history; without one, the full history', async () => {
    const log = await make();
    const history = randomHistory(prng(13), 200);
    await log.add('w', history);
    await log.add('f', history);
    const windowed = scriptedLlm(() => text('ok'));
    const full = scriptedLlm(() => text('ok'));
    const delta: Message[] = [{ role: 'user', content: 'q' }];
    await createKernel({ llm: windowed, filters: [memoryFilter(log, { window: 25 })] }).invoke(delta, { context: withConversationId(newContext(), 'w') });
    await createKernel({ llm: full, filters: [memoryFilter(log)] }).invoke(delta, { context: withConversationId(newContext(), 'f') });
    expect(windowed.calls[0]!.messages).toEqual(safeWindow([...history, ...delta], 25));
    expect(full.calls[0]!.messages).toEqual([...history, ...delta]);
    await log.close?.();
  });
});

describe.each(backends)('turns that read no whole history, over %s', (_name, make) => {
  it('an agent with { window } over a MessageLog never reads the whole history, tool rounds and healing included', async () => {
    const base = await make();
    const log = counting(base);
    // An abandoned run: a tool call without its result at the end.
    await log.add('a', [...randomHistory(prng(21), 300, 'old'), { role: 'user', content: 'q' }]);
    await log.add('a', [{ role: 'assistant', content: null, tool_calls: [{ id: 'dangling', type: 'function', function: { name: 'f', arguments: '{}' } }] }]);
    const echo = defineTool({ name: 'echo', description: '', parameters: {}, execute: async () => 'e' });
    const llm = scriptedLlm([toolCalls(['k1', 'echo', {}]), text('done')]);
    await createAgent({ llm, tools: [echo], memory: defaultProvider(log, 10), conversationId: 'a' }).run('go');
    expect(log.gets).toBe(0);
    const stored = await base.get('a');
    expect(stored.find((m) => m.role === 'tool' && m.tool_call_id === 'dangling')).toBeDefined();
    expect(llm.calls[1]!.messages).toEqual(safeWindow(stored.slice(0, -1), 10));
    await base.close?.();
  });

  it('memoryFilter with a window over a MessageLog never reads the whole history', async () => {
    const base = await make();
    const log = counting(base);
    await log.add('m', randomHistory(prng(23), 200));
    const llm = scriptedLlm(() => text('ok'));
    await createKernel({ llm, filters: [memoryFilter(log, { window: 5 })] }).invoke([{ role: 'user', content: 'q' }], {
      context: withConversationId(newContext(), 'm'),
    });
    expect(log.gets).toBe(0);
    await base.close?.();
  });
});

it('memoryFilter rejects a window that is not an integer > 0', () => {
  expect(() => memoryFilter(createInMemoryStore(), { window: 0 })).toThrow(expect.objectContaining({ code: 'invalid_option' }));
});
