import { MnemoError } from '../../errors.ts';
import type { StoredMessage } from '../../message.ts';

/**
 * Forks: `fork(sourceId, at, newId)` makes `newId` a conversation that sees the source's
 * records `1..at`, then its own, numbered on from `at + 1`. Only a fork record
 * `{source, at}` is written: the prefix is shared, not copied, so a fork costs the same at
 * 10 and at 100,000 messages, and the source is untouched (its later messages are not seen
 * by the fork). A fork of a fork chains: its prefix is read through every link.
 *
 * Reads of a fork stitch its segments: the source's visible ids `[1..at]` (itself stitched if
 * the source is a fork) and the fork's own rows `[at+1..]`. Each segment is a range scan, so
 * `range`/`tail` still cost what they return (times the chain's length).
 *
 * CLEAR of a conversation that forks reference: before its rows go, each referencing fork's
 * prefix is copied into that fork's own rows (in the same atomic step), and its fork record
 * is dropped; the fork reads exactly as before and no longer depends on the source. So clear
 * costs the prefixes it materializes; everything else stays O(1). Clearing a fork drops its
 * fork record: it becomes an empty conversation numbered from 1.
 */
export interface ForkLink {
  source: string;
  at: number;
}

/**
 * - `fork_target_exists`: the new conversation already has messages or is a fork.
 * - `fork_point_missing`: `at` is not an id the source has (it must be 1..its last id).
 */
export type ForkErrorCode = 'fork_target_exists' | 'fork_point_missing';

/** A fork the store refused (see `ForkErrorCode`). Nothing was written. */
export class ForkError extends MnemoError {
  constructor(
    /** Why it was refused. */
    readonly code: ForkErrorCode,
    message: string,
    /** The conversations and id involved. */
    readonly details: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
  }
}

/** A stretch of ids that lives in one conversation's own rows. */
export interface Segment {
  conversationId: string;
  from: number;
  to: number;
}

/** Longest chain followed (a guard against a corrupted cycle; forks cannot make one). */
export const MAX_FORK_DEPTH = 10_000;

/** The segments `conversationId` reads from, newest first (its own rows, then its source's, ...). */
export function segmentsOf(conversationId: string, linkOf: (c: string) => ForkLink | undefined): Segment[] {
  const out: Segment[] = [];
  let c = conversationId;
  let to = Number.MAX_SAFE_INTEGER;
  for (let depth = 0; depth < MAX_FORK_DEPTH; depth++) {
    const link = linkOf(c);
    out.push({ conversationId: c, from: (link?.at ?? 0) + 1, to });
    if (link === undefined) return out;
    to = link.at;
    c = link.source;
  }
  throw new Error(`fork chain of ${conversationId} is longer than ${MAX_FORK_DEPTH}`);
}

/** Reads one conversation's own rows in `[from, to]`, at most `limit`, ascending or descending. */
export type OwnRows = (conversationId: string, from: number, to: number, limit: number, reverse: boolean) => StoredMessage[];

/** Ids `[from, to]`, ascending, at most `limit`, across segments (newest first). */
export function stitchedRange(segments: readonly Segment[], from: number, to: number, limit: number, own: OwnRows): StoredMessage[] {
  const out: StoredMessage[] = [];
  for (let i = segments.length - 1; i >= 0 && out.length < limit; i--) {
    const s = segments[i]!;
    const lo = Math.max(from, s.from);
    const hi = Math.min(to, s.to);
    if (lo > hi) continue;
    for (const r of own(s.conversationId, lo, hi, limit - out.length, false)) out.push(r);
  }
  return out;
}

/** The last `n`, ascending, across segments (newest first). */
export function stitchedTail(segments: readonly Segment[], n: number, own: OwnRows): StoredMessage[] {
  const out: StoredMessage[] = [];
  for (let i = 0; i < segments.length && out.length < n; i++) {
    const s = segments[i]!;
    for (const r of own(s.conversationId, s.from, s.to, n - out.length, true)) out.push(r);
  }
  return out.reverse();
}
