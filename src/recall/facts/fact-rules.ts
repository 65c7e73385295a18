import { factSeq, type FactEntry, type FactSource, type FactVerdict, type FactWrite } from '../records/fact-entry.ts';
import { FactConflictError, FactNotFoundError } from './fact-errors.ts';
import { isNearDuplicate, shapeOf, type FactShape } from './fact-text.ts';
import type { CachedFact, FactsWork } from './facts-view.ts';

/**
 * The rules every facts write follows, on a `FactsWork` (facts-view.ts), the same on every
 * storage engine (the store applies what they decide, guarded by the view's generation):
 *
 * - a fact whose key has a current entry supersedes it (same normalized text: a duplicate);
 * - a fact equal to a current one after normalization, or with token-set Jaccard >= 0.8, is a
 *   duplicate: nothing is stored, the existing entry is answered (except a keyed fact that a
 *   keyless entry already says: that entry is superseded by the keyed one, so the key's next
 *   change replaces it);
 * - a judge's verdict (fact-judge.ts, decided before) of `update` or `contradiction`
 *   supersedes its target while that target is still current: the new fact stays, the old one
 *   ends; `duplicate` stores nothing;
 * - an update is compare-and-set on `version`: an entry at another version, or ended since
 *   (`resolved`, read by the caller: its current successor), is refused with
 *   `FactConflictError`, an id with no entry with `FactNotFoundError`. Refusals are thrown
 *   before anything is changed.
 */
export interface NewFact {
  text: string;
  key?: string;
  tags?: string[];
  source: FactSource;
  /** The judge's verdict, when one was asked. */
  verdict?: FactVerdict;
}

/** What the caller read of the entry an update or a forget names (facts-service.ts `resolveTarget`). */
export interface ResolvedTarget {
  /** The entry with that id, current or not; undefined when there is none. */
  stored: FactEntry | undefined;
  /** Its current successor (itself when current). */
  current: FactEntry | undefined;
}

/** The best current near-duplicate of `shape` (equal normal form first), skipping `except`. */
export function nearDuplicateOf(
  current: ReadonlyMap<number, CachedFact>,
  shape: FactShape,
  except?: number | ((seq: number) => boolean),
): CachedFact | undefined {
  const skip = typeof except === 'function' ? except : (seq: number) => seq === except;
  let near: CachedFact | undefined;
  for (const [seq, c] of current) {
    if (skip(seq)) continue;
    if (c.shape.normal === shape.normal) return c;
    if (near === undefined && isNearDuplicate(c.shape, shape)) near = c;
  }
  return near;
}

/** The current entry that holds `key`, if any. */
export function currentWithKey(current: ReadonlyMap<number, CachedFact>, key: string): CachedFact | undefined {
  for (const c of current.values()) if (c.entry.key === key) return c;
  return undefined;
}

export function addFact(work: FactsWork, fact: NewFact): FactWrite {
  const current = work.current;
  const shape = shapeOf(fact.text);
  if (fact.key !== undefined) {
    const old = currentWithKey(current, fact.key);
    if (old) {
      if (old.shape.normal === shape.normal) return { status: 'duplicate', entry: old.entry, ended: [] };
      // Another current entry saying the new text is merged into the new entry too.
      const twin = nearDuplicateOf(current, shape, factSeq(old.entry.id));
      return writeEntry(work, fact, old, twin ? [twin] : [], { verdict: 'update', target: old.entry.id, by: 'key' });
    }
  }
  const dup = nearDuplicateOf(current, shape);
  if (dup && fact.key !== undefined && dup.entry.key === undefined) {
    // A keyless entry already says it: it becomes the key's entry, so the key's next change replaces it.
    return writeEntry(work, fact, dup, [], { verdict: 'duplicate', target: dup.entry.id, by: 'rules' });
  }
  if (dup) return { status: 'duplicate', entry: dup.entry, ended: [] };
  const judged = fact.verdict;
  if (judged?.target !== undefined && judged.verdict !== 'new') {
    const seq = factSeq(judged.target);
    const target = seq === undefined ? undefined : current.get(work.successorOf(seq) ?? -1);
    if (target && judged.verdict === 'duplicate') return { status: 'duplicate', entry: target.entry, ended: [] };
    if (target) return writeEntry(work, fact, target, [], { ...judged, target: target.entry.id });
  }
  return writeEntry(work, fact, undefined, [], judged);
}

