import { InvalidInputError } from '../../errors.ts';
import { commit, HIGH, nextCounter, type RecallDbs } from '../storage/lmdb/recall-dbs.ts';
import { factId, factSeq, type FactEntry, type FactSource, type FactVerdict, type FactWrite } from './fact-entry.ts';
import { FactConflictError, FactNotFoundError } from './fact-errors.ts';
import { isNearDuplicate, shapeOf, type FactShape } from './fact-text.ts';
import { embedFactEnded, embedFactWritten } from '../storage/lmdb/embeddings/embed-hooks.ts';
import { UserErasingError } from '../recall-errors.ts';
import type { UserLease } from '../user-gate.ts';

/**
 * The entries of long-term facts in LMDB (dbs `recall.facts`, `recall.fact-current`,
 * `recall.fact-keys`: recall-dbs.ts), and the rules every write follows:
 *
 * - a fact whose key has a current entry supersedes it (same normalized text: a duplicate);
 * - a fact equal to a current one after normalization, or with token-set Jaccard >= 0.8, is a
 *   duplicate: nothing is stored, the existing entry is answered (except a keyed fact that a
 *   keyless entry already says: that entry is superseded by the keyed one, so the key's next
 *   change replaces it);
 * - a judge's verdict (fact-judge.ts, decided before the transaction) of `update` or
 *   `contradiction` supersedes its target (followed to its current successor): the new fact
 *   stays, the old one ends; `duplicate` stores nothing;
 * - an update is compare-and-set on `version`, read and checked inside the write transaction.
 *   LMDB write transactions are serialized (lmdb-js runs `transaction()` callbacks one at a
 *   time per environment), so of concurrent updates from one version exactly one wins; the
 *   others get `FactConflictError`.
 *
 * The `*Tx` functions run inside a write transaction (`factCommit`). Duplicate checks read a
 * per-user cache of the current entries with their token shapes (loaded from `fact-current` on
 * first use, updated inside the transaction, dropped for the user if the commit fails), so a
 * check costs a pass over shapes in memory, not thousands of LMDB reads.
 */
export interface CachedFact {
  entry: FactEntry;
  shape: FactShape;
}

export interface FactStore {
  dbs: RecallDbs & { guard(): void };
  /** Current entries by seq, in seq order, per user (least recently used users evicted). */
  cache: Map<string, Map<number, CachedFact>>;
  /** With embeddings: the user's current entries by vector similarity to `query` (seqs, best
   * first), `undefined` when the query cannot be embedded (rank-facts.ts fuses it with BM25). */
  semantic?: (userId: string, query: string) => Promise<number[] | undefined>;
}

/** Users whose current entries stay cached. */
const CACHED_USERS = 2_000;
/** Longest fact text, in characters (a fact is a sentence, not a document). */
export const MAX_FACT_CHARS = 2_000;
const MAX_KEY_CHARS = 200;

export function createFactStore(dbs: RecallDbs & { guard(): void }): FactStore {
  return { dbs, cache: new Map() };
}

/** The user's current entries (loaded on first use). Safe inside and outside transactions. */
export function currentOf(store: FactStore, userId: string): Map<number, CachedFact> {
  let current = store.cache.get(userId);
  if (current !== undefined) {
    store.cache.delete(userId);
    store.cache.set(userId, current);
    return current;
  }
  current = new Map();
  for (const key of store.dbs.factCurrent.getKeys({ start: [userId], end: [userId, HIGH] })) {
    const entry = store.dbs.facts.get(key);
    if (entry) current.set(key[1], { entry, shape: shapeOf(entry.text) });
  }
  store.cache.set(userId, current);
  if (store.cache.size > CACHED_USERS) store.cache.delete(store.cache.keys().next().value!);
  return current;
}

/**
 * Commits `work` for one user; a failed commit drops the user's cache (it held the work's
 * writes). A refusal (`FactConflictError`, `FactNotFoundError`, `InvalidInputError`) thrown by
 * `work` is rethrown after the transaction, not inside it: an exception inside an lmdb-js
 * transaction callback fails the whole batch it commits with (other users' writes too).
 * Refusals are thrown before `work` writes anything. With a `lease` (a background job's,
 * user-gate.ts): checked first inside the transaction; revoked (the user's erasure began),
 * `work` does not run and `UserErasingError` is thrown after it.
 */
export async function factCommit<T>(store: FactStore, userId: string, work: () => T, lease?: Pick<UserLease, 'held'>): Promise<T> {
  let outcome: { ok: true; value: T } | { ok: false; refusal: Error };
  try {
    outcome = await commit(store.dbs, () => {
      if (lease !== undefined && !lease.held) return { ok: false as const, refusal: new UserErasingError(userId) };
      try {
        return { ok: true as const, value: work() };
      } catch (error) {
        if (error instanceof FactConflictError || error instanceof FactNotFoundError || error instanceof InvalidInputError) {
          return { ok: false as const, refusal: error };
        }
        throw error;
      }
    });
  } catch (error) {
    store.cache.delete(userId);
    throw error;
  }
  if (!outcome.ok) throw outcome.refusal;
  return outcome.value;
}

