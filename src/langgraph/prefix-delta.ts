/**
 * Prefix deltas over bytes: a value stored as "the first `keep` bytes of another value, then
 * `tail`". An append-only channel (a message list) serializes to `[m1,...,mk]`, and its next
 * version to `[m1,...,mk,m(k+1)]`: all but the closing bracket is shared, so the delta is the
 * new message. Byte-level, so it needs nothing from the serializer but determinism, and a
 * reconstruction is exactly the bytes that were serialized.
 */
export interface PrefixDelta {
  /** Bytes kept from the value below. */
  readonly keep: number;
  /** Bytes that follow them. */
  readonly tail: Uint8Array;
}

/** Length of the longest common prefix of `a` and `b`. */
export function commonPrefixLength(a: Uint8Array, b: Uint8Array): number {
  const max = Math.min(a.length, b.length);
  const x = Buffer.from(a.buffer, a.byteOffset, a.byteLength);
  const y = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  // The common case, an append: all of `a` but its last byte is shared. One native compare.
  if (max > 0 && x.compare(y, 0, max - 1, 0, max - 1) === 0) {
    return x[max - 1] === y[max - 1] ? max : max - 1;
  }
  // Otherwise bisect with native compares: O(n log n) bytes, no JS byte loop over large values.
  let lo = 0;
  let hi = max - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (x.compare(y, 0, mid, 0, mid) === 0) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/**
 * Rebuild a value from the full value at the bottom of its chain and the deltas above it,
 * oldest first. Walks the chain newest first, collecting only the byte ranges that survive into
 * the result, then copies once: O(chain length + result size), whatever the chain's depth.
 */
export function applyDeltas(base: Uint8Array, deltas: readonly PrefixDelta[]): Buffer {
  const pieces: Uint8Array[] = [];
  let limit = Infinity;
  for (let i = deltas.length - 1; i >= 0; i--) {
    const { keep, tail } = deltas[i]!;
    if (limit > keep) {
      pieces.push(tail.subarray(0, Math.min(tail.length, limit - keep)));
      limit = keep;
    }
  }
  pieces.push(base.subarray(0, Math.min(base.length, limit)));
  return Buffer.concat(pieces.reverse());
}
