import { InvalidInputError } from '../../errors.ts';
import type { RecallDeps } from '../recall-deps.ts';
import { currentLongTermValue, undoLongTerm, writeLongTerm, type LongTermVersion } from '../storage/lmdb/long-term-store.ts';
import type { LongTermValue } from '../storage/lmdb/recall-dbs.ts';
import type { FactEntry, FactSource, FactVerdict, FactWrite } from './fact-entry.ts';
import { ensureConvertedTx, longTermDocument, needsConversion, syncDocumentTx } from './fact-document.ts';
import { judgeFact } from './fact-judge.ts';
import {
  addFactTx,
  checkFactKey,
  checkFactText,
  currentFacts,
  currentOf,
  factCommit,
  factHistory,
  factsAsOf,
  forgetFactTx,
  nearDuplicateOf,
  updateFactTx,
} from './fact-store.ts';
import { shapeOf } from './fact-text.ts';
import { rankFacts } from './rank-facts.ts';
import type { UserLease } from '../user-gate.ts';

/**
 * The facts operations of the recall service (recall.ts wires them to its API and tools):
 * every one converts a pre-facts document first (fact-document.ts), reads and writes one
 * user's keys only, and writes in one LMDB transaction.
 */
export interface RememberInput {
  text: string;
  key?: string;
  tags?: string[];
  source?: FactSource;
}

export function nowIso(deps: RecallDeps): string {
  return new Date(deps.clock.now()).toISOString();
}

/** Converts the user's legacy document into entries if it still needs it (one commit, once). */
export async function ensureConverted(deps: RecallDeps, userId: string, lease?: Pick<UserLease, 'held'>): Promise<void> {
  if (!needsConversion(deps.facts, userId)) return;
  await factCommit(deps.facts, userId, () => ensureConvertedTx(deps.facts, userId, nowIso(deps)), lease);
}

/**
 * `lease`: a background job's (extraction-worker.ts): the judge's call stops on its signal, and
 * every commit checks it (fact-store.ts `factCommit`), so a job the user's erasure outlived
 * writes nothing (`UserErasingError`).
 */
export async function rememberFact(deps: RecallDeps, userId: string, input: RememberInput, lease?: Pick<UserLease, 'signal' | 'held'>): Promise<FactWrite> {
  const text = checkFactText(input?.text);
  const key = checkFactKey(input.key);
  const tags = checkTags(input.tags);
  const signal = lease?.signal;
  await ensureConverted(deps, userId, lease);
  const store = deps.facts;
  let verdict: FactVerdict | undefined;
  // The judge only where the rules cannot decide: no key, no near-duplicate, similar entries exist.
  if (deps.factsLlm !== undefined && key === undefined && nearDuplicateOf(currentOf(store, userId), shapeOf(text)) === undefined) {
    const candidates = (await rankFacts(store, userId, text, { limit: 5, tokenBudget: 4_000 })).filter((r) => r.score > 0);
    if (candidates.length > 0) verdict = await judgeFact(deps.factsLlm, text, candidates.map((c) => c.entry), signal, deps.language, (error) => deps.onFactsError(error, 'judge'));
  }
  const source = input.source ?? { via: 'api' };
  return factCommit(store, userId, () => {
    const now = nowIso(deps);
    ensureConvertedTx(store, userId, now);
    return addFactTx(store, userId, { text, ...(key === undefined ? {} : { key }), ...(tags ? { tags } : {}), source, ...(verdict ? { verdict } : {}) }, now);
  }, lease);
}

export async function updateFact(
  deps: RecallDeps,
  userId: string,
  id: string,
  change: { text: string; version: number; source?: FactSource },
): Promise<FactWrite> {
  const text = checkFactText(change?.text);
  if (!Number.isSafeInteger(change.version) || change.version < 1) {
    throw new InvalidInputError('invalid_message', 'version must be an integer >= 1', { field: 'version' });
  }
  await ensureConverted(deps, userId);
  return factCommit(deps.facts, userId, () => {
    const now = nowIso(deps);
    ensureConvertedTx(deps.facts, userId, now);
    return updateFactTx(deps.facts, userId, checkId(id), text, change.version, now, change.source ?? { via: 'api' });
  });
}