/** Checks a fact's text and key at the boundary; returns the trimmed text. */
export function checkFactText(text: unknown, field = 'text'): string {
  if (typeof text !== 'string' || text.trim() === '') {
    throw new InvalidInputError('invalid_message', `${field} must be a non-empty string`, { field });
  }
  if ([...text].length > MAX_FACT_CHARS) {
    throw new InvalidInputError('invalid_message', `${field} must be at most ${MAX_FACT_CHARS} characters`, { field });
  }
  return text.trim();
}

export function checkFactKey(key: unknown): string | undefined {
  if (key === undefined || key === null || key === '') return undefined;
  if (typeof key !== 'string' || key.trim() === '' || [...key].length > MAX_KEY_CHARS || /\p{Cc}/u.test(key)) {
    throw new InvalidInputError('invalid_message', `key must be a string of 1-${MAX_KEY_CHARS} characters without control characters`, { field: 'key' });
  }
  return key.trim();
}

export interface NewFact {
  text: string;
  key?: string;
  tags?: string[];
  source: FactSource;
  /** The judge's verdict, when one was asked. */
  verdict?: FactVerdict;
}

/** The current entry with this id, or the current successor of a superseded one. */
export function resolveCurrent(store: FactStore, userId: string, id: string): CachedFact | undefined {
  const current = currentOf(store, userId);
  let seq = factSeq(id);
  for (let hops = 0; seq !== undefined && hops < 10_000; hops++) {
    const hit = current.get(seq);
    if (hit) return hit;
    const entry = store.dbs.facts.get([userId, seq]);
    seq = entry?.supersededBy === undefined ? undefined : factSeq(entry.supersededBy);
  }
  return undefined;
}

