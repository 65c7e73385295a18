import { InvalidInputError } from '../../errors.ts';

/**
 * The checks of a fact's text, key and tags at the boundary (API, tools, extraction): a bad one
 * is refused with `InvalidInputError` (`invalid_message`) before anything is read or written.
 */

/** Longest fact text, in characters (a fact is a sentence, not a document). */
export const MAX_FACT_CHARS = 2_000;
const MAX_KEY_CHARS = 200;

/** The trimmed text. */
export function checkFactText(text: unknown, field = 'text'): string {
  if (typeof text !== 'string' || text.trim() === '') {
    throw new InvalidInputError('invalid_message', `${field} must be a non-empty string`, { field });
  }
  if ([...text].length > MAX_FACT_CHARS) {
    throw new InvalidInputError('invalid_message', `${field} must be at most ${MAX_FACT_CHARS} characters`, { field });
  }
  return text.trim();
}

export function checkFactKey(key: unknown): string | undefined {
  if (key === undefined || key === null || key === '') return undefined;
  if (typeof key !== 'string' || key.trim() === '' || [...key].length > MAX_KEY_CHARS || /\p{Cc}/u.test(key)) {
    throw new InvalidInputError('invalid_message', `key must be a string of 1-${MAX_KEY_CHARS} characters without control characters`, { field: 'key' });
  }
  return key.trim();
}

export function checkTags(tags: unknown): string[] | undefined {
  if (tags === undefined) return undefined;
  if (!Array.isArray(tags) || tags.some((t) => typeof t !== 'string' || t.length > 100) || tags.length > 50) {
    throw new InvalidInputError('invalid_message', 'tags must be at most 50 strings of at most 100 characters', { field: 'tags' });
  }
  return [...new Set(tags.map((t: string) => t.trim()).filter((t) => t !== ''))];
}

export function checkVersion(version: unknown): number {
  if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 1) {
    throw new InvalidInputError('invalid_message', 'version must be an integer >= 1', { field: 'version' });
  }
  return version;
}

export function checkFactId(id: unknown): string {
  if (typeof id !== 'string' || id === '') throw new InvalidInputError('invalid_id', 'a memory id is a string like m12', { field: 'id' });
  return id;
}
