import type { NewDailyRecord } from '../records/records.ts';
import type { LongTermRecord } from '../records/records.ts';
import { docRef } from './doc-numbers.ts';
import { longTermLines } from './documents.ts';
import { makeSnippet } from './snippet.ts';

/**
 * One hit of ranked recall (`recall.search`), the same whichever engine ranked it: a session
 * row (found through its daily mirror, or its own document when no daily row holds it), a
 * daily row no session wrote, or a line of long-term memory, with a snippet around the first
 * query term it holds.
 */
export interface SearchHit {
  /** The session the row belongs to; `null` for a daily row no session wrote, and for long-term memory. */
  sessionId: string | null;
  /** The anchor: the session row id (`sessionWindow`), else the daily id, or the long-term line (from 1). */
  messageId: number;
  /** The row's day (`YYYY-MM-DD`), or the long-term version's. */
  day: string;
  /**
   * Its score (BM25, or the fused score with `ranking: 'hybrid'`), rounded to 4 decimals; higher is
   * better.
   */
  score: number;
  /** Text around the first query term it holds. */
  snippet: string;
  /** `session`: a session row; `daily`: a daily row without a session; `long_term`: a line of long-term memory. */
  source: 'session' | 'daily' | 'long_term';
  /** The row's role; `memory` for long-term memory. */
  role: string;
  /** The row's time (local wall time), or the long-term version's. */
  ts: string;
  /** The row's anchor in its day (`dailyWindow`); absent for long-term memory, and for a
   * session row no daily row holds (an imported session without its daily files). */
  dailyMessageId?: number;
}

/** The hit of document `doc` (`row`: its daily or session row; `longTerm`: the newest document version). */
export function hitOf(doc: number, score: number, row: NewDailyRecord | undefined, longTerm: LongTermRecord | undefined, wanted: ReadonlySet<string>): SearchHit | undefined {
  const ref = docRef(doc);
  if (ref.kind === 'long_term') {
    const line = longTerm === undefined ? undefined : longTermLines(longTerm.content).find((l) => l.line === ref.line);
    if (line === undefined || longTerm === undefined) return undefined;
    return { sessionId: null, messageId: ref.line, day: longTerm.ts.slice(0, 10), score, snippet: makeSnippet(line.text, wanted), source: 'long_term', role: 'memory', ts: longTerm.ts };
  }
  if (row === undefined) return undefined;
  const inSession = row.sessionId !== null && row.sessionMessageId !== null;
  return {
    sessionId: row.sessionId,
    messageId: inSession ? row.sessionMessageId! : row.id!,
    day: row.day,
    score,
    snippet: snippetOf(row, wanted),
    source: inSession ? 'session' : 'daily',
    role: row.role,
    ts: row.ts,
    ...(row.id === undefined ? {} : { dailyMessageId: row.id }),
  };
}

/** Around a query term of the content, else of a tool call's input or output, else the content's start. */
export function snippetOf(row: Pick<NewDailyRecord, 'content' | 'toolCalls'>, wanted: ReadonlySet<string>): string {
  const fromContent = makeSnippet(row.content, wanted, true);
  if (fromContent !== '' || !row.toolCalls?.length) return fromContent || makeSnippet(row.content, wanted);
  for (const call of row.toolCalls) {
    for (const part of [call.input, call.output]) {
      const s = makeSnippet(part, wanted, true);
      if (s !== '') return `${call.name}: ${s}`;
    }
  }
  return makeSnippet(row.content, wanted);
}
