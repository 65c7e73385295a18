/**
 * Test kit for store implementers (`mnemo/testing`): the behaviour every `MessageLog` must
 * have, as a vitest suite. Run it against your backend:
 *
 *   describeMessageLogContract('my store', async ({ clock }) => {
 *     const store = createMyStore({ clock });
 *     return { log: store, close: () => store.close() };
 *   });
 *
 * `describeChatMemoryContract` is the subset for a plain `ChatMemory`.
 *
 * `describeRecallStoreContract` is the suite of the layered memory's storage port
 * (`RecallStore`, with its `JobQueue`): every adapter of it (LMDB, PostgreSQL, yours) passes it.
 * Also here: `createFaultInjector` (crash actors on purpose, for recovery tests).
 *
 * @module mnemo/testing
 */
import { describe, expect, it } from 'vitest';
import { InvalidInputError } from './errors.ts';
import type { ChatMemory } from './memory/contract/chat-memory.ts';
import type { MessageLog } from './memory/contract/message-log.ts';
import type { Message } from './message.ts';
import { isoWithOffset, type WallClock } from './wall-clock.ts';

export { createFaultInjector, type FaultInjector } from './memory/runtime/fault-injector.ts';
export {
  describeJobQueueContract,
  describeRecallStoreContract,
  type MakeRecallStore,
  type RecallStoreContractOptions,
  type RecallStoreUnderTest,
} from './recall/storage-contract/recall-store-contract.ts';

/** A store under test, and how to dispose of it after each test. */
export interface StoreUnderTest<S> {
  /** The store. */
  log: S;
  /** Disposes of it (called after each test). */
  close?: () => Promise<void>;
}

/** What a contract suite hands the factory of each test's store. */
export interface ContractOptions {
  /** A clock the store must stamp `ts` from. */
  clock: WallClock;
}

/** Makes a fresh, empty store for one test, stamping `ts` from `options.clock`. */
export type MakeStore<S> = (options: ContractOptions) => Promise<StoreUnderTest<S>>;

/** A stepping clock: each reading is one second after the last, from 2026-01-02T03:04:05Z. */
function steppingClock(): WallClock & { readings: number[] } {
  const readings: number[] = [];
  let t = Date.UTC(2026, 0, 2, 3, 4, 5);
  return {
    readings,
    now: () => {
      t += 1000;
      readings.push(t);
      return t;
    },
  };
}

async function withStore<S>(make: MakeStore<S>, body: (log: S, clock: ReturnType<typeof steppingClock>) => Promise<void>) {
  const clock = steppingClock();
  const store = await make({ clock });
  try {
    await body(store.log, clock);
  } finally {
    await store.close?.();
  }
}

const user = (content: string): Message => ({ role: 'user', content });
const assistant = (content: string): Message => ({ role: 'assistant', content });

/** Messages exercising every shape a store must keep exactly. */
export const tricky: readonly Message[] = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image_url', image_url: { url: 'data:,x', detail: 'low' } }] },
  {
    role: 'assistant',
    content: null,
    tool_calls: [
      { id: 'call_1', type: 'function', function: { name: 'search', arguments: '{"q":"lmdb","n":3}' } },
      { id: 'call_2', type: 'function', function: { name: 'noop', arguments: '' } },
    ],
    content_blocks: [{ type: 'thinking', thinking: 'hmm', signature: 'sig==' }, { type: 'redacted_thinking', data: 'abc' }],
  },
  { role: 'tool', tool_call_id: 'call_1', name: 'search', content: '["a","b"]' },
  { role: 'tool', tool_call_id: 'call_2', content: '' },
  {
    role: 'assistant',
    content: 'Ünïcødé ✓ 😀 \u2028 "quotes" \\ \n\t',
    name: 'bot',
    // extra JSON fields, nested values, edge numbers, a key that is not a prototype
    ...({
      writes: { files: [{ path: 'a/b', bytes: 12 }], flag: true, none: null },
      score: 0.1,
      big: 9007199254740991,
      neg: -1e-300,
      empty: {},
      list: [[], [[1]], { a: [null, false] }],
      ['__proto__' as string]: { polluted: true },
    } as object),
  } as Message,
];

