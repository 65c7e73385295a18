import { InvalidInputError } from '../../errors.ts';
import { languageOf } from '../../language.ts';
import { StorageError } from '../../memory/contract/memory-errors.ts';
import type { FactsDeps } from './facts-deps.ts';
import type { WriteGuard } from '../storage/recall-store.ts';
import type { LongTermRecord } from '../records/records.ts';
import { factSeq, type FactEntry, type FactSource, type FactVerdict, type FactWrite } from '../records/fact-entry.ts';
import { checkFactId, checkFactKey, checkFactText, checkTags, checkVersion } from './fact-input.ts';
import { ensureConverted, longTermDocument, needsConversion, syncDocument } from './fact-document.ts';
import { judgeFact } from './fact-judge.ts';
import { addFact, currentFacts, factsAsOf, forgetFact as forgetRule, nearDuplicateOf, updateFact as updateRule, type ResolvedTarget } from './fact-rules.ts';
import { shapeOf } from './fact-text.ts';
import { followChain, FactsWork, loadFacts, type FactsView } from './facts-view.ts';
import { rankFacts } from './rank-facts.ts';

/**
 * The facts operations of the recall service (recall.ts wires them to its API and tools). Each
 * write reads the user's view (facts-view.ts), converts a pre-facts document first
 * (fact-document.ts), applies the rules (fact-rules.ts) and hands the change to the store,
 * guarded by the view's generation: a write that lost the race to another (another call,
 * another process) is computed again from a fresh view, up to `WRITE_ATTEMPTS` times, so of
 * two concurrent updates from one version exactly one wins and the other gets
 * `FactConflictError`. A refusal of the rules leaves nothing written.
 *
 * `guard`: a longer operation's (a background job's lease: extraction-worker.ts): the store
 * writes nothing once it no longer holds (`StaleWriteError`).
 */
export interface RememberInput {
  /** The fact, a sentence (1-2000 characters, trimmed; `invalid_message` otherwise). */
  text: string;
  /**
   * A key naming what the fact is about (`drink`, `city`): a later fact with the same key
   * supersedes it.
   */
  key?: string;
  /** At most 50 tags of at most 100 characters. */
  tags?: string[];
  /** Where it came from. Default `{ via: 'api' }`. */
  source?: FactSource;
}

export interface FactWriteOptions {
  signal?: AbortSignal;
  guard?: WriteGuard;
}

const WRITE_ATTEMPTS = 8;

export function nowIso(deps: FactsDeps): string {
  return new Date(deps.clock.now()).toISOString();
}

/**
 * Runs `compute` on a fresh view and commits what it changed; again while the view was stale.
 * `compute` may read the store (what it reads is checked by the same guard) but writes only to
 * the work.
 */
async function factWrite<T>(deps: FactsDeps, userId: string, compute: (work: FactsWork) => T | Promise<T>, guard?: WriteGuard): Promise<T> {
  for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
    const view = await loadFacts(deps.store, deps.facts, userId);
    const work = new FactsWork(view, nowIso(deps));
    ensureConverted(work);
    const result = await compute(work);
    if (!work.changes) return result;
    const change = work.change();
    if (await deps.store.commitFacts(userId, change, { ...guard, generation: view.generation })) {
      deps.facts.set(work.committed(change.generation));
      return result;
    }
  }
  throw new StorageError('storage_failed', `the facts of user ${JSON.stringify(userId)} changed under ${WRITE_ATTEMPTS} attempts in a row; retry`);
}

/** The view, converted: a read that finds a pre-facts document converts it first (one write, once). */
async function readView(deps: FactsDeps, userId: string): Promise<FactsView> {
  const view = await loadFacts(deps.store, deps.facts, userId);
  if (!needsConversion(view)) return view;
  await factWrite(deps, userId, () => undefined);
  return loadFacts(deps.store, deps.facts, userId);
}

/** Converts the user's legacy document into entries if it still needs it. */
export async function ensureFactsConverted(deps: FactsDeps, userId: string): Promise<FactsView> {
  return readView(deps, userId);
}

export async function rememberFact(deps: FactsDeps, userId: string, input: RememberInput, options: FactWriteOptions = {}): Promise<FactWrite> {
  const text = checkFactText(input?.text);
  const key = checkFactKey(input.key);
  const tags = checkTags(input.tags);
  const view = await readView(deps, userId);
  let verdict: FactVerdict | undefined;
  // The judge only where the rules cannot decide: no key, no near-duplicate, similar entries exist.
  if (deps.factsLlm !== undefined && key === undefined && nearDuplicateOf(view.current, shapeOf(text)) === undefined) {
    const candidates = (await rankFacts(deps, view, text, { limit: 5, tokenBudget: 4_000 })).filter((r) => r.score > 0);
    if (candidates.length > 0) {
      verdict = await judgeFact(deps.factsLlm, text, candidates.map((c) => c.entry), options.signal, languageOf(deps.language, text), (error) => deps.onFactsError(error, 'judge'));
    }
  }
  const source = input.source ?? { via: 'api' };
  const fact = { text, ...(key === undefined ? {} : { key }), ...(tags ? { tags } : {}), source, ...(verdict ? { verdict } : {}) };
  return factWrite(deps, userId, (work) => addFact(work, fact), options.guard);
}

