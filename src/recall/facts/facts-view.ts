import type { FactsChange, FactsState, RecallStore } from '../storage/recall-store.ts';
import type { LongTermRecord } from '../records/records.ts';
import { factId, factSeq, type DocTemplate, type FactEntry } from '../records/fact-entry.ts';
import { shapeOf, type FactShape } from './fact-text.ts';

/** node:crypto loads on first use: it is ~25 ms of a cold import (docs/performance-history.md). */
const crypto = () => process.getBuiltinModule('node:crypto');

/**
 * A user's long-term memory as the facts rules read it: the current entries with their token
 * shapes, the last document's template, the newest document version, and where each template
 * line whose entry ended now points (its current successor). Built from the store's
 * `factsState` and kept per user while the store's generation is the one it was built at
 * (`FactsCache`), so a turn's duplicate check or ranking is a pass over shapes in memory.
 *
 * `FactsWork` is a view being changed by one write: the rules (fact-rules.ts, fact-document.ts)
 * mutate it, and `change()` is what the store applies, guarded by the view's generation. A
 * write whose guard moved (another write came first: another call, another process) is
 * computed again from a fresh view (facts-service.ts).
 */
export interface CachedFact {
  entry: FactEntry;
  shape: FactShape;
}

export interface FactsView {
  readonly userId: string;
  readonly generation: string;
  /** Current entries by seq, in creation order. */
  readonly current: ReadonlyMap<number, CachedFact>;
  readonly nextSeq: number;
  readonly doc?: DocTemplate | undefined;
  readonly longTerm?: LongTermRecord | undefined;
  /** For each template reference that is not current: its current successor's seq, if any. */
  readonly successors: ReadonlyMap<number, number | undefined>;
}

/** Users whose views stay cached. */
const CACHED_USERS = 2_000;
/** Longest chain of supersessions followed. */
const MAX_HOPS = 10_000;

export class FactsCache {
  private readonly views = new Map<string, FactsView>();

  get(userId: string, generation: string): FactsView | undefined {
    const hit = this.views.get(userId);
    if (hit === undefined || hit.generation !== generation) return undefined;
    this.views.delete(userId);
    this.views.set(userId, hit);
    return hit;
  }

  set(view: FactsView): void {
    this.views.delete(view.userId);
    this.views.set(view.userId, view);
    if (this.views.size > CACHED_USERS) this.views.delete(this.views.keys().next().value!);
  }

  delete(userId: string): void {
    this.views.delete(userId);
  }
}

/** The user's view: the cached one while the store's generation is unchanged, else read anew. */
export async function loadFacts(store: RecallStore, cache: FactsCache, userId: string): Promise<FactsView> {
  const cached = cache.get(userId, await store.factsGeneration(userId));
  if (cached !== undefined) return cached;
  const view = await viewOf(store, userId, await store.factsState(userId));
  cache.set(view);
  return view;
}

async function viewOf(store: RecallStore, userId: string, state: FactsState): Promise<FactsView> {
  const current = new Map<number, CachedFact>();
  for (const entry of state.current) current.set(factSeq(entry.id)!, { entry, shape: shapeOf(entry.text) });
  const successors = new Map<number, number | undefined>();
  const refs = (state.doc?.lines ?? []).flatMap((l) => (typeof l === 'string' || current.has(l.ref) ? [] : [l.ref]));
  for (const ref of new Set(refs)) successors.set(ref, await followChain(store, userId, ref, current));
  return {
    userId,
    generation: state.generation,
    current,
    nextSeq: state.nextSeq,
    ...(state.doc === undefined ? {} : { doc: state.doc }),
    ...(state.longTerm === undefined ? {} : { longTerm: state.longTerm }),
    successors,
  };
}

/** The current successor of entry `seq` (itself when current), following `supersededBy`. */
export async function followChain(store: RecallStore, userId: string, seq: number, current: ReadonlyMap<number, CachedFact>): Promise<number | undefined> {
  let at: number | undefined = seq;
  for (let hops = 0; at !== undefined && hops < MAX_HOPS; hops++) {
    if (current.has(at)) return at;
    const [entry] = await store.factEntries(userId, [at]);
    at = entry?.supersededBy === undefined ? undefined : factSeq(entry.supersededBy);
  }
  return undefined;
}

