import { InvalidInputError } from '../errors.ts';
import { RecallLimitError } from './recall-errors.ts';
import { queryTerms } from './search/documents.ts';
import type { SessionEntry } from './records/records.ts';

/**
 * What one user can make the layered memory hold or do, so that no user (a script, a runaway
 * client) can grow a list or a query without bound. The defaults are far past normal use; each
 * refusal is a `RecallLimitError` with a stable code, thrown before anything is written:
 *
 * - `sessionsPerUser` (default 10,000): a chat turn that would start a new session (its first
 *   turn), or a fork, when the user already has that many sessions: `session_limit`. Checked
 *   when the turn starts, so turns starting new sessions at the very same moment can pass it by
 *   the few of them that run at once.
 * - `forksPerSession` (default 1,000): a fork of a session that already has that many direct
 *   forks (deleted ones not counted): `fork_limit`.
 * - `searchTerms` (default 128): a `search` query with more distinct terms (words, CJK bigrams,
 *   after stop words) than that: `search_terms_limit`; each term is one more postings read.
 */
export interface RecallLimits {
  /** Sessions one user may have. Default 10,000. */
  sessionsPerUser?: number;
  /** Direct forks of one session. Default 1,000. */
  forksPerSession?: number;
  /** Distinct terms of one `search` query. Default 128. */
  searchTerms?: number;
}

export const DEFAULT_RECALL_LIMITS: Readonly<Required<RecallLimits>> = {
  sessionsPerUser: 10_000,
  forksPerSession: 1_000,
  searchTerms: 128,
};

/** Every limit, defaults filled in; `invalid_option` for one that is not an integer >= 1. */
export function resolveRecallLimits(limits: RecallLimits | undefined): Readonly<Required<RecallLimits>> {
  const out = { ...DEFAULT_RECALL_LIMITS, ...limits };
  for (const [name, value] of Object.entries(out)) {
    if (!Number.isSafeInteger(value) || value < 1) {
      throw new InvalidInputError('invalid_option', `limits.${name} must be an integer >= 1, got ${String(value)}`, { option: `limits.${name}` });
    }
  }
  return out;
}

/** Refuses a new session of a user who has `max` already (`sessions`: all of theirs, listed or not). */
export function assertRoomForSession(sessions: readonly SessionEntry[], max: number): void {
  if (sessions.length >= max) {
    throw new RecallLimitError('session_limit', max, `this user already has ${max} sessions, the most allowed; delete some first`);
  }
}

/** Refuses a fork of `sessionId` when it has `max` direct forks already. */
export function assertRoomForFork(sessions: readonly SessionEntry[], sessionId: string, max: number): void {
  if (sessions.filter((e) => e.fork?.sessionId === sessionId).length >= max) {
    throw new RecallLimitError('fork_limit', max, `this session already has ${max} forks, the most allowed`);
  }
}

/** Refuses a query of more than `max` distinct terms. */
export function assertSearchTerms(query: unknown, max: number): void {
  if (typeof query !== 'string') return; // the search's own check names it
  const terms = queryTerms(query).length;
  if (terms > max) {
    throw new RecallLimitError('search_terms_limit', max, `the query has ${terms} distinct terms; at most ${max} are searched`);
  }
}
