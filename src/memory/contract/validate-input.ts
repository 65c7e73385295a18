import { InvalidInputError } from '../../errors.ts';
import { copyJson } from './json-value.ts';
import type { NewEntry, RangeQuery } from './message-log.ts';
import type { Message, Meta } from '../../message.ts';
import { validateMessage } from './validate-message.ts';

/**
 * Validation at the store boundary: every public store method runs its arguments through
 * these before touching storage, so a bad call throws `InvalidInputError` and stores nothing.
 * Validated messages and metadata are detached copies: a caller mutating its objects after
 * `add` returns cannot change what is written.
 */

/**
 * Longest conversation id, in UTF-8 bytes. LMDB keys hold at most 1978 bytes; the message key
 * is `[conversationId, messageId]`, so 512 leaves room for the id and for layers above that
 * prefix their own keys with a conversation id.
 */
export const MAX_CONVERSATION_ID_BYTES = 512;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Non-empty, at most 512 UTF-8 bytes, no NUL, well-formed Unicode (a lone surrogate would be
 * stored as U+FFFD, making two different ids the same key). */
export function validateConversationId(id: unknown): string {
  if (typeof id !== 'string') return invalidId('must be a string');
  if (id === '') invalidId('must not be empty');
  if (id.includes('\u0000')) invalidId('must not contain NUL');
  if (LONE_SURROGATE.test(id)) invalidId('must be well-formed Unicode (lone surrogate)');
  // A UTF-8 character takes at most 3 bytes per UTF-16 unit: short ids need no count.
  if (id.length * 3 > MAX_CONVERSATION_ID_BYTES) {
    const bytes = Buffer.byteLength(id, 'utf8');
    if (bytes > MAX_CONVERSATION_ID_BYTES) invalidId(`is ${bytes} UTF-8 bytes; the limit is ${MAX_CONVERSATION_ID_BYTES}`);
  }
  return id;
}

function invalidId(reason: string): never {
  throw new InvalidInputError('invalid_id', `conversation id ${reason}`, { reason });
}

/** The messages of an `add`, as entries with no metadata. */
export function validateMessages(messages: unknown): CheckedEntry[] {
  if (!Array.isArray(messages)) {
    throw new InvalidInputError('invalid_batch', 'messages must be an array', { reason: 'not an array' });
  }
  const entries = new Array<CheckedEntry>(messages.length);
  for (let i = 0; i < messages.length; i++) entries[i] = { message: validateMessage(messages[i], i), meta: {} };
  return entries;
}

/** A validated entry: its meta is always present (`{}` when none was given). */
export interface CheckedEntry {
  message: Message;
  meta: Meta;
}

export function validateEntries(entries: unknown): CheckedEntry[] {
  if (!Array.isArray(entries)) {
    throw new InvalidInputError('invalid_batch', 'entries must be an array', { reason: 'not an array' });
  }
  return entries.map((entry: unknown, index) => {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry) || !('message' in entry)) {
      throw new InvalidInputError('invalid_batch', `entry ${index} must be an object {message, meta?}`, { index });
    }
    const { message, meta } = entry as NewEntry;
    return { message: validateMessage(message, index), meta: meta === undefined ? {} : validateMeta(meta, index) };
  });
}

function validateMeta(meta: unknown, index: number): Meta {
  const fail = (reason: string): never => {
    throw new InvalidInputError('invalid_message', `entry ${index}: meta ${reason}`, { index, field: 'meta', reason });
  };
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) fail('must be an object');
  const copy = copyJson(meta, 'meta');
  if (!copy.ok) return fail(`is not JSON at ${copy.path}: ${copy.reason}`);
  return copy.value as Meta;
}

/** A range with every bound filled in. */
export type CheckedRange = Required<RangeQuery>;

export function validateRangeQuery(query: unknown): CheckedRange {
  if (query === undefined) return { from: 1, to: Number.MAX_SAFE_INTEGER, limit: Number.MAX_SAFE_INTEGER };
  if (typeof query !== 'object' || query === null) {
    throw new InvalidInputError('invalid_option', 'range query must be an object {from?, to?, limit?}');
  }
  const q = query as RangeQuery;
  return {
    from: count(q.from, 'from', 1),
    to: count(q.to, 'to', Number.MAX_SAFE_INTEGER),
    limit: count(q.limit, 'limit', Number.MAX_SAFE_INTEGER),
  };
}

export function validateTailCount(n: unknown): number {
  return count(n, 'n', undefined);
}

function count(value: unknown, name: string, fallback: number | undefined): number {
  if (value === undefined && fallback !== undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new InvalidInputError('invalid_option', `${name} must be a non-negative integer`, { option: name });
  }
  return value;
}