/** The best current near-duplicate of `shape` (equal normal form first), skipping `except`. */
export function nearDuplicateOf(
  current: Map<number, CachedFact>,
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

/** Inside a write transaction. */
export function addFactTx(store: FactStore, userId: string, fact: NewFact, now: string): FactWrite {
  const current = currentOf(store, userId);
  const shape = shapeOf(fact.text);
  if (fact.key !== undefined) {
    const seq = store.dbs.factKeys.get([userId, fact.key]);
    const old = seq === undefined ? undefined : current.get(seq);
    if (old) {
      if (old.shape.normal === shape.normal) return { status: 'duplicate', entry: old.entry, ended: [] };
      // Another current entry saying the new text is merged into the new entry too.
      const twin = nearDuplicateOf(current, shape, seq);
      return writeEntry(store, userId, fact, now, old, twin ? [twin] : [], { verdict: 'update', target: old.entry.id, by: 'key' });
    }
  }
  const dup = nearDuplicateOf(current, shape);
  if (dup && fact.key !== undefined && dup.entry.key === undefined) {
    // A keyless entry already says it: it becomes the key's entry, so the key's next change replaces it.
    return writeEntry(store, userId, fact, now, dup, [], { verdict: 'duplicate', target: dup.entry.id, by: 'rules' });
  }
  if (dup) return { status: 'duplicate', entry: dup.entry, ended: [] };
  const judged = fact.verdict;
  if (judged?.target !== undefined && judged.verdict !== 'new') {
    const target = resolveCurrent(store, userId, judged.target);
    if (target && judged.verdict === 'duplicate') return { status: 'duplicate', entry: target.entry, ended: [] };
    if (target) return writeEntry(store, userId, fact, now, target, [], { ...judged, target: target.entry.id });
  }
  return writeEntry(store, userId, fact, now, undefined, [], judged);
}

/** Inside a write transaction: compare-and-set on `expectedVersion`. */
export function updateFactTx(
  store: FactStore,
  userId: string,
  id: string,
  text: string,
  expectedVersion: number,
  now: string,
  source: FactSource,
): FactWrite {
  const hit = currentOrThrow(store, userId, id, expectedVersion);
  if (text === hit.entry.text) return { status: 'unchanged', entry: hit.entry, ended: [] };
  const current = currentOf(store, userId);
  const seq = factSeq(id)!;
  const twin = nearDuplicateOf(current, shapeOf(text), seq);
  if (twin && twin.shape.normal !== hit.shape.normal) {
    // The change makes it another current fact: merge into that one.
    const ended = endEntry(store, userId, hit, now, twin.entry.id);
    return { status: 'duplicate', entry: twin.entry, ended: [ended] };
  }
  const { key, tags } = hit.entry;
  return writeEntry(store, userId, { text, ...(key === undefined ? {} : { key }), tags, source }, now, hit, [], undefined);
}

/** Inside a write transaction: ends the entry's validity (no successor). */
export function forgetFactTx(store: FactStore, userId: string, id: string, expectedVersion: number | undefined, now: string): FactEntry {
  const hit = currentOrThrow(store, userId, id, expectedVersion);
  return endEntry(store, userId, hit, now, undefined);
}

function currentOrThrow(store: FactStore, userId: string, id: string, expectedVersion: number | undefined): CachedFact {
  const seq = factSeq(id);
  const stored = seq === undefined ? undefined : store.dbs.facts.get([userId, seq]);
  if (stored === undefined) throw new FactNotFoundError(id);
  const hit = currentOf(store, userId).get(seq!);
  if (hit === undefined) {
    const successor = stored.supersededBy === undefined ? undefined : resolveCurrent(store, userId, id);
    if (successor === undefined) throw new FactNotFoundError(id);
    throw new FactConflictError(id, expectedVersion ?? stored.version, { version: successor.entry.version, current: successor.entry.id });
  }
  if (expectedVersion !== undefined && hit.entry.version !== expectedVersion) {
    throw new FactConflictError(id, expectedVersion, { version: hit.entry.version, current: id });
  }
  return hit;
}

/** Writes a new entry, superseding `replaces` (a change: version + 1) and ending `merged`. */
export function writeEntry(
  store: FactStore,
  userId: string,
  fact: NewFact,
  now: string,
  replaces: CachedFact | undefined,
  merged: CachedFact[],
  verdict: FactVerdict | undefined,
): FactWrite {
  const seq = nextCounter(store.dbs, 'fact-seq', userId);
  const id = factId(seq);
  const key = fact.key ?? replaces?.entry.key;
  const ended = [replaces, ...merged].filter((c): c is CachedFact => c !== undefined).map((c) => endEntry(store, userId, c, now, id));
  const entry: FactEntry = {
    id,
    userId,
    text: fact.text,
    ...(key === undefined ? {} : { key }),
    tags: fact.tags ?? replaces?.entry.tags ?? [],
    source: fact.source,
    createdAt: now,
    validFrom: now,
    version: replaces ? replaces.entry.version + 1 : 1,
    ...(replaces ? { supersedes: replaces.entry.id } : {}),
    ...(verdict === undefined ? {} : { verdict }),
  };
  // Before the put: a user's first write makes them live for embeddings (embed-hooks.ts).
  embedFactWritten(store.dbs, userId, seq);
  store.dbs.facts.put([userId, seq], entry);
  store.dbs.factCurrent.put([userId, seq], true);
  if (key !== undefined) store.dbs.factKeys.put([userId, key], seq);
  currentOf(store, userId).set(seq, { entry, shape: shapeOf(entry.text) });
  return { status: replaces ? 'superseded' : 'added', entry, ended };
}

/** Ends an entry's validity, pointing it at `successor` when there is one. */
export function endEntry(store: FactStore, userId: string, hit: CachedFact, now: string, successor: string | undefined): FactEntry {
  const seq = factSeq(hit.entry.id)!;
  const ended: FactEntry = { ...hit.entry, validTo: now, ...(successor === undefined ? {} : { supersededBy: successor }) };
  store.dbs.facts.put([userId, seq], ended);
  store.dbs.factCurrent.remove([userId, seq]);
  if (ended.key !== undefined && store.dbs.factKeys.get([userId, ended.key]) === seq) store.dbs.factKeys.remove([userId, ended.key]);
  currentOf(store, userId).delete(seq);
  embedFactEnded(store.dbs, userId, seq);
  return ended;
}

/** The current entries, in creation order. */
export function currentFacts(store: FactStore, userId: string): FactEntry[] {
  return [...currentOf(store, userId).values()].map((c) => c.entry);
}

/** Every entry ever written for the user, in creation order (superseded and forgotten ones too). */
export function factHistory(store: FactStore, userId: string): FactEntry[] {
  return [...store.dbs.facts.getRange({ start: [userId], end: [userId, HIGH] })].map(({ value }) => value);
}

/** What was believed at instant `at` (ISO): entries valid then. */
export function factsAsOf(store: FactStore, userId: string, at: string): FactEntry[] {
  return factHistory(store, userId).filter((e) => e.validFrom <= at && (e.validTo === undefined || e.validTo > at));
}

/** Whether the user has any entry, current or not. */
export function hasFacts(store: FactStore, userId: string): boolean {
  for (const _ of store.dbs.facts.getKeys({ start: [userId], end: [userId, HIGH], limit: 1 })) return true;
  return false;
}
