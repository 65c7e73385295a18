import type { LlmService } from '../../llm/llm-service.ts';

/**
 * A session's title, made once from its first turn (reference §5.4).
 * - Offline: the first 12 code points of the trimmed message (astral characters are not
 *   split), `新对话` when the message is blank.
 * - With a model: a short title asked of it at temperature 0 (as the demo does) from the
 *   first message and reply, trimmed, line breaks removed, cut to 12 code points; an empty
 *   answer or any error (an abort included) falls back to the offline title.
 * The result is trimmed again, `新对话` when blank (as the demo's index writer does).
 */
export const UNTITLED = '新对话';
const TITLE_LENGTH = 12;

export function offlineTitle(userMessage: string): string {
  return finish(userMessage.trim() || UNTITLED);
}

export async function generateTitle(
  llm: LlmService | undefined,
  userMessage: string,
  assistantReply: string,
  signal?: AbortSignal,
): Promise<string> {
  if (!llm) return offlineTitle(userMessage);
  try {
    const prompt =
      '请为下面这段对话起一个简短的中文标题，不超过12个字，不要标点符号，也不要引号，只输出标题本身。\n' +
      `用户: ${userMessage}\n助手: ${assistantReply}`;
    const response = await llm.chat([{ role: 'user', content: prompt }], { temperature: 0, ...(signal ? { signal } : {}) });
    const title = (response.content ?? '').trim().replace(/[\r\n]/g, '');
    return title === '' ? offlineTitle(userMessage) : finish(title);
  } catch {
    return offlineTitle(userMessage);
  }
}

function finish(text: string): string {
  return Array.from(text).slice(0, TITLE_LENGTH).join('').trim() || UNTITLED;
}
