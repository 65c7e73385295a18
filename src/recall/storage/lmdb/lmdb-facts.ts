import { factSeq, type FactEntry } from '../../records/fact-entry.ts';
import type { FactsChange, FactsState, WriteGuard } from '../recall-store.ts';
import type { LongTermRecord } from '../../records/records.ts';
import { StaleWriteError } from '../stale-write-error.ts';
import { embedFactEnded, embedFactWritten } from './embeddings/embed-hooks.ts';
import type { LmdbContext } from './lmdb-context.ts';
import { incarnationOf, incarnationTx } from './write-guards.ts';
import { longTermHistory, undoLongTerm, writeLongTerm } from './long-term-store.ts';
import { commit, HIGH, type RecallDbs } from './recall-dbs.ts';
import { fromFactEntry, toFactEntry, toLongTermRecord } from './record-codec.ts';

/**
 * Long-term memory and its facts in LMDB (`recall.facts`, `recall.fact-current`,
 * `recall.fact-keys`, `recall.fact-doc`, `recall.long-term`: recall-dbs.ts). The rules of what
 * a write changes are the domain's (facts/fact-rules.ts); this applies the change it computed.
 *
 * The guard of a change is the user's facts generation (`[userId, 'facts-gen']` in
 * `recall.counters`, a random string rewritten by every applied change), read and compared
 * inside the write transaction: LMDB write transactions are serialized, so of two changes
 * computed from one state exactly one applies, the other is told to read again. Applied: an
 * ended entry leaves `fact-current` and frees its key (if it still held it); a current one
 * enters both; entries go ended first, so a key passes from an old entry to its successor.
 */
const GENERATION = 'facts-gen';

export function factsGeneration(dbs: RecallDbs, userId: string): string {
  const g = dbs.counters.get([userId, GENERATION]) as unknown;
  return typeof g === 'string' ? g : '';
}

export function factsState(dbs: RecallDbs, userId: string): FactsState {
  const current: FactEntry[] = [];
  for (const key of dbs.factCurrent.getKeys({ start: [userId], end: [userId, HIGH] })) {
    const stored = dbs.facts.get(key);
    if (stored !== undefined) current.push(toFactEntry(stored));
  }
  const doc = dbs.factDoc.get([userId]);
  const longTerm = newestLongTerm(dbs, userId);
  return {
    generation: factsGeneration(dbs, userId),
    current,
    nextSeq: (dbs.counters.get([userId, 'fact-seq']) ?? 0) + 1,
    ...(doc === undefined ? {} : { doc }),
    ...(longTerm === undefined ? {} : { longTerm }),
  };
}

function newestLongTerm(dbs: RecallDbs, userId: string): LongTermRecord | undefined {
  for (const { key, value } of dbs.longTerm.getRange({ start: [userId, HIGH], end: [userId], reverse: true, limit: 1 })) return toLongTermRecord(key[1], value);
  return undefined;
}

export function factEntries(dbs: RecallDbs, userId: string, seqs: readonly number[]): (FactEntry | undefined)[] {
  return seqs.map((seq) => {
    const stored = dbs.facts.get([userId, seq]);
    return stored === undefined ? undefined : toFactEntry(stored);
  });
}

export function factHistory(dbs: RecallDbs, userId: string): FactEntry[] {
  return [...dbs.facts.getRange({ start: [userId], end: [userId, HIGH] })].map(({ value }) => toFactEntry(value));
}

export function longTermVersions(dbs: RecallDbs, userId: string): LongTermRecord[] {
  const raw = new Map<number, string>();
  for (const { key, value } of dbs.longTerm.getRange({ start: [userId], end: [userId, HIGH] })) if (value.raw !== undefined) raw.set(key[1], value.raw);
  return longTermHistory(dbs, userId).map((v) => ({ ...v, ...(raw.has(v.version) ? { raw: raw.get(v.version)! } : {}) }));
}

type Outcome = 'applied' | 'moved' | 'erased' | 'lease_lost';

export async function commitFacts(ctx: LmdbContext, userId: string, change: FactsChange, guard: WriteGuard & { generation: string }): Promise<boolean> {
  const { dbs } = ctx;
  const outcome = await commit(dbs, (): Outcome => {
    // Refusals are returned, not thrown: a throw inside an lmdb-js transaction body fails
    // every write batched with it.
    if (factsGeneration(dbs, userId) !== guard.generation) return 'moved';
    if (guard.incarnation !== undefined && incarnationOf(dbs, userId) !== guard.incarnation) return 'erased';
    if (guard.job !== undefined && !ctx.queue.heldTx(guard.job)) return 'lease_lost';
    incarnationTx(dbs, userId);
    applyChange(dbs, userId, change);
    (dbs.counters as unknown as { put(k: string[], v: string): void }).put([userId, GENERATION], change.generation);
    return 'applied';
  });
  if (outcome === 'erased' || outcome === 'lease_lost') throw new StaleWriteError(outcome, userId);
  return outcome === 'applied';
}

function applyChange(dbs: RecallDbs, userId: string, change: FactsChange): void {
  const ordered = [...change.entries].sort((a, b) => Number(a.validTo === undefined) - Number(b.validTo === undefined));
  let highest = dbs.counters.get([userId, 'fact-seq']) ?? 0;
  for (const entry of ordered) {
    const seq = factSeq(entry.id)!;
    const known = dbs.facts.get([userId, seq]) !== undefined;
    if (entry.validTo === undefined) {
      // Before the put: a user's first write makes them live for embeddings (embed-hooks.ts).
      if (!known) embedFactWritten(dbs, userId, seq);
      dbs.facts.put([userId, seq], fromFactEntry(entry));
      dbs.factCurrent.put([userId, seq], true);
      if (entry.key !== undefined) dbs.factKeys.put([userId, entry.key], seq);
    } else {
      dbs.facts.put([userId, seq], fromFactEntry(entry));
      dbs.factCurrent.remove([userId, seq]);
      if (entry.key !== undefined && dbs.factKeys.get([userId, entry.key]) === seq) dbs.factKeys.remove([userId, entry.key]);
      embedFactEnded(dbs, userId, seq);
    }
    highest = Math.max(highest, seq);
  }
  dbs.counters.put([userId, 'fact-seq'], highest);
  if (change.doc !== undefined) dbs.factDoc.put([userId], change.doc);
  if (change.longTerm === 'undo') undoLongTerm(dbs, userId);
  else if (change.longTerm !== undefined) {
    const v = change.longTerm;
    writeLongTerm(dbs, userId, v.content, v.source, v.ts, v.raw, true);
  }
}

