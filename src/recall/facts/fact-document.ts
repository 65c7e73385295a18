import type { DocLine, DocTemplate, FactEntry } from '../records/fact-entry.ts';
import { factSeq } from '../records/fact-entry.ts';
import { endEntry, nearDuplicateOf, writeEntry } from './fact-rules.ts';
import { factTokens, shapeOf } from './fact-text.ts';
import { hasFacts, type CachedFact, type FactsView, type FactsWork } from './facts-view.ts';

/**
 * The Demo's long-term document as a view of the facts.
 *
 * A document write (`setLongTerm`, `remember_note`, an imported `memory.md`) still makes a
 * document version (history and undo work as before), and in the same write `syncDocument`
 * makes the current entries say what the document says:
 * - each fact line (not blank, not a `#` heading, with a word in it; a leading `- `, `* `, `+ `
 *   or `1. ` bullet is kept around the text, not in it) becomes an entry, or refers to the
 *   current entry with exactly its text;
 * - a line that is a near-duplicate of a current entry (normalized equal, Jaccard >= 0.8)
 *   supersedes it: a reworded fact is a change, not a new fact;
 * - current entries the document no longer says end (they stay in the history), except those
 *   in `keep` (a turn's `remember_note` keeps the entries its model was never shown);
 * - the document's lines are kept (`recall.fact-doc`), so `renderDocument` gives back exactly
 *   the document written until a fact changes: then a superseded line shows its successor's
 *   text, a forgotten line is dropped, and new entries are appended, one per line.
 *
 * MIGRATION: a user whose long-term memory predates facts has document versions and no
 * entries. `ensureConverted` (run first by every write of facts, and by a read that finds a
 * user to convert) syncs the newest version into entries once; the versions stay readable
 * through `longTermHistory`.
 */
const BULLET = /^(\s*(?:[-*+\u2022]\s+|\d{1,3}[.)]\s+)?)(.*?)(\s*)$/su;

interface ParsedLine {
  pre: string;
  body: string;
  post: string;
}

function parseLine(line: string): ParsedLine | string {
  const m = BULLET.exec(line)!;
  const body = m[2]!;
  if (body === '' || body.startsWith('#') || factTokens(body).length === 0) return line;
  return { pre: m[1]!, body, post: m[3]! };
}

/** The entries now say what `text` says; returns the ended ones. */
export function syncDocument(
  work: FactsWork,
  text: string,
  options: { raw: boolean; origin: 'document' | 'import'; keep?: ReadonlySet<number> },
): FactEntry[] {
  const current = work.current;
  const before = new Map<number, CachedFact>(current);
  const exact = new Map<string, number>();
  for (const [seq, c] of before) if (!exact.has(c.entry.text)) exact.set(c.entry.text, seq);
  const kept = new Set<number>();
  const ended: FactEntry[] = [];
  const lines: DocLine[] = [];
  for (const line of text.split('\n')) {
    const parsed = parseLine(line);
    if (typeof parsed === 'string') {
      lines.push(parsed);
      continue;
    }
    let seq = exact.get(parsed.body);
    // An entry this same document just superseded is no longer its text's entry.
    if (seq !== undefined && !current.has(seq)) seq = undefined;
    if (seq === undefined) {
      const source = { via: options.origin };
      // Only entries current before this document, not yet claimed by one of its lines.
      const near = nearDuplicateOf(current, shapeOf(parsed.body), (s) => !before.has(s) || kept.has(s));
      const write = near
        ? writeEntry(work, { text: parsed.body, source }, near, [], { verdict: 'update', target: near.entry.id, by: 'rules' })
        : writeEntry(work, { text: parsed.body, source }, undefined, [], undefined);
      ended.push(...write.ended);
      seq = factSeq(write.entry.id)!;
      exact.set(parsed.body, seq);
    }
    kept.add(seq);
    lines.push({ pre: parsed.pre, ref: seq, post: parsed.post });
  }
  for (const [seq, c] of before) {
    if (kept.has(seq) || !current.has(seq) || options.keep?.has(seq)) continue;
    ended.push(endEntry(work, c, undefined));
  }
  work.setDoc({ lines, raw: options.raw });
  return ended;
}

/** The document the current entries make (see above); `''` when there is none. */
export function renderDocument(view: FactsView | FactsWork): string {
  const current = view.current;
  const successorOf = (seq: number) => ('successorOf' in view ? view.successorOf(seq) : view.successors.get(seq));
  const shown = new Set<number>();
  const out: string[] = [];
  let lastPre = '';
  // New entries go right after the document's last fact line (before trailing blanks).
  let insertAt = -1;
  for (const line of view.doc?.lines ?? []) {
    if (typeof line === 'string') {
      out.push(line);
      continue;
    }
    lastPre = line.pre;
    insertAt = out.length + 1;
    const direct = current.get(line.ref);
    if (direct) {
      out.push(line.pre + direct.entry.text + line.post);
      shown.add(line.ref);
      continue;
    }
    const successor = successorOf(line.ref);
    if (successor !== undefined && !shown.has(successor) && current.has(successor)) {
      out.push(line.pre + current.get(successor)!.entry.text + line.post);
      shown.add(successor);
    } else {
      insertAt -= 1;
    }
  }
  const added = [...current].filter(([seq]) => !shown.has(seq)).map(([, c]) => lastPre + c.entry.text);
  out.splice(insertAt < 0 ? out.length : insertAt, 0, ...added);
  return out.join('\n');
}

/** What `getLongTerm` answers: the rendering, trimmed (as the Demo read `memory.md` back). */
export function longTermDocument(view: FactsView | FactsWork): string {
  return renderDocument(view).trim();
}

/** The `memory.md` an export writes: an imported file byte for byte, else `{text}\n`; `undefined`: no file. */
export function memoryFile(view: FactsView): string | undefined {
  if (view.doc === undefined && !hasFacts(view)) {
    const legacy = view.longTerm;
    return legacy === undefined ? undefined : (legacy.raw ?? (legacy.content === '' ? '' : `${legacy.content}\n`));
  }
  const rendered = renderDocument(view);
  if (view.doc?.raw) return rendered;
  const text = rendered.trim();
  return text === '' ? '' : `${text}\n`;
}

/** Whether the user's legacy document still needs converting. */
export function needsConversion(view: FactsView | FactsWork): boolean {
  return view.doc === undefined && view.longTerm !== undefined && !hasFacts(view);
}

/** Converts a pre-facts document into entries, once. */
export function ensureConverted(work: FactsWork): void {
  if (!needsConversion(work)) return;
  const legacy = work.longTerm!;
  syncDocument(work, legacy.raw ?? legacy.content, { raw: legacy.raw !== undefined, origin: legacy.source === 'import' ? 'import' : 'document' });
}
