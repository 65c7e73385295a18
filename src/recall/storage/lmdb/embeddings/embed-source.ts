import type { RecallDbs } from '../recall-dbs.ts';
import { currentLongTerm } from '../long-term-store.ts';
import { docRef } from '../../../search/doc-numbers.ts';
import { docRow } from '../search/doc-rows.ts';
import { longTermLines } from '../../../search/documents.ts';
import { storedRowText } from '../search/search-index.ts';
import type { ItemKind } from './embed-dbs.ts';

/**
 * The text an item stands for NOW: a daily row's or session document's text with its tool
 * calls (what BM25 indexes, search/documents.ts `dailyRowText`), a line of the current long-term
 * document, a current fact's text. `undefined` when it is gone (deleted, rewritten away,
 * superseded): its queue entry is dropped, and a vector of it is never stored. Read only.
 */
export function itemText(dbs: Pick<RecallDbs, 'daily' | 'longTerm' | 'facts' | 'factCurrent' | 'search'>, userId: string, kind: ItemKind, id: number): string | undefined {
  if (kind === 'f') {
    if (dbs.factCurrent.get([userId, id]) === undefined) return undefined;
    const text = dbs.facts.get([userId, id])?.text;
    return text === undefined || text.trim() === '' ? undefined : text;
  }
  const ref = docRef(id);
  if (ref.kind === 'long_term') {
    return longTermLines(currentLongTerm(dbs as RecallDbs, userId)).find((l) => l.line === ref.line)?.text;
  }
  const row = docRow({ daily: dbs.daily, sessionDocs: dbs.search.sessionDocs }, userId, ref);
  if (row === undefined) return undefined;
  const text = storedRowText(row.value);
  return text.trim() === '' ? undefined : text;
}