/**
 * Registers, under `describe(name)`, the vitest tests every `ChatMemory` must pass, each on a fresh
 * store from `make`.
 */
export function describeChatMemoryContract(name: string, make: MakeStore<ChatMemory>): void {
  describe(`${name}: ChatMemory contract`, () => {
    it('returns [] for an unknown conversation', async () => {
      await withStore(make, async (m) => expect(await m.get('nobody')).toEqual([]));
    });

    it('returns added messages in chronological order', async () => {
      await withStore(make, async (m) => {
        await m.add('c', [user('1'), assistant('2')]);
        await m.add('c', [user('3')]);
        expect(await m.get('c')).toEqual([user('1'), assistant('2'), user('3')]);
      });
    });

    it('treats an empty add as harmless', async () => {
      await withStore(make, async (m) => {
        await m.add('c', []);
        expect(await m.get('c')).toEqual([]);
        await m.add('c', [user('x')]);
        await m.add('c', []);
        expect(await m.get('c')).toEqual([user('x')]);
      });
    });

    it('keeps conversations apart, even when one id is a prefix of another', async () => {
      await withStore(make, async (m) => {
        await Promise.all([m.add('a', [user('in a')]), m.add('ab', [user('in ab')]), m.add('a b', [user('in a b')])]);
        expect(await m.get('a')).toEqual([user('in a')]);
        expect(await m.get('ab')).toEqual([user('in ab')]);
        expect(await m.get('a b')).toEqual([user('in a b')]);
      });
    });

    it('clears one conversation only', async () => {
      await withStore(make, async (m) => {
        await m.add('a', [user('1')]);
        await m.add('b', [user('2')]);
        await m.clear('a');
        expect(await m.get('a')).toEqual([]);
        expect(await m.get('b')).toEqual([user('2')]);
        await m.clear('never-used');
      });
    });

    it('round-trips tool_calls, content_blocks, nested values and extra fields exactly', async () => {
      await withStore(make, async (m) => {
        await m.add('c', tricky);
        const back = await m.get('c');
        expect(back).toEqual(tricky);
        expect(JSON.stringify(back)).toBe(JSON.stringify(tricky));
        const last = back[back.length - 1] as unknown as Record<string, unknown>;
        expect(Object.getOwnPropertyNames(last)).toContain('__proto__');
        expect(Object.getPrototypeOf(last)).toBe(Object.prototype);
      });
    });

    it('stores a snapshot: mutating the message after add, or the result of get, changes nothing', async () => {
      await withStore(make, async (m) => {
        const msg = { role: 'user', content: 'original' } as { role: 'user'; content: string };
        const pending = m.add('c', [msg]);
        msg.content = 'mutated';
        await pending;
        const got = await m.get('c');
        (got[0] as { content: string }).content = 'changed by reader';
        expect(await m.get('c')).toEqual([user('original')]);
      });
    });

    it('interleaves concurrent adds to one conversation without losing any', async () => {
      await withStore(make, async (m) => {
        await Promise.all(Array.from({ length: 50 }, (_, i) => m.add('c', [user(`m${i}`), assistant(`r${i}`)])));
        const got = await m.get('c');
        expect(got).toHaveLength(100);
        for (let i = 0; i < 50; i++) {
          const at = got.findIndex((x) => x.content === `m${i}`);
          expect(got[at + 1]).toEqual(assistant(`r${i}`));
        }
      });
    });

    describe('rejects bad input with InvalidInputError and stores nothing', () => {
      const bad: Array<[string, unknown, string]> = [
        ['an unknown role', { role: 'robot', content: 'x' }, 'role'],
        ['missing content', { role: 'user' }, 'content'],
        ['non-string system content', { role: 'system', content: 42 }, 'content'],
        ['user content parts without a type', { role: 'user', content: [{ text: 'x' }] }, 'content'],
        ['tool_calls that are not a list', { role: 'assistant', content: null, tool_calls: {} }, 'tool_calls'],
        [
          'a tool call with non-string arguments',
          { role: 'assistant', content: null, tool_calls: [{ id: '1', type: 'function', function: { name: 'f', arguments: {} } }] },
          'tool_calls[0].function.arguments',
        ],
        ['tool_calls on a user message', { role: 'user', content: 'x', tool_calls: [] }, 'tool_calls'],
        ['a tool message without tool_call_id', { role: 'tool', content: 'x' }, 'tool_call_id'],
        ['an undefined field', { role: 'user', content: 'x', extra: undefined }, 'message.extra'],
        ['a function value', { role: 'user', content: 'x', f: () => 1 }, 'message.f'],
        ['NaN', { role: 'user', content: 'x', n: Number.NaN }, 'message.n'],
        ['Infinity', { role: 'user', content: 'x', n: Infinity }, 'message.n'],
        ['a Date', { role: 'user', content: 'x', d: new Date(0) }, 'message.d'],
        ['a bigint', { role: 'user', content: 'x', b: 1n }, 'message.b'],
        ['a hole in an array', { role: 'user', content: 'x', a: [1, , 3] }, 'message.a[1]'],
        ['a message that is not an object', 'hello', 'message'],
      ];
      for (const [what, message, field] of bad) {
        it(`${what} (field ${field})`, async () => {
          await withStore(make, async (m) => {
            await m.add('c', [user('kept')]);
            const error = await m.add('c', [user('fine'), message as Message]).catch((e: unknown) => e);
            expect(error).toBeInstanceOf(InvalidInputError);
            expect((error as InvalidInputError).code).toBe('invalid_message');
            expect((error as InvalidInputError).details).toMatchObject({ index: 1, field });
            expect(await m.get('c')).toEqual([user('kept')]);
          });
        });
      }

      it('a cyclic value', async () => {
        await withStore(make, async (m) => {
          const cyclic: Record<string, unknown> = { role: 'user', content: 'x' };
          cyclic['self'] = cyclic;
          const error = await m.add('c', [cyclic as unknown as Message]).catch((e: unknown) => e);
          expect((error as InvalidInputError).code).toBe('invalid_message');
          expect(await m.get('c')).toEqual([]);
        });
      });

      it('a batch that is not an array', async () => {
        await withStore(make, async (m) => {
          const error = await m.add('c', user('x') as unknown as Message[]).catch((e: unknown) => e);
          expect(error).toBeInstanceOf(InvalidInputError);
          expect((error as InvalidInputError).code).toBe('invalid_batch');
        });
      });

      const badIds: Array<[string, unknown]> = [
        ['an empty id', ''],
        ['an id over 512 UTF-8 bytes', 'é'.repeat(257)],
        ['an id containing NUL', 'a\u0000b'],
        ['an id with a lone surrogate', 'a\uD800'],
        ['a non-string id', 42],
      ];
      for (const [what, id] of badIds) {
        it(`${what}, on every method`, async () => {
          await withStore(make, async (m) => {
            for (const op of [() => m.get(id as string), () => m.add(id as string, [user('x')]), () => m.clear(id as string)]) {
              const error = await op().catch((e: unknown) => e);
              expect(error).toBeInstanceOf(InvalidInputError);
              expect((error as InvalidInputError).code).toBe('invalid_id');
            }
          });
        });
      }

      it('accepts an id of exactly 512 UTF-8 bytes', async () => {
        await withStore(make, async (m) => {
          const id = 'é'.repeat(256);
          await m.add(id, [user('x')]);
          expect(await m.get(id)).toEqual([user('x')]);
        });
      });
    });
  });
}