export async function forgetFact(deps: RecallDeps, userId: string, id: string, version?: number): Promise<FactEntry> {
  if (version !== undefined && (!Number.isSafeInteger(version) || version < 1)) {
    throw new InvalidInputError('invalid_message', 'version must be an integer >= 1', { field: 'version' });
  }
  await ensureConverted(deps, userId);
  return factCommit(deps.facts, userId, () => {
    const now = nowIso(deps);
    ensureConvertedTx(deps.facts, userId, now);
    return forgetFactTx(deps.facts, userId, checkId(id), version, now);
  });
}

/** Current entries, or those valid at `asOf` (an ISO 8601 instant or anything `Date.parse` reads). */
export async function listFacts(deps: RecallDeps, userId: string, asOf?: string): Promise<FactEntry[]> {
  await ensureConverted(deps, userId);
  if (asOf === undefined || asOf === '') return currentFacts(deps.facts, userId);
  const t = Date.parse(asOf);
  if (!Number.isFinite(t)) {
    throw new InvalidInputError('invalid_message', `as_of must be an ISO 8601 time, got ${JSON.stringify(asOf.slice(0, 40))}`, { field: 'as_of' });
  }
  return factsAsOf(deps.facts, userId, new Date(t).toISOString());
}

export async function listFactHistory(deps: RecallDeps, userId: string): Promise<FactEntry[]> {
  await ensureConverted(deps, userId);
  return factHistory(deps.facts, userId);
}

/** The rendered long-term document (what `getLongTerm` answers). */
export async function readLongTerm(deps: RecallDeps, userId: string): Promise<string> {
  await ensureConverted(deps, userId);
  return longTermDocument(deps.facts, userId);
}

/**
 * A document write (`setLongTerm`, `remember_note`): a new document version and the entries
 * synced to it, in one commit. Blank, or equal to the document now rendered: no-op, `null`.
 * `keep`: entries to leave current even if the document omits them.
 */
export async function writeDocument(
  deps: RecallDeps,
  userId: string,
  document: string,
  source: LongTermValue['source'],
  keep?: ReadonlySet<number>,
): Promise<LongTermVersion | null> {
  await ensureConverted(deps, userId);
  return factCommit(deps.facts, userId, () => {
    const now = nowIso(deps);
    ensureConvertedTx(deps.facts, userId, now);
    const content = document.trim();
    if (content === '' || content === longTermDocument(deps.facts, userId)) return null;
    const version = writeLongTerm(deps.dbs, userId, content, source, deps.localTime(deps.clock.now()).ts, undefined, true);
    syncDocumentTx(deps.facts, userId, content, { raw: false, origin: 'document', now, ...(keep ? { keep } : {}) });
    return version;
  });
}

/** Drops the newest document version; the entries follow the version now current. */
export async function undoDocument(deps: RecallDeps, userId: string): Promise<string | null> {
  await ensureConverted(deps, userId);
  return factCommit(deps.facts, userId, () => {
    const now = nowIso(deps);
    ensureConvertedTx(deps.facts, userId, now);
    if (undoLongTerm(deps.dbs, userId) === null) return null;
    const value = currentLongTermValue(deps.dbs, userId);
    syncDocumentTx(deps.facts, userId, value?.raw ?? value?.content ?? '', { raw: value?.raw !== undefined, origin: 'document', now });
    return longTermDocument(deps.facts, userId);
  });
}

function checkId(id: unknown): string {
  if (typeof id !== 'string' || id === '') throw new InvalidInputError('invalid_id', 'a memory id is a string like m12', { field: 'id' });
  return id;
}

function checkTags(tags: unknown): string[] | undefined {
  if (tags === undefined) return undefined;
  if (!Array.isArray(tags) || tags.some((t) => typeof t !== 'string' || t.length > 100) || tags.length > 50) {
    throw new InvalidInputError('invalid_message', 'tags must be at most 50 strings of at most 100 characters', { field: 'tags' });
  }
  return [...new Set(tags.map((t: string) => t.trim()).filter((t) => t !== ''))];
}
