import { Tiktoken } from 'js-tiktoken/lite';
import o200k from 'js-tiktoken/ranks/o200k_base';
import { describe, expect, it } from 'vitest';
import { memoized, o200kTokenCounter } from '../../src/provider/token-counter.ts';

// The default counter is js-tiktoken's o200k count, framing added (3 per message plus the role),
// except that a run of non-space characters longer than 64 is encoded in 64-character slices:
// js-tiktoken's merge is quadratic in a piece's length.

const exact = new Tiktoken(o200k);
const tokens = (text: string) => exact.encode(text, [], []).length;
const framing = (role: string) => 3 + tokens(role);

describe('o200kTokenCounter', () => {
  it('counts ordinary text exactly as the o200k tokenizer does, plus the framing', async () => {
    const count = await o200kTokenCounter();
    const text = 'Remember that my sister Ana lives in Lisbon; she moved there in 2019. '.repeat(40);
    expect(count({ role: 'user', content: text })).toBe(framing('user') + tokens(text));
  });

  it('counts a long run without spaces in slices, within one token per slice of the exact count', async () => {
    const count = await o200kTokenCounter();
    const run = 'Zm9vYmFyYmF6cXV4'.repeat(64); // 1,024 characters of base64, no space
    const text = `see ${run} above`;
    const counted = count({ role: 'user', content: text }) - framing('user');
    const slices = Math.ceil(run.length / 64);
    expect(Math.abs(counted - tokens(text))).toBeLessThanOrEqual(slices);
    expect(counted).toBeGreaterThan(run.length / 16);
  });

  it('counts a 200 KB run of one character (quadratic in one piece) in slices', async () => {
    const count = await o200kTokenCounter();
    const counted = count({ role: 'user', content: 'k'.repeat(200_000) }) - framing('user');
    // 3,125 slices of 64: the sum of the slices' exact counts.
    expect(counted).toBe((200_000 / 64) * tokens('k'.repeat(64)));
  });
});

describe('the counter’s memo of texts (a summary check re-counts its session’s rows every turn)', () => {
  const counting = () => {
    const seen: string[] = [];
    return { seen, count: memoized((text: string) => (seen.push(text), text.length)) };
  };

  it('counts a text once, and gives the same count after', () => {
    const { seen, count } = counting();
    expect([count('a row'), count('a row'), count('another row'), count('a row')]).toEqual([5, 5, 11, 5]);
    expect(seen).toEqual(['a row', 'another row']);
  });

  it('counts a text longer than 16,384 characters every time (it is not kept)', () => {
    const { seen, count } = counting();
    const long = 'x'.repeat(16_385);
    count(long);
    count(long);
    expect(seen).toHaveLength(2);
  });

  it('forgets everything once 4,000,000 characters are kept, then keeps counting right', () => {
    const { seen, count } = counting();
    const text = (i: number) => `${i}`.padStart(16_000, '.');
    for (let i = 0; i < 250; i++) count(text(i)); // 4,000,000 characters: all kept
    count(text(0));
    expect(seen).toHaveLength(250);
    expect(count(text(250))).toBe(16_000); // over the budget: the memo starts afresh with it
    expect(count(text(0))).toBe(16_000);
    expect(seen).toHaveLength(252);
  });
});
