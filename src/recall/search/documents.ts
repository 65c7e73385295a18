import type { DailyRecord } from '../records/records.ts';
import { termCounts, tokenize } from './tokenizer.ts';

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
