/**
 * Long-term memory as facts: one entry per fact, never rewritten in place. A change ends the
 * old entry's validity (`validTo`) and points it at its successor (`supersededBy`); forgetting
 * ends validity with no successor. So every view is a filter over the same entries:
 * current (no `validTo`), as of an instant (`validFrom <= t < validTo`), history (all).
 *
 * Times are ISO 8601 UTC instants with milliseconds (they sort as strings). Ids are `m{seq}`,
 * seq a per-user counter, so entries list in creation order.
 */
import type { ErrorRecord } from '../../errors.ts';

/** How an entry came to be written. */
export type FactOrigin = 'api' | 'tool' | 'document' | 'import' | 'extraction';

/** Where a fact came from. */
export interface FactSource {
  /** How it was written. */
  via: FactOrigin;
  /** The session whose turn said it (tools, extraction). */
  sessionId?: string;
  /** The session rows it was taken from (extraction: the user row and the reply). */
  messageIds?: number[];
}

/** How a new fact relates to a current one. */
export type FactVerdictKind = 'duplicate' | 'update' | 'contradiction' | 'new';

/** The judgement a write made of a new fact against the current ones. */
export interface FactVerdict {
  /** What it is. */
  verdict: FactVerdictKind;
  /** The current entry the verdict is about (not for `new`). */
  target?: string;
  /** `key`: same key; `rules`: normalized text or lexical similarity; `model`: the judge. */
  by: 'key' | 'rules' | 'model';
  /** Set when the judge was asked and failed: the rules decided instead. The code and Mnemo's
   *  own sentence (a model's error text goes to recall's `onFactsError` only). */
  judgeError?: ErrorRecord;
}

/** One version of one fact (see above). */
export interface FactEntry {
  /** `m{seq}`: unique per user, in creation order. */
  id: string;
  /** Whose it is. */
  userId: string;
  /** The fact. */
  text: string;
  /** Its key, when it was given one. */
  key?: string;
  /** Its tags. */
  tags: string[];
  /** Where it came from. */
  source: FactSource;
  /** When this entry was written. */
  createdAt: string;
  /** From when it holds. */
  validFrom: string;
  /** Until when it held; absent while current. */
  validTo?: string;
  /** The entry that replaced it, when it was changed (not when forgotten). */
  supersededBy?: string;
  /** The id this entry replaced, when it is a change of one. */
  supersedes?: string;
  /** 1 for a new fact; each change of it is one more (compare-and-set on this). */
  version: number;
  /** Why it was written as it was (a change, a contradiction, ...). */
  verdict?: FactVerdict;
}

/** What a write did: stored a new entry, found it already known, or left it unchanged. */
export interface FactWrite {
  /**
   * `added`: a new entry; `superseded`: a new entry replacing one; `duplicate`: already known (or
   * merged into a known one); `unchanged`: the same text.
   */
  status: 'added' | 'superseded' | 'duplicate' | 'unchanged';
  /** The entry that now holds the fact (the existing one for `duplicate` / `unchanged`). */
  entry: FactEntry;
  /** The entries this write ended (superseded or merged). */
  ended: FactEntry[];
}

/**
 * The shape of the rendered long-term document: the lines of the last document written
 * (`setLongTerm`, `remember_note`, an imported `memory.md`), each either literal text (blank
 * lines, headings) or a reference to the entry it became, with the text around it (a bullet,
 * trailing spaces). Rendering follows each reference to its current successor (a forgotten
 * fact drops its line) and appends current entries no line refers to.
 */
export type DocLine =
  | string
  | {
      /** Text before the fact (a bullet). */
      pre: string;
      /** The seq of the entry it shows. */
      ref: number;
      /** Text after it. */
      post: string;
    };

/** The long-term document's shape, as its last write left it (see `DocLine`). */
export interface DocTemplate {
  /** Its lines, in order. */
  lines: DocLine[];
  /** True for an imported file: its export is the rendering itself, byte for byte. */
  raw: boolean;
}

export const factId = (seq: number): string => `m${seq}`;

/** The seq of an id, or `undefined` when it is not one. */
export function factSeq(id: unknown): number | undefined {
  if (typeof id !== 'string') return undefined;
  const m = /^m([1-9]\d{0,14})$/.exec(id);
  return m ? Number(m[1]) : undefined;
}
