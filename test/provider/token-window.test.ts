import { describe, expect, it } from 'vitest';
import type { Message } from '../../src/message.ts';
import { InvalidMemoryConfigError, o200kTokenCounter, tokenWindow, tokenWindowProvider } from '../../src/provider/index.ts';
import type { ChatMemory } from '../../src/memory/contract/chat-memory.ts';

const sys = (c: string): Message => ({ role: 'system', content: c });
const user = (c: string): Message => ({ role: 'user', content: c });
const asst = (c: string): Message => ({ role: 'assistant', content: c });
const calls = (...ids: string[]): Message => ({
  role: 'assistant',
  content: null,
  tool_calls: ids.map((id) => ({ id, type: 'function', function: { name: 'f', arguments: '{}' } })),
});
const tool = (id: string): Message => ({ role: 'tool', tool_call_id: id, content: `r${id}` });

/** Every message costs 1 token: budgets below count messages. */
const one = (): number => 1;

/** True when every tool result follows its call and every call has a result after it. */
function wellPaired(ms: readonly Message[]): boolean {
  const open = new Set<string>();
  const called = new Set<string>();
  for (const m of ms) {
    if (m.role === 'assistant') for (const tc of m.tool_calls ?? []) (open.add(tc.id), called.add(tc.id));
    if (m.role === 'tool') {
      if (!called.has(m.tool_call_id)) return false;
      open.delete(m.tool_call_id);
    }
  }
  return open.size === 0;
}

// Three turns: a plain one, one with a two-call tool batch, and the current question.
const history: Message[] = [
  sys('s'),
  user('u1'), asst('a1'),
  user('u2'), calls('c1', 'c2'), tool('c1'), tool('c2'), asst('a2'),
  user('u3'),
];

describe('tokenWindow: whole turns within a token budget', () => {
  it('sends everything that fits', () => {
    expect(tokenWindow(history, 100, one)).toEqual(history);
  });

  it('drops the oldest whole turns first and keeps the system messages', () => {
    // budget 8: system 1 + turn3 (1) + turn2 (5) = 7; turn1 (2) would make 9
    expect(tokenWindow(history, 8, one)).toEqual([
      sys('s'), user('u2'), calls('c1', 'c2'), tool('c1'), tool('c2'), asst('a2'), user('u3'),
    ]);
  });

  it('never cuts inside a turn: a turn that does not fit goes whole', () => {
    // budget 6: system 1 + turn3 (1) = 2; turn2 costs 5 and does not fit whole
    expect(tokenWindow(history, 6, one)).toEqual([sys('s'), user('u3')]);
  });

  it('always sends the newest turn, even over budget', () => {
    const ms = [user('u1'), calls('c1'), tool('c1'), asst('a1')];
    expect(tokenWindow(ms, 1, one)).toEqual(ms);
  });

  it('never sends an orphan tool result or an unanswered tool call, whatever the budget', () => {
    for (let budget = 1; budget <= 12; budget++) {
      expect(wellPaired(tokenWindow(history, budget, one)), `budget ${budget}`).toBe(true);
    }
  });

  it('hoists system messages to the head in their order', () => {
    const ms = [user('u1'), sys('s1'), asst('a1'), sys('s2'), user('u2')];
    expect(tokenWindow(ms, 100, one)).toEqual([sys('s1'), sys('s2'), user('u1'), asst('a1'), user('u2')]);
  });

  it('repairs an already broken history: orphan results dropped, unanswered calls removed', () => {
    const broken: Message[] = [
      tool('x0'),                    // result without a call
      user('u1'), calls('c1', 'c2'), tool('c1'), // c2 never answered
      user('u2'), calls('c3'),       // c3 never answered, the turn has no text
      user('u3'),
    ];
    expect(tokenWindow(broken, 100, one)).toEqual([
      user('u1'),
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      tool('c1'),
      user('u2'),
      user('u3'),
    ]);
  });

  it('counts tokens with the injected counter', () => {
    const byLength = (m: Message): number => (typeof m.content === 'string' ? m.content.length : 0);
    const ms = [user('aaaaaaaaaa'), asst('bbbbbbbbbb'), user('cc')];
    expect(tokenWindow(ms, 12, byLength)).toEqual([user('cc')]);
    expect(tokenWindow(ms, 22, byLength)).toEqual(ms);
  });
});

describe('o200kTokenCounter', () => {
  it('counts with the real o200k_base tokenizer (more text, more tokens; special tokens are plain text)', async () => {
    const count = await o200kTokenCounter();
    const short = count(user('hello'));
    const long = count(user('hello '.repeat(50)));
    expect(short).toBeGreaterThan(1);
    expect(long).toBeGreaterThan(short + 40);
    expect(count(user('<|endoftext|>'))).toBeGreaterThan(1);
    const withCall = count({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c', type: 'function', function: { name: 'search', arguments: '{"q":"x"}' } }],
    });
    expect(withCall).toBeGreaterThan(count({ role: 'assistant', content: '' }));
  });
});

describe('tokenWindowProvider', () => {
  const store: ChatMemory = { get: async () => [], add: async () => {}, clear: async () => {} };

  it('rejects a budget that is not an integer > 0', () => {
    for (const maxTokens of [0, -5, 1.5, Number.NaN]) {
      expect(() => tokenWindowProvider(store, { maxTokens })).toThrow(InvalidMemoryConfigError);
    }
  });

  it('rejects something that is not a store', () => {
    expect(() => tokenWindowProvider(42 as unknown as ChatMemory, { maxTokens: 10 })).toThrow(InvalidMemoryConfigError);
  });

  it('prepares with the default tokenizer when no counter is given', async () => {
    const provider = tokenWindowProvider(store, { maxTokens: 30 });
    const big = 'word '.repeat(200);
    const sent = await provider.prepare('c', [user(big), asst(big), user('short question')]);
    expect(sent).toEqual([user('short question')]);
  });
});
