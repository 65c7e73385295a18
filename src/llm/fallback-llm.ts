import { DEFAULT_LANGUAGE, type Language } from '../language.ts';
import type { Message } from '../message.ts';
import type { LlmResponse, LlmService } from './llm-service.ts';
import type { LlmStreamEvent } from './llm-service.ts';
import { tracedLlm } from './traced-llm.ts';

/**
 * The offline fallback of the Agent Memory Demo (`FallbackAgent.respond`): deterministic,
 * no network, never calls a tool, never fails.
 *
 * The demo's fallback took two strings, the user message and the memory context. Here they
 * come from the messages the service is sent:
 * - the user message is the text of the LAST user message (`''` when there is none);
 * - the memory context is the text of EVERY message sent (system prompts, history, and the
 *   current user message), one per line. The demo's context also held the session rows, the
 *   current message included, so a message that mentions "中文" flips the reply for its own
 *   turn and for later turns while it is still inside what is sent — as observed there.
 *
 * Reply: if the context contains "中文", or its lowercase form contains "language",
 * `收到：{message}。我会继续用中文回答。`, else `收到：{message}。我已经记录到记忆中。`
 * (full-width ： and 。).
 *
 * `stream` yields the same reply in `fallbackChunks` (a few deltas, each after a turn of the
 * event loop, as a model's would arrive), then `done`.
 *
 * In English (`language: 'en'`; the default is the demo's Chinese): if the context's lowercase
 * form contains "language" or "english", `Got it: {message}. I will keep answering in English.`,
 * else `Got it: {message}. I have saved it to memory.`
 */
export function fallbackLlm(options: { language?: Language } = {}): LlmService {
  const language = options.language ?? DEFAULT_LANGUAGE;
  const llm: LlmService = tracedLlm({
    async chat(messages): Promise<LlmResponse> {
      return { content: fallbackReply(lastUserText(messages), memoryContext(messages), language), finish_reason: 'stop' };
    },
    async *stream(messages, options = {}): AsyncGenerator<LlmStreamEvent> {
      const content = fallbackReply(lastUserText(messages), memoryContext(messages), language);
      for (const delta of fallbackChunks(content)) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        if (options.signal?.aborted) return;
        yield { type: 'text', delta };
      }
      yield { type: 'done', response: { content, finish_reason: 'stop' } };
    },
  }, { provider: 'mnemo', model: 'fallback' });
  fallbacks.add(llm);
  return llm;
}

const fallbacks = new WeakSet<LlmService>();

/** Whether `llm` came from `fallbackLlm()` (its replies are canned: never a summary). */
export function isFallbackLlm(llm: LlmService): boolean {
  return fallbacks.has(llm);
}

/** The offline reply cut into up to 4 deltas of about equal length (whole code points). */
export function fallbackChunks(reply: string): string[] {
  const points = Array.from(reply);
  const size = Math.max(1, Math.ceil(points.length / 4));
  const chunks: string[] = [];
  for (let i = 0; i < points.length; i += size) chunks.push(points.slice(i, i + size).join(''));
  return chunks;
}

/** The demo's `FallbackAgent.respond(user_message, memory_context)`, exactly (in Chinese). */
export function fallbackReply(userMessage: string, memoryContext: string, language: Language = DEFAULT_LANGUAGE): string {
  if (language === 'en') {
    const lower = memoryContext.toLowerCase();
    return lower.includes('language') || lower.includes('english')
      ? `Got it: ${userMessage}. I will keep answering in English.`
      : `Got it: ${userMessage}. I have saved it to memory.`;
  }
  const chinese = memoryContext.includes('中文') || memoryContext.toLowerCase().includes('language');
  return chinese
    ? `收到：${userMessage}。我会继续用中文回答。`
    : `收到：${userMessage}。我已经记录到记忆中。`;
}

function lastUserText(messages: readonly Message[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role === 'user') return textOf(m);
  }
  return '';
}

function memoryContext(messages: readonly Message[]): string {
  return messages.map(textOf).join('\n');
}

function textOf(m: Message): string {
  if (typeof m.content === 'string') return m.content;
  if (m.content === null) return '';
  return m.content
    .map((part) => (part.type === 'text' && typeof part['text'] === 'string' ? part['text'] : ''))
    .join('');
}
