/**
 * The language of the texts Mnemo itself writes for a conversation: the agent's system prompt,
 * the title prompt and offline titles (the sessions index's too), the offline fallback's reply,
 * Mnemo's own tools (descriptions and answers), the facts' extraction and judge prompts, and the
 * summaries' prompts and extractive labels. It never touches what users or the model write, nor
 * the Demo's six tools, whose texts are the Demo's own (English) in both. `'zh'` (the library's
 * default) is the Agent Memory Demo's Chinese, unchanged, so Demo clients see exactly the Demo;
 * `'en'` is the same rules in English.
 *
 * `'auto'` (a setting, not a language; the `mnemo` command's default) picks one per text from
 * what it is about (`languageOf`): Chinese when the user's message has a Han character, or
 * when the turn's memory context says `中文` (the Demo's own rule for switching to Chinese:
 * a user who asked for Chinese keeps getting it while that request is in the context); else
 * English. A text about no message (a listing's untitled entry) is in English.
 */
import { InvalidInputError } from './errors.ts';

/**
 * The language of Mnemo's own texts (see above): `'zh'` (the Demo's Chinese, the default) or
 * `'en'`.
 */
export type Language = 'zh' | 'en';

/** What a service is configured with: a language, or `'auto'` (each turn its own). */
export type LanguageSetting = Language | 'auto';

export const LANGUAGES: readonly Language[] = ['zh', 'en'];

export const LANGUAGE_SETTINGS: readonly LanguageSetting[] = ['zh', 'en', 'auto'];

export const DEFAULT_LANGUAGE: Language = 'zh';

export function isLanguage(value: unknown): value is Language {
  return value === 'zh' || value === 'en';
}

export function isLanguageSetting(value: unknown): value is LanguageSetting {
  return isLanguage(value) || value === 'auto';
}

/** `value` as a Language, else `InvalidInputError` `invalid_option` naming the choices. */
export function assertLanguage(value: unknown, what = 'language'): Language {
  if (isLanguage(value)) return value;
  throw new InvalidInputError('invalid_option', `${what} must be one of ${LANGUAGES.join(', ')}, got ${JSON.stringify(value)}`);
}

/** `value` as a LanguageSetting (`'auto'` too), else `InvalidInputError` `invalid_option`. */
export function assertLanguageSetting(value: unknown, what = 'language'): LanguageSetting {
  if (isLanguageSetting(value)) return value;
  throw new InvalidInputError('invalid_option', `${what} must be one of ${LANGUAGE_SETTINGS.join(', ')}, got ${JSON.stringify(value)}`);
}

const HAN = /\p{Script=Han}/u;

/**
 * The language of what Mnemo writes about `message` under `setting`: the setting itself unless
 * it is `'auto'`; then `'zh'` when `message` has a Han character or `context` (the turn's
 * memory context) contains `中文`, else `'en'`.
 */
export function languageOf(setting: LanguageSetting, message: string, context = ''): Language {
  if (setting !== 'auto') return setting;
  return HAN.test(message) || context.includes('中文') ? 'zh' : 'en';
}
