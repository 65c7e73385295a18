import { InvalidInputError } from '../errors.ts';
import { MAX_CONVERSATION_ID_BYTES } from '../memory/contract/validate-input.ts';

/** node:crypto loads on first use: it is ~25 ms of a cold import (docs/performance-history.md). */
const crypto = () => process.getBuiltinModule('node:crypto');

/**
 * The one id rule for user and session ids (the server checks requests with it too).
 *
 * An id is 1 to 128 Unicode characters (code points), with no control character (`\p{Cc}`),
 * no leading or trailing whitespace, well-formed (no lone surrogate) and no Unicode
 * noncharacter (U+FDD0..U+FDEF, U+xFFFE, U+xFFFF: reserved for internal use; Mnemo closes key
 * ranges with U+10FFFF, so no id may contain it), and not `.` or `..`: URL parsers (browsers,
 * `fetch`) remove such a path segment, even percent-encoded, so no route could reach that id.
 * So emails, `alice.smith`, `...`, `张三`, `a b` and `a/b` are ids. A bad id is refused with `InvalidInputError('invalid_id')` before anything is
 * read or written; surrounding whitespace is not trimmed (`' a'` is refused, not renamed).
 *
 * Ids are never paths. In LMDB they are whole components of array keys, which lmdb-js
 * separates with a 0 byte, and no id holds NUL, so `[user, session]` pairs never collide. Where
 * they are joined into one string (the session's MessageLog conversation id) each part is
 * escaped (`sessionConversationId`), and where they name a folder or file they are encoded
 * (`folder-name.ts`).
 */
export const ID_MAX_CHARS = 128;
/** The id rule in one line, as error messages and the HTTP API's schemas say it. */
export const ID_RULE = `1-${ID_MAX_CHARS} characters, no control characters, no leading or trailing space, not . or ..`;

const CONTROL = /\p{Cc}/u;
const EDGE_SPACE = /^\s|\s$/u;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const NONCHARACTER = /[\uFDD0-\uFDEF]|[\uFFFE\uFFFF\u{1FFFE}\u{1FFFF}\u{2FFFE}\u{2FFFF}\u{3FFFE}\u{3FFFF}\u{4FFFE}\u{4FFFF}\u{5FFFE}\u{5FFFF}\u{6FFFE}\u{6FFFF}\u{7FFFE}\u{7FFFF}\u{8FFFE}\u{8FFFF}\u{9FFFE}\u{9FFFF}\u{AFFFE}\u{AFFFF}\u{BFFFE}\u{BFFFF}\u{CFFFE}\u{CFFFF}\u{DFFFE}\u{DFFFF}\u{EFFFE}\u{EFFFF}\u{FFFFE}\u{FFFFF}\u{10FFFE}\u{10FFFF}]/u;

/** Why `value` is not an id, or `null` when it is one. */
export function idProblem(value: unknown): string | null {
  if (typeof value !== 'string') return `must be a string, got ${typeof value}`;
  if (value === '') return 'must not be empty';
  if (value === '.' || value === '..') return 'must not be . or .. (URLs drop such a path segment)';
  if (LONE_SURROGATE.test(value)) return 'must be well-formed Unicode';
  if ([...value].length > ID_MAX_CHARS) return `must be at most ${ID_MAX_CHARS} characters`;
  if (CONTROL.test(value)) return 'must not contain control characters';
  if (EDGE_SPACE.test(value)) return 'must not start or end with a space';
  if (NONCHARACTER.test(value)) return 'must not contain Unicode noncharacters';
  return null;
}

/** True when `value` is a valid user or session id (the rule above). */
export function isValidId(value: unknown): value is string {
  return idProblem(value) === null;
}

export type IdKind = 'user_id' | 'session_id';

export function assertId(kind: IdKind, value: unknown): string {
  const problem = idProblem(value);
  if (problem === null) return value as string;
  const shown = typeof value === 'string' ? ` (got ${JSON.stringify(value.slice(0, 80))})` : '';
  throw new InvalidInputError('invalid_id', `${kind} ${problem}${shown}; ids are ${ID_RULE}`, { field: kind });
}

export const assertUserId = (value: unknown): string => assertId('user_id', value);
export const assertSessionId = (value: unknown): string => assertId('session_id', value);

/** A fresh session id as the demo makes them: 12 lowercase hex digits. */
export function newSessionId(): string {
  return crypto().randomUUID().replace(/-/g, '').slice(0, 12);
}

/**
 * The MessageLog conversation that holds one session's transcript: `session/{user}/{session}`
 * with `%` and `/` of each part escaped (`%25`, `%2F`), so the split is unambiguous (user `a/b`
 * session `c` is `session/a%2Fb/c`, user `a` session `b/c` is `session/a/b%2Fc`), and ids of
 * the old `[A-Za-z0-9_-]` alphabet keep the conversation ids they always had. Two long ids can
 * exceed the memory layer's 512 UTF-8 bytes: that pair's conversation is
 * `session#{sha256 of JSON [user, session]}` instead (a different prefix, so it never meets an
 * escaped one).
 */
export function sessionConversationId(userId: string, sessionId: string): string {
  const id = `session/${escapePart(userId)}/${escapePart(sessionId)}`;
  if (id.length * 3 <= MAX_CONVERSATION_ID_BYTES || Buffer.byteLength(id, 'utf8') <= MAX_CONVERSATION_ID_BYTES) return id;
  return `session#${crypto().createHash('sha256').update(JSON.stringify([userId, sessionId])).digest('hex')}`;
}

/**
 * What every escaped session conversation of `userId` starts with (`session/{user}/`): a range
 * scan over it finds the user's sessions, indexed or not. A hashed one (`session#...`) has no
 * such prefix: it is found from the user's session ids.
 */
export function sessionConversationPrefix(userId: string): string {
  return `session/${escapePart(userId)}/`;
}

function escapePart(id: string): string {
  return id.replace(/[%/]/g, (c) => (c === '%' ? '%25' : '%2F'));
}
