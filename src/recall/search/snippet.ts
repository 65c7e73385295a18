import { tokenizeWithOffsets } from './tokenizer.ts';

/**
 * A snippet of at most ~160 characters around the first token of `text` that is a query term,
 * whitespace collapsed, `…` where text was cut. With `onlyOnMatch`, `''` when no term occurs;
 * otherwise the text's start.
 */
const BEFORE = 50;
const WIDTH = 160;

export function makeSnippet(text: string, terms: ReadonlySet<string>, onlyOnMatch = false): string {
  let at = -1;
  for (const t of tokenizeWithOffsets(text)) {
    if (terms.has(t.term)) {
      at = t.start;
      break;
    }
  }
  if (at < 0 && onlyOnMatch) return '';
  let start = Math.max(0, at - BEFORE);
  // Start at a word boundary when one is near.
  if (start > 0) {
    const space = text.indexOf(' ', start);
    if (space >= 0 && space < at) start = space + 1;
  }
  const end = Math.min(text.length, start + WIDTH);
  const body = text.slice(start, end).replace(/\s+/g, ' ').trim();
  return `${start > 0 ? '…' : ''}${body}${end < text.length ? '…' : ''}`;
}
