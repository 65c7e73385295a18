import { InvalidInputError } from '../../errors.ts';
import { DEFAULT_LANGUAGE, type Language } from '../../language.ts';
import type { SessionEntry } from '../records/records.ts';
import { untitled } from './session-title.ts';

/**
 * The sessions list (the Demo's `conversations.json` as its page shows it): listed sessions,
 * newest `updatedAt` first; ties (turns in the same second) keep creation order, as the Demo's
 * stable sort kept file order. `now` stands in for a missing `updatedAt` (imported entries), as
 * the Demo did, and the language's untitled title (`新对话` in Chinese, the Demo's) for a
 * missing title.
 */
export interface SessionSummary {
  /** The session. */
  sessionId: string;
  /** Its title (the language's untitled title when it has none). */
  title: string;
  /** Its last turn, local wall time `YYYY-MM-DDTHH:MM:SS`. */
  updatedAt: string;
}

/** One page of `listSessions`: the next `limit` after `cursor` (opaque). */
export interface SessionsPage {
  /** The sessions of this page, in list order. */
  items: SessionSummary[];
  /** Where the next page starts; `null` after the last. */
  nextCursor: string | null;
}

export function listSessions(entries: readonly SessionEntry[], now: string, language: Language = DEFAULT_LANGUAGE): SessionSummary[] {
  return sorted(entries, now, language).map(summary);
}

/**
 * The sessions in `listSessions`' order, `limit` at a time (keyset paging on `updatedAt` and
 * creation order): a session that gets a turn between two pages moves to the front, so a walk
 * through the pages does not show it again (nor, if it was not shown yet, at all). A cursor that
 * is not one of ours is `InvalidInputError('invalid_cursor')`.
 */
export function listSessionsPage(entries: readonly SessionEntry[], now: string, language: Language, limit: number, cursor?: string): SessionsPage {
  const after = cursor === undefined ? undefined : decodeCursor(cursor);
  const rows = sorted(entries, now, language);
  const start = after === undefined ? 0 : rows.findIndex((r) => r.updatedAt < after[0] || (r.updatedAt === after[0] && r.order > after[1]));
  const page = start < 0 ? [] : rows.slice(start, start + limit);
  const last = page[page.length - 1];
  const more = start >= 0 && start + limit < rows.length;
  return { items: page.map(summary), nextCursor: more && last !== undefined ? encodeCursor(last.updatedAt, last.order) : null };
}

interface Sorted extends SessionSummary {
  order: number;
}

function sorted(entries: readonly SessionEntry[], now: string, language: Language): Sorted[] {
  const none = untitled(language);
  const rows = entries.filter((e) => e.listed).map((e) => ({ sessionId: e.sessionId, title: e.title || none, updatedAt: e.updatedAt || now, order: e.order }));
  return rows.sort((a, b) => (a.updatedAt === b.updatedAt ? a.order - b.order : a.updatedAt < b.updatedAt ? 1 : -1));
}

const summary = ({ sessionId, title, updatedAt }: Sorted): SessionSummary => ({ sessionId, title, updatedAt });

function encodeCursor(updatedAt: string, order: number): string {
  return Buffer.from(JSON.stringify(['s', updatedAt, order])).toString('base64url');
}

function decodeCursor(cursor: string): [string, number] {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    value = undefined;
  }
  if (!Array.isArray(value) || value.length !== 3 || value[0] !== 's' || typeof value[1] !== 'string' || !Number.isSafeInteger(value[2])) {
    throw new InvalidInputError('invalid_cursor', 'cursor is not one this list gave out', { field: 'cursor' });
  }
  return [value[1], value[2] as number];
}