/** Compare-and-set on `expectedVersion`. */
export function updateFact(work: FactsWork, id: string, target: ResolvedTarget, text: string, expectedVersion: number, source: FactSource): FactWrite {
  const hit = currentOrThrow(work, id, target, expectedVersion);
  if (text === hit.entry.text) return { status: 'unchanged', entry: hit.entry, ended: [] };
  const seq = factSeq(id)!;
  const twin = nearDuplicateOf(work.current, shapeOf(text), seq);
  if (twin && twin.shape.normal !== hit.shape.normal) {
    // The change makes it another current fact: merge into that one.
    const ended = endEntry(work, hit, twin.entry.id);
    return { status: 'duplicate', entry: twin.entry, ended: [ended] };
  }
  const { key, tags } = hit.entry;
  return writeEntry(work, { text, ...(key === undefined ? {} : { key }), tags, source }, hit, [], undefined);
}

/** Ends the entry's validity (no successor); `expectedVersion` as in `updateFact` when given. */
export function forgetFact(work: FactsWork, id: string, target: ResolvedTarget, expectedVersion: number | undefined): FactEntry {
  return endEntry(work, currentOrThrow(work, id, target, expectedVersion), undefined);
}

function currentOrThrow(work: FactsWork, id: string, target: ResolvedTarget, expectedVersion: number | undefined): CachedFact {
  const seq = factSeq(id);
  if (seq === undefined || target.stored === undefined) throw new FactNotFoundError(id);
  const hit = work.current.get(seq);
  if (hit === undefined) {
    const successor = target.current === undefined ? undefined : work.current.get(factSeq(target.current.id)!);
    if (successor === undefined || target.stored.supersededBy === undefined) throw new FactNotFoundError(id);
    throw new FactConflictError(id, expectedVersion ?? target.stored.version, { version: successor.entry.version, current: successor.entry.id });
  }
  if (expectedVersion !== undefined && hit.entry.version !== expectedVersion) {
    throw new FactConflictError(id, expectedVersion, { version: hit.entry.version, current: id });
  }
  return hit;
}

/** Writes a new entry, superseding `replaces` (a change: version + 1) and ending `merged`. */
export function writeEntry(work: FactsWork, fact: NewFact, replaces: CachedFact | undefined, merged: CachedFact[], verdict: FactVerdict | undefined): FactWrite {
  const id = work.takeId();
  const key = fact.key ?? replaces?.entry.key;
  const ended = [replaces, ...merged].filter((c): c is CachedFact => c !== undefined).map((c) => endEntry(work, c, id));
  const entry: FactEntry = {
    id,
    userId: work.userId,
    text: fact.text,
    ...(key === undefined ? {} : { key }),
    tags: fact.tags ?? replaces?.entry.tags ?? [],
    source: fact.source,
    createdAt: work.now,
    validFrom: work.now,
    version: replaces ? replaces.entry.version + 1 : 1,
    ...(replaces ? { supersedes: replaces.entry.id } : {}),
    ...(verdict === undefined ? {} : { verdict }),
  };
  work.put(entry);
  return { status: replaces ? 'superseded' : 'added', entry, ended };
}

/** Ends an entry's validity, pointing it at `successor` when there is one. */
export function endEntry(work: FactsWork, hit: CachedFact, successor: string | undefined): FactEntry {
  const ended: FactEntry = { ...hit.entry, validTo: work.now, ...(successor === undefined ? {} : { supersededBy: successor }) };
  work.put(ended);
  return ended;
}

/** The current entries, in creation order. */
export function currentFacts(current: ReadonlyMap<number, CachedFact>): FactEntry[] {
  return [...current.values()].map((c) => c.entry);
}

/** What was believed at instant `at` (ISO): of `history`, the entries valid then. */
export function factsAsOf(history: readonly FactEntry[], at: string): FactEntry[] {
  return history.filter((e) => e.validFrom <= at && (e.validTo === undefined || e.validTo > at));
}
