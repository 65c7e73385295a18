import { DEFAULT_LANGUAGE, type Language } from '../../language.ts';
import type { LlmService } from '../../llm/llm-service.ts';
import type { TraceContext } from '../../telemetry/tracing.ts';

/**
 * A session's title, made once from its first turn (reference §5.4), in the turn's language.
 * - Offline: from the trimmed message, the language's untitled title (`新对话`, `New chat`)
 *   when it is blank.
 * - With a model: a short title asked of it at temperature 0 (as the demo does) from the
 *   first message and reply, in the language's words, trimmed, line breaks removed; an empty
 *   answer or any error (an abort included) falls back to the offline title.
 * Then cut to fit: in Chinese the first 12 code points (the Demo's cut, exactly); in English a
 * short phrase, its whitespace runs made single spaces, kept whole up to 40 code points and
 * else cut at the last space that keeps it within 40 (trailing `,;:` and dashes dropped), so
 * "Hi! I like espresso and keep a small machine" is "Hi! I like espresso and keep a small";
 * one word longer than 40 is cut at 40. Astral characters are never split.
 * The result is trimmed again, untitled when blank (as the demo's index writer does).
 * `UNTITLED` is the Chinese one: what the session index shows for an entry with no title.
 */
export const UNTITLED = '新对话';

const UNTITLED_IN: Record<Language, string> = { zh: UNTITLED, en: 'New chat' };
const TITLE_LENGTH: Record<Language, number> = { zh: 12, en: 40 };

function titlePrompt(language: Language, userMessage: string, assistantReply: string): string {
  return language === 'zh'
    ? '请为下面这段对话起一个简短的中文标题，不超过12个字，不要标点符号，也不要引号，只输出标题本身。\n' +
        `用户: ${userMessage}\n助手: ${assistantReply}`
    : 'Give the conversation below a short title of at most 6 words, with no punctuation and no quotes. Output only the title itself.\n' +
        `User: ${userMessage}\nAssistant: ${assistantReply}`;
}

/** The title of a session with none, in `language` (`新对话` in Chinese, the Demo's). */
export function untitled(language: Language = DEFAULT_LANGUAGE): string {
  return UNTITLED_IN[language];
}

export function offlineTitle(userMessage: string, language: Language = DEFAULT_LANGUAGE): string {
  return finish(userMessage.trim() || UNTITLED_IN[language], language);
}

export async function generateTitle(
  llm: LlmService | undefined,
  userMessage: string,
  assistantReply: string,
  signal?: AbortSignal,
  language: Language = DEFAULT_LANGUAGE,
  traceContext?: TraceContext,
): Promise<string> {
  if (!llm) return offlineTitle(userMessage, language);
  try {
    const prompt = titlePrompt(language, userMessage, assistantReply);
    const response = await llm.chat([{ role: 'user', content: prompt }], { temperature: 0, ...(signal ? { signal } : {}), ...(traceContext ? { traceContext } : {}) });
    const title = (response.content ?? '').trim().replace(/[\r\n]/g, '');
    return title === '' ? offlineTitle(userMessage, language) : finish(title, language);
  } catch {
    return offlineTitle(userMessage, language);
  }
}

function finish(text: string, language: Language): string {
  const cut = language === 'zh' ? Array.from(text).slice(0, TITLE_LENGTH.zh).join('') : phrase(text.replace(/\s+/gu, ' ').trim(), TITLE_LENGTH.en);
  return cut.trim() || UNTITLED_IN[language];
}

/** `text` whole if it has at most `max` code points, else cut at the last space within them. */
function phrase(text: string, max: number): string {
  const chars = Array.from(text);
  if (chars.length <= max) return text;
  // chars[max] is the first one left out: a space there ends the phrase at max exactly.
  let space = max;
  while (space > 0 && chars[space] !== ' ') space--;
  if (space === 0) return chars.slice(0, max).join('');
  return chars.slice(0, space).join('').replace(/[\s,;:\-\u2013\u2014]+$/u, '');
}
