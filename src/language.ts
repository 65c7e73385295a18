/**
 * The language of the texts Mnemo itself writes for a conversation: the agent's system prompt,
 * the title prompt and offline titles (the sessions index's too), the offline fallback's reply,
 * Mnemo's own tools (descriptions and answers), the facts' extraction and judge prompts, and the
 * summaries' prompts and extractive labels. It never touches what users or the model write, nor
 * the Demo's six tools, whose texts are the Demo's own (English) in both. `'zh'` (the default)
 * is the Agent Memory Demo's Chinese, unchanged, so Demo clients see exactly the Demo; `'en'` is
 * the same rules in English.
 */
import { InvalidInputError } from './errors.ts';

/**
 * The language of Mnemo's own texts (see above): `'zh'` (the Demo's Chinese, the default) or
 * `'en'`.
 */
export type Language = 'zh' | 'en';

export const LANGUAGES: readonly Language[] = ['zh', 'en'];

export const DEFAULT_LANGUAGE: Language = 'zh';

export function isLanguage(value: unknown): value is Language {
  return value === 'zh' || value === 'en';
}

/** `value` as a Language, else `InvalidInputError` `invalid_option` naming the choices. */
export function assertLanguage(value: unknown, what = 'language'): Language {
  if (isLanguage(value)) return value;
  throw new InvalidInputError('invalid_option', `${what} must be one of ${LANGUAGES.join(', ')}, got ${JSON.stringify(value)}`);
}
