import { StorageError } from '../memory/contract/memory-errors.ts';
import { applyDeltas, commonPrefixLength, type PrefixDelta } from './prefix-delta.ts';

/**
 * How one channel value is stored: whole, or as a prefix delta on the value of the same
 * channel in the parent checkpoint (see prefix-delta.ts), or as "empty" (the channel has a new
 * version but no value). Each row of a delta chain carries where it stands in the chain, so the
 * next put decides without reading the chain.
 *
 * When a delta is worth it, and when to store the value whole again instead:
 * - the value shares at least `MIN_SHARED_BYTES` and at least half of its bytes with the parent
 *   value (otherwise the delta saves little);
 * - the chain stays below `MAX_CHAIN_DEPTH` rows, so a read does at most that many lookups;
 * - the tails since the last whole value add up to no more than that whole value. A growing
 *   list is thus stored whole about every time it doubles: the whole copies sum to at most
 *   twice the final size, and a read never copies more than twice the value's size.
 */
export const MIN_SHARED_BYTES = 64;
export const MAX_CHAIN_DEPTH = 512;

export type BlobRow =
  | { readonly t: string; readonly b: Uint8Array }
  | {
      readonly t: string;
      /** The version this delta applies to. */
      readonly base: string | number;
      readonly keep: number;
      readonly tail: Uint8Array;
      /** Rows from here down to the whole value (1 for a delta on a whole value). */
      readonly d: number;
      /** Sum of the tails from here down to the whole value. */
      readonly cb: number;
      /** Size of the whole value at the bottom of the chain. */
      readonly rl: number;
    }
  | { readonly e: 1 };

/** A channel value as serialized, with its place in a chain. */
export interface StoredValue {
  readonly type: string;
  readonly bytes: Uint8Array;
  readonly depth: number;
  readonly chainBytes: number;
  readonly rootLength: number;
}

export function isEmptyRow(row: BlobRow): row is { readonly e: 1 } {
  return 'e' in row;
}

export function isWholeRow(row: BlobRow): row is { readonly t: string; readonly b: Uint8Array } {
  return 'b' in row;
}

/** The row to store for `value`, given the parent checkpoint's value of the channel (if any). */
export function encodeBlob(
  value: { readonly type: string; readonly bytes: Uint8Array },
  base: ({ readonly version: string | number } & StoredValue) | undefined,
): { row: BlobRow; stored: StoredValue } {
  const whole = {
    row: { t: value.type, b: value.bytes },
    stored: { type: value.type, bytes: value.bytes, depth: 0, chainBytes: 0, rootLength: value.bytes.length },
  };
  if (base === undefined || base.type !== value.type || base.depth + 1 > MAX_CHAIN_DEPTH) return whole;
  const keep = commonPrefixLength(base.bytes, value.bytes);
  const tailLength = value.bytes.length - keep;
  if (keep < MIN_SHARED_BYTES || keep * 2 < value.bytes.length) return whole;
  if (base.chainBytes + tailLength > base.rootLength) return whole;
  const stored: StoredValue = {
    type: value.type,
    bytes: value.bytes,
    depth: base.depth + 1,
    chainBytes: base.chainBytes + tailLength,
    rootLength: base.rootLength,
  };
  return {
    row: { t: value.type, base: base.version, keep, tail: value.bytes.subarray(keep), d: stored.depth, cb: stored.chainBytes, rl: stored.rootLength },
    stored,
  };
}

/**
 * The value a stored row stands for: itself when whole, else its delta chain applied on the
 * whole value at the chain's bottom (`below(version)`: the row stored under a delta's base).
 * A chain without its bottom is damage: `StorageError` `storage_failed`.
 */
export function rebuildValue(
  top: BlobRow,
  below: (version: string | number) => BlobRow | undefined,
  where: { readonly threadId: string; readonly checkpointNs: string; readonly channel: string },
): StoredValue | 'empty' {
  if (isEmptyRow(top)) return 'empty';
  if (isWholeRow(top)) return { type: top.t, bytes: top.b, depth: 0, chainBytes: 0, rootLength: top.b.length };
  const deltas: PrefixDelta[] = [];
  let row: BlobRow | undefined = top;
  let at: string | number = top.base;
  while (row !== undefined && !isEmptyRow(row) && !isWholeRow(row)) {
    deltas.push({ keep: row.keep, tail: row.tail });
    at = row.base;
    row = below(at);
  }
  if (row === undefined || isEmptyRow(row)) {
    throw new StorageError('storage_failed', `channel ${where.channel} of thread ${where.threadId}: version ${String(at)} under a delta is missing`, { ...where, version: at });
  }
  return { type: top.t, bytes: applyDeltas(row.b, deltas.reverse()), depth: top.d, chainBytes: top.cb, rootLength: top.rl };
}
