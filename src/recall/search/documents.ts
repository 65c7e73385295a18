import type { DailyRecord } from '../records/records.ts';
import { forEachTerm, termCounts, tokenize } from './tokenizer.ts';

/**
 * What the ranked index holds as documents, the same on every storage engine: each daily row
 * (its text and its tool calls' names, inputs and outputs; a session row is found through its
 * daily mirror, which holds the same text), and each non-blank line of the newest long-term
 * document version (a line is one fact, and a hit names it). Terms come from the tokenizer.
 */
export function dailyRowText(row: Pick<DailyRecord, 'content' | 'toolCalls'>): string {
  if (!row.toolCalls || row.toolCalls.length === 0) return row.content;
  const parts = [row.content];
  for (const call of row.toolCalls) parts.push(call.name, call.input, call.output);
  return parts.join('\n');
}

/** The lines of a long-term document that become documents: non-blank, numbered from 1. */
export function longTermLines(document: string): { line: number; text: string }[] {
  return document
    .split('\n')
    .map((text, i) => ({ line: i + 1, text }))
    .filter((l) => l.text.trim() !== '');
}

/** The distinct terms of a query, in order (what `rank` scores over). */
export function queryTerms(query: string): string[] {
  return [...new Set(tokenize(query))];
}

/** Term → frequency, and the document's length in tokens. */
export interface DocTerms {
  terms: Map<string, number>;
  length: number;
}

export function docTerms(text: string): DocTerms {
  return termCounts(text);
}

/**
 * A document's distinct terms and their frequencies as two parallel arrays, in first-seen
 * order, and its length in tokens: `docTerms` without a Map (the bulk build's form: hundreds of
 * thousands of documents of a dozen terms, where a Map and a pair per term were most of the
 * garbage). Same terms and counts as `docTerms`.
 */
export interface TermArrays {
  terms: string[];
  tfs: number[];
  length: number;
}

/** Up to this many distinct terms a document's repeats are found by a scan; past it, by a Map. */
const SCAN_TERMS = 32;
let into: TermArrays = { terms: [], tfs: [], length: 0 };
let indexOf: Map<string, number> | undefined;

function count(term: string): void {
  into.length++;
  const { terms } = into;
  if (indexOf === undefined) {
    for (let i = 0; i < terms.length; i++) {
      if (terms[i] === term) {
        into.tfs[i]!++;
        return;
      }
    }
    if (terms.length === SCAN_TERMS) indexOf = new Map(terms.map((t, i) => [t, i]));
  } else {
    const i = indexOf.get(term);
    if (i !== undefined) {
      into.tfs[i]!++;
      return;
    }
  }
  indexOf?.set(term, terms.length);
  terms.push(term);
  into.tfs.push(1);
}

export function docTermArrays(text: string): TermArrays {
  const out: TermArrays = { terms: [], tfs: [], length: 0 };
  into = out;
  indexOf = undefined;
  forEachTerm(text, count);
  indexOf = undefined;
  return out;
}