export async function updateFact(deps: FactsDeps, userId: string, id: string, change: { text: string; version: number; source?: FactSource }): Promise<FactWrite> {
  const text = checkFactText(change?.text);
  const version = checkVersion(change.version);
  const factId = checkFactId(id);
  return factWrite(deps, userId, async (work) => updateRule(work, factId, await resolveTarget(deps, userId, factId, work), text, version, change.source ?? { via: 'api' }));
}

export async function forgetFact(deps: FactsDeps, userId: string, id: string, version?: number): Promise<FactEntry> {
  const expected = version === undefined ? undefined : checkVersion(version);
  const factId = checkFactId(id);
  return factWrite(deps, userId, async (work) => forgetRule(work, factId, await resolveTarget(deps, userId, factId, work), expected));
}

/** The entry an update or a forget names, and its current successor in `view` (followed in the store). */
async function resolveTarget(deps: FactsDeps, userId: string, id: string, view: FactsView): Promise<ResolvedTarget> {
  const seq = factSeq(id);
  if (seq === undefined) return { stored: undefined, current: undefined };
  const [stored] = await deps.store.factEntries(userId, [seq]);
  const at = stored === undefined ? undefined : await followChain(deps.store, userId, seq, view.current);
  return { stored, current: at === undefined ? undefined : view.current.get(at)?.entry };
}

/** Current entries, or those valid at `asOf` (an ISO 8601 instant or anything `Date.parse` reads). */
export async function listFacts(deps: FactsDeps, userId: string, asOf?: string): Promise<FactEntry[]> {
  const view = await readView(deps, userId);
  if (asOf === undefined || asOf === '') return currentFacts(view.current);
  const t = Date.parse(asOf);
  if (!Number.isFinite(t)) {
    throw new InvalidInputError('invalid_message', `as_of must be an ISO 8601 time, got ${JSON.stringify(asOf.slice(0, 40))}`, { field: 'as_of' });
  }
  return factsAsOf(await deps.store.factHistory(userId), new Date(t).toISOString());
}

export async function listFactHistory(deps: FactsDeps, userId: string): Promise<FactEntry[]> {
  await readView(deps, userId);
  return deps.store.factHistory(userId);
}

/** The rendered long-term document (what `getLongTerm` answers). */
export async function readLongTerm(deps: FactsDeps, userId: string): Promise<string> {
  return longTermDocument(await readView(deps, userId));
}

/**
 * A document write (`setLongTerm`, `remember_note`): a new document version and the entries
 * synced to it, in one commit. Blank, or equal to the document now rendered: no-op, `null`.
 * `keep`: entries to leave current even if the document omits them.
 */
export async function writeDocument(
  deps: FactsDeps,
  userId: string,
  document: string,
  source: LongTermRecord['source'],
  keep?: ReadonlySet<number>,
): Promise<LongTermRecord | null> {
  return factWrite(deps, userId, (work) => {
    const content = document.trim();
    if (content === '' || content === longTermDocument(work)) return null;
    work.writeLongTerm({ content, ts: deps.localTime(deps.clock.now()).ts, source });
    syncDocument(work, content, { raw: false, origin: 'document', ...(keep ? { keep } : {}) });
    return work.longTerm!;
  });
}

/** An imported `memory.md`: a version keeping the file's text, its lines as entries (an export renders them back exactly). */
export async function importDocument(deps: FactsDeps, userId: string, text: string): Promise<void> {
  await factWrite(deps, userId, (work) => {
    work.writeLongTerm({ content: text.trim(), ts: deps.localTime(deps.clock.now()).ts, source: 'import', raw: text });
    syncDocument(work, text, { raw: true, origin: 'import' });
  });
}

/** Drops the newest document version; the entries follow the version now current. */
export async function undoDocument(deps: FactsDeps, userId: string): Promise<string | null> {
  await readView(deps, userId);
  const versions = await deps.store.longTermVersions(userId);
  if (versions.length === 0) return null;
  const previous = versions[versions.length - 2];
  const newest = versions[versions.length - 1]!;
  return factWrite(deps, userId, (work) => {
    // Another write made a version since the versions were read: this undo is of that one's predecessor no more.
    if (work.longTerm?.version !== newest.version) return longTermDocument(work);
    work.undoLongTerm(previous);
    syncDocument(work, previous?.raw ?? previous?.content ?? '', { raw: previous?.raw !== undefined, origin: 'document' });
    return longTermDocument(work);
  });
}
