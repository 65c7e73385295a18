import { describe, expect, it } from 'vitest';
import { applyDeltas, commonPrefixLength, type PrefixDelta } from '../../src/langgraph/prefix-delta.ts';

/** Deterministic PRNG (mulberry32), so a failure can be replayed. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const bytes = (s: string) => Buffer.from(s);

describe('prefix deltas', () => {
  it('finds the common prefix of an append (all but the closing bracket)', () => {
    expect(commonPrefixLength(bytes('[1,2]'), bytes('[1,2,3]'))).toBe(4);
  });

  it('finds the common prefix when one value is a prefix of the other, or they are equal', () => {
    expect(commonPrefixLength(bytes('abc'), bytes('abcdef'))).toBe(3);
    expect(commonPrefixLength(bytes('abcdef'), bytes('abc'))).toBe(3);
    expect(commonPrefixLength(bytes('abc'), bytes('abc'))).toBe(3);
    expect(commonPrefixLength(bytes(''), bytes('abc'))).toBe(0);
  });

  it('finds the common prefix of values that differ anywhere', () => {
    const next = rng(7);
    for (let n = 0; n < 200; n++) {
      const a = Buffer.from(Array.from({ length: 1 + Math.floor(next() * 300) }, () => Math.floor(next() * 3)));
      const b = Buffer.from(a);
      const at = Math.floor(next() * a.length);
      b[at] = (b[at]! + 1) % 3;
      expect(commonPrefixLength(a, b)).toBe(at);
    }
  });

  it('rebuilds every version of a chain of random edits exactly', () => {
    const next = rng(42);
    const base = Buffer.from('[' + 'x'.repeat(100));
    let current: Buffer = base;
    const deltas: PrefixDelta[] = [];
    for (let n = 0; n < 300; n++) {
      const keep = Math.floor(next() * (current.length + 1));
      const tail = Buffer.from(Array.from({ length: Math.floor(next() * 40) }, () => 97 + Math.floor(next() * 26)));
      current = Buffer.concat([current.subarray(0, keep), tail]);
      deltas.push({ keep, tail });
      expect(applyDeltas(base, deltas).equals(current)).toBe(true);
    }
  });

  it('rebuilds the base itself from an empty chain', () => {
    expect(applyDeltas(bytes('[1,2]'), []).toString()).toBe('[1,2]');
  });
});