/**
 * Registers, under `describe(name)`, the vitest tests every `MessageLog` must pass (the
 * `ChatMemory` contract, ids, ranges, tails, system messages, idempotency keys, forks, bad input),
 * each on a fresh store from `make`.
 *
 * @example
 * ```ts
 * import { describeMessageLogContract } from 'mnemo/testing';
 * import { createInMemoryStore } from 'mnemo';
 *
 * describeMessageLogContract('in-memory store', async ({ clock }) => {
 *   const store = createInMemoryStore({ clock });
 *   return { log: store, close: () => store.close() };
 * });
 * ```
 */
export function describeMessageLogContract(name: string, make: MakeStore<MessageLog>): void {
  describeChatMemoryContract(name, make);

  describe(`${name}: MessageLog contract`, () => {
    it('appends records numbered 1, 2, 3 with ts from the clock and meta', async () => {
      await withStore(make, async (log, clock) => {
        const first = await log.append('c', [{ message: user('a'), meta: { source: 'test', n: [1] } }, { message: assistant('b') }]);
        const second = await log.append('c', [{ message: user('c') }]);
        expect(first.map((r) => r.message_id)).toEqual([1, 2]);
        expect(second.map((r) => r.message_id)).toEqual([3]);
        expect(first[0]).toMatchObject({ meta: { source: 'test', n: [1] }, message: user('a') });
        expect(first[1]!.meta).toEqual({});
        for (const r of [...first, ...second]) {
          expect(r.ts).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d$/);
          expect(clock.readings.map(isoWithOffset)).toContain(r.ts);
        }
      });
    });

    it('gives concurrent appends to one conversation contiguous ids, no gap, no duplicate', async () => {
      await withStore(make, async (log) => {
        const batches = await Promise.all(
          Array.from({ length: 40 }, (_, i) => log.append('c', Array.from({ length: (i % 3) + 1 }, (_, k) => ({ message: user(`${i}.${k}`) })))),
        );
        const ids = batches.flat().map((r) => r.message_id).sort((x, y) => x - y);
        expect(ids).toEqual(Array.from({ length: ids.length }, (_, i) => i + 1));
        for (const batch of batches) {
          const own = batch.map((r) => r.message_id);
          expect(own).toEqual(own.map((_, k) => own[0]! + k));
        }
        expect(await log.lastId('c')).toBe(ids.length);
      });
    });

    it('restarts numbering at 1 after clear', async () => {
      await withStore(make, async (log) => {
        await log.append('c', [{ message: user('a') }, { message: user('b') }]);
        await log.clear('c');
        expect(await log.lastId('c')).toBe(0);
        const again = await log.append('c', [{ message: user('c') }]);
        expect(again.map((r) => r.message_id)).toEqual([1]);
        expect(await log.get('c')).toEqual([user('c')]);
      });
    });

    it('orders an add after a clear after an add, issued together', async () => {
      await withStore(make, async (log) => {
        const done = Promise.all([log.add('c', [user('old')]), log.clear('c'), log.add('c', [user('new')])]);
        await done;
        expect(await log.get('c')).toEqual([user('new')]);
        expect(await log.lastId('c')).toBe(1);
      });
    });

    it('reads ranges by id: from, to and limit, inclusive and ascending', async () => {
      await withStore(make, async (log) => {
        await log.append('c', Array.from({ length: 10 }, (_, i) => ({ message: user(`${i + 1}`) })));
        await log.append('d', [{ message: user('other') }]);
        const ids = async (q?: Parameters<MessageLog['range']>[1]) => (await log.range('c', q)).map((r) => r.message_id);
        expect(await ids()).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
        expect(await ids({ from: 4, to: 6 })).toEqual([4, 5, 6]);
        expect(await ids({ from: 8 })).toEqual([8, 9, 10]);
        expect(await ids({ to: 2 })).toEqual([1, 2]);
        expect(await ids({ from: 3, limit: 2 })).toEqual([3, 4]);
        expect(await ids({ from: 11 })).toEqual([]);
        expect(await ids({ from: 6, to: 5 })).toEqual([]);
        expect(await ids({ limit: 0 })).toEqual([]);
        expect((await log.range('c', { from: 5, to: 5 }))[0]?.message).toEqual(user('5'));
      });
    });

    it('reads the tail: the last n, ascending', async () => {
      await withStore(make, async (log) => {
        await log.append('c', Array.from({ length: 5 }, (_, i) => ({ message: user(`${i + 1}`) })));
        await log.append('cc', [{ message: user('neighbour') }]);
        expect((await log.tail('c', 2)).map((r) => r.message_id)).toEqual([4, 5]);
        expect((await log.tail('c', 50)).map((r) => r.message_id)).toEqual([1, 2, 3, 4, 5]);
        expect(await log.tail('c', 0)).toEqual([]);
        expect(await log.tail('unknown', 3)).toEqual([]);
      });
    });

    it('reads the system messages alone, ascending with their ids, and forgets them on clear', async () => {
      await withStore(make, async (log) => {
        const system = (content: string): Message => ({ role: 'system', content });
        expect(await log.systemMessages('c')).toEqual([]);
        await log.append('c', [{ message: system('s1'), meta: { k: 1 } }, { message: user('a') }, { message: assistant('b') }]);
        await log.append('cc', [{ message: system('neighbour') }]);
        await log.add('c', [user('c'), system('s2'), user('d')]);
        const systems = await log.systemMessages('c');
        expect(systems.map((r) => [r.message_id, r.message])).toEqual([[1, system('s1')], [5, system('s2')]]);
        expect(systems[0]!.meta).toEqual({ k: 1 });
        expect(systems).toEqual((await log.range('c')).filter((r) => r.message.role === 'system'));
        await log.add('d', [user('no system here')]);
        expect(await log.systemMessages('d')).toEqual([]);
        await log.clear('c');
        expect(await log.systemMessages('c')).toEqual([]);
        await log.add('c', [user('again')]);
        expect(await log.systemMessages('c')).toEqual([]);
        expect((await log.systemMessages('cc')).map((r) => r.message)).toEqual([system('neighbour')]);
        const error = await log.systemMessages('').catch((e: unknown) => e);
        expect(error).toBeInstanceOf(InvalidInputError);
        expect((error as InvalidInputError).code).toBe('invalid_id');
      });
    });

    it('reports the last id, 0 when unknown', async () => {
      await withStore(make, async (log) => {
        expect(await log.lastId('c')).toBe(0);
        await log.add('c', [user('a'), user('b'), user('c')]);
        expect(await log.lastId('c')).toBe(3);
      });
    });

    it('stores a keyed append once: a retry with the same key returns the stored records and stores nothing', async () => {
      await withStore(make, async (log) => {
        await log.append('c', [{ message: user('before') }]);
        const first = await log.append('c', [{ message: user('a') }, { message: user('b') }], { idempotencyKey: 'k1' });
        await log.append('c', [{ message: user('between') }]);
        const retry = await log.append('c', [{ message: user('a') }, { message: user('b') }], { idempotencyKey: 'k1' });
        expect(retry).toEqual(first);
        expect(first.map((r) => r.message_id)).toEqual([2, 3]);
        await log.add('c', [user('a')], { idempotencyKey: 'k1' });
        expect(await log.get('c')).toEqual([user('before'), user('a'), user('b'), user('between')]);
        const other = await log.append('d', [{ message: user('a') }], { idempotencyKey: 'k1' });
        expect(other.map((r) => r.message_id)).toEqual([1]);
      });
    });

    it('collapses concurrent appends with one key into one stored batch', async () => {
      await withStore(make, async (log) => {
        const results = await Promise.all(
          Array.from({ length: 6 }, (_, i) => log.append('c', [{ message: user(`try ${i}`) }], { idempotencyKey: 'same' })),
        );
        for (const r of results) expect(r).toEqual(results[0]);
        expect(await log.lastId('c')).toBe(1);
        await Promise.all([log.add('c', [user('x')], { idempotencyKey: 'x' }), log.add('c', [user('y')]), log.add('c', [user('x')], { idempotencyKey: 'x' })]);
        expect(await log.get('c')).toEqual([user('try 0'), user('x'), user('y')]);
      });
    });

    it('forgets a conversation\'s keys on clear', async () => {
      await withStore(make, async (log) => {
        await log.add('c', [user('a')], { idempotencyKey: 'k' });
        await log.clear('c');
        await log.add('c', [user('b')], { idempotencyKey: 'k' });
        expect(await log.get('c')).toEqual([user('b')]);
      });
    });

    it('keeps keys per conversation: a fork does not answer with its source\'s keys', async () => {
      await withStore(make, async (log) => {
        const [first] = await log.append('c', [{ message: user('a') }], { idempotencyKey: 'k' });
        await log.fork('c', first!.message_id, 'f');
        const [onFork] = await log.append('f', [{ message: user('a on f') }], { idempotencyKey: 'k' });
        expect(onFork!.message_id).toBe(2);
        const retry = await log.append('f', [{ message: user('again') }], { idempotencyKey: 'k' });
        expect(retry).toEqual([onFork]);
        expect(await log.get('f')).toEqual([user('a'), user('a on f')]);
        expect(await log.get('c')).toEqual([user('a')]);
      });
    });

    it('rejects a bad idempotency key with invalid_option and stores nothing', async () => {
      await withStore(make, async (log) => {
        const bad: unknown[] = ['', 'x'.repeat(201), 7, 'a\u0000b', '\uD800'];
        for (const key of bad) {
          const error = await log.append('c', [{ message: user('x') }], { idempotencyKey: key as string }).catch((e: unknown) => e);
          expect(error).toBeInstanceOf(InvalidInputError);
          expect((error as InvalidInputError).code).toBe('invalid_option');
        }
        expect(await log.lastId('c')).toBe(0);
      });
    });

    it('forks at a message: the fork sees the prefix, then its own records numbered on; the source is untouched', async () => {
      await withStore(make, async (log) => {
        await log.add('src', [user('1'), assistant('2'), user('3'), assistant('4')]);
        await log.fork('src', 2, 'f');
        expect(await log.lastId('f')).toBe(2);
        expect(await log.get('f')).toEqual([user('1'), assistant('2')]);
        const own = await log.append('f', [{ message: user('f3') }, { message: assistant('f4') }, { message: user('f5') }]);
        expect(own.map((r) => r.message_id)).toEqual([3, 4, 5]);
        await log.add('src', [user('5')]);
        expect(await log.get('src')).toEqual([user('1'), assistant('2'), user('3'), assistant('4'), user('5')]);
        expect(await log.get('f')).toEqual([user('1'), assistant('2'), user('f3'), assistant('f4'), user('f5')]);
        const ids = async (q: Parameters<MessageLog['range']>[1]) => (await log.range('f', q)).map((r) => r.message.content);
        expect(await ids({ from: 2, to: 3 })).toEqual(['2', 'f3']);
        expect(await ids({ from: 1, limit: 3 })).toEqual(['1', '2', 'f3']);
        expect(await ids({ from: 4 })).toEqual(['f4', 'f5']);
        expect((await log.tail('f', 4)).map((r) => r.message_id)).toEqual([2, 3, 4, 5]);
        expect((await log.tail('f', 2)).map((r) => r.message.content)).toEqual(['f4', 'f5']);
        expect(await log.lastId('f')).toBe(5);
      });
    });

    it('forks a fork (a chain) and reads through every link', async () => {
      await withStore(make, async (log) => {
        await log.add('a', [user('a1'), user('a2'), user('a3')]);
        await log.fork('a', 2, 'b');
        await log.add('b', [user('b3'), user('b4')]);
        await log.fork('b', 3, 'c');
        await log.add('c', [user('c4')]);
        expect(await log.get('c')).toEqual([user('a1'), user('a2'), user('b3'), user('c4')]);
        expect((await log.tail('c', 3)).map((r) => r.message_id)).toEqual([2, 3, 4]);
        expect((await log.range('c', { from: 2, to: 3 })).map((r) => r.message.content)).toEqual(['a2', 'b3']);
      });
    });

    it('keeps a fork whole when its source is cleared (its prefix becomes its own), and numbers the cleared source from 1', async () => {
      await withStore(make, async (log) => {
        await log.add('a', [user('a1'), user('a2'), user('a3')]);
        await log.fork('a', 2, 'b');
        await log.add('b', [user('b3')]);
        await log.fork('b', 3, 'c');
        await log.clear('a');
        expect(await log.get('a')).toEqual([]);
        expect(await log.get('b')).toEqual([user('a1'), user('a2'), user('b3')]);
        expect(await log.get('c')).toEqual([user('a1'), user('a2'), user('b3')]);
        await log.clear('b');
        expect(await log.get('c')).toEqual([user('a1'), user('a2'), user('b3')]);
        await log.add('c', [user('c4')]);
        expect((await log.tail('c', 2)).map((r) => r.message_id)).toEqual([3, 4]);
        await log.add('a', [user('new')]);
        expect((await log.range('a')).map((r) => r.message_id)).toEqual([1]);
        await log.clear('c');
        expect(await log.lastId('c')).toBe(0);
      });
    });

    it("reads a fork's system messages through its source: the prefix's, then its own, and keeps them when the source is cleared", async () => {
      await withStore(make, async (log) => {
        const system = (content: string): Message => ({ role: 'system', content });
        await log.add('a', [system('a1'), user('a2'), system('a3'), system('a4')]);
        await log.fork('a', 3, 'b');
        await log.add('b', [user('b4'), system('b5')]);
        await log.add('a', [system('a5')]);
        const seen = async (c: string) => (await log.systemMessages(c)).map((r) => [r.message_id, r.message.content]);
        expect(await seen('b')).toEqual([[1, 'a1'], [3, 'a3'], [5, 'b5']]);
        await log.fork('b', 4, 'c');
        expect(await seen('c')).toEqual([[1, 'a1'], [3, 'a3']]);
        await log.clear('a');
        expect(await seen('b')).toEqual([[1, 'a1'], [3, 'a3'], [5, 'b5']]);
        expect(await seen('c')).toEqual([[1, 'a1'], [3, 'a3']]);
        expect(await seen('a')).toEqual([]);
      });
    });

    it('refuses a fork onto a conversation with messages, or at a missing id, with a ForkError', async () => {
      await withStore(make, async (log) => {
        await log.add('a', [user('a1'), user('a2')]);
        await log.add('taken', [user('t')]);
        const codes = await Promise.all([
          log.fork('a', 1, 'taken').catch((e: { code: string }) => e.code),
          log.fork('a', 3, 'new').catch((e: { code: string }) => e.code),
          log.fork('missing', 1, 'new2').catch((e: { code: string }) => e.code),
          log.fork('a', 0, 'new3').catch((e: { code: string }) => e.code),
          log.fork('a', 1, 'a').catch((e: { code: string }) => e.code),
        ]);
        expect(codes).toEqual(['fork_target_exists', 'fork_point_missing', 'fork_point_missing', 'invalid_option', 'invalid_option']);
        expect(await log.get('taken')).toEqual([user('t')]);
        expect(await log.lastId('new')).toBe(0);
        await log.fork('a', 1, 'f');
        const again = await log.fork('a', 1, 'f').catch((e: { code: string }) => e.code);
        expect(again).toBe('fork_target_exists');
      });
    });

    it('rejects a bad range, tail count or entry with InvalidInputError', async () => {
      await withStore(make, async (log) => {
        const codes = await Promise.all([
          log.range('c', { from: -1 }).catch((e: InvalidInputError) => e.code),
          log.range('c', { limit: 1.5 }).catch((e: InvalidInputError) => e.code),
          log.tail('c', -2).catch((e: InvalidInputError) => e.code),
          log.append('c', [{ nope: true } as never]).catch((e: InvalidInputError) => e.code),
          log.append('c', [{ message: user('x'), meta: 'not an object' as never }]).catch((e: InvalidInputError) => e.code),
        ]);
        expect(codes).toEqual(['invalid_option', 'invalid_option', 'invalid_option', 'invalid_batch', 'invalid_message']);
        expect(await log.lastId('c')).toBe(0);
      });
    });
  });
}