/** Whether the user has any entry, current or not. */
export function hasFacts(view: Pick<FactsView, 'nextSeq'>): boolean {
  return view.nextSeq > 1;
}

export class FactsWork implements FactsView {
  readonly userId: string;
  readonly generation: string;
  readonly current: Map<number, CachedFact>;
  nextSeq: number;
  doc: DocTemplate | undefined;
  longTerm: LongTermRecord | undefined;
  readonly successors: Map<number, number | undefined>;
  private readonly changed = new Map<number, FactEntry>();
  private docChanged = false;
  private longTermChange: FactsChange['longTerm'];

  constructor(
    view: FactsView,
    /** ISO instant the write's entries are stamped with. */
    readonly now: string,
  ) {
    this.userId = view.userId;
    this.generation = view.generation;
    this.current = new Map(view.current);
    this.nextSeq = view.nextSeq;
    this.doc = view.doc;
    this.longTerm = view.longTerm;
    this.successors = new Map(view.successors);
  }

  get changes(): boolean {
    return this.changed.size > 0 || this.docChanged || this.longTermChange !== undefined;
  }

  /** A new entry's id (the store keeps at most one write per generation, so ids never clash). */
  takeId(): string {
    return factId(this.nextSeq++);
  }

  /** Stores `entry`: current unless it has `validTo`. */
  put(entry: FactEntry): void {
    const seq = factSeq(entry.id)!;
    this.changed.set(seq, entry);
    if (entry.validTo === undefined) this.current.set(seq, { entry, shape: shapeOf(entry.text) });
    else this.current.delete(seq);
  }

  /** An entry this write ended (it may name a successor). */
  endedEntry(seq: number): FactEntry | undefined {
    const e = this.changed.get(seq);
    return e?.validTo === undefined ? undefined : e;
  }

  setDoc(doc: DocTemplate): void {
    this.doc = doc;
    this.docChanged = true;
  }

  writeLongTerm(record: Omit<LongTermRecord, 'version'>): void {
    this.longTerm = { ...record, version: (this.longTerm?.version ?? 0) + 1 };
    this.longTermChange = record;
  }

  /** Drops the newest version; the one before it (`previous`, read by the caller) becomes newest. */
  undoLongTerm(previous: LongTermRecord | undefined): void {
    this.longTerm = previous;
    this.longTermChange = 'undo';
  }

  /** The current successor of `seq` as this write leaves it. */
  successorOf(seq: number): number | undefined {
    let at: number | undefined = seq;
    for (let hops = 0; at !== undefined && hops < MAX_HOPS; hops++) {
      if (this.current.has(at)) return at;
      const ended = this.changed.get(at);
      at = ended !== undefined ? (ended.supersededBy === undefined ? undefined : factSeq(ended.supersededBy)) : this.successors.get(at);
    }
    return undefined;
  }

  change(): FactsChange & { generation: string } {
    return {
      entries: [...this.changed.values()],
      ...(this.docChanged && this.doc !== undefined ? { doc: this.doc } : {}),
      ...(this.longTermChange === undefined ? {} : { longTerm: this.longTermChange }),
      generation: crypto().randomUUID(),
    };
  }

  /** The view the store holds once `change()` (with that generation) was applied. */
  committed(generation: string): FactsView {
    const successors = new Map<number, number | undefined>();
    for (const line of this.doc?.lines ?? []) {
      if (typeof line !== 'string' && !this.current.has(line.ref)) successors.set(line.ref, this.successorOf(line.ref));
    }
    return {
      userId: this.userId,
      generation,
      current: this.current,
      nextSeq: this.nextSeq,
      ...(this.doc === undefined ? {} : { doc: this.doc }),
      ...(this.longTerm === undefined ? {} : { longTerm: this.longTerm }),
      successors,
    };
  }
}
