import type { Message } from '../message.ts';

/** How many tokens a message costs in the prompt. */
export type TokenCounter = (message: Message) => number;

/** Text parts are counted; any other part (an image, audio) as this many tokens. */
const NON_TEXT_PART_TOKENS = 85;
/** Per message and per tool call, the framing the chat format adds (the OpenAI cookbook's 3). */
const FRAMING_TOKENS = 3;

let loading: Promise<TokenCounter> | undefined;

/**
 * The default counter: the `o200k_base` tokenizer (GPT-4o and later), loaded on first use
 * from js-tiktoken's bundled ranks (2 MB of JavaScript, parsed once per process; no network).
 * It estimates the prompt cost the way OpenAI's cookbook does: framing per message, plus
 * role, name, text content, tool-call names and arguments, and the tool call id.
 */
export function o200kTokenCounter(): Promise<TokenCounter> {
  loading ??= (async () => {
    const [{ Tiktoken }, ranks] = await Promise.all([
      import('js-tiktoken/lite'),
      import('js-tiktoken/ranks/o200k_base'),
    ]);
    const encoder = new Tiktoken(ranks.default);
    // Special-token text inside a message is ordinary text: never throw on it.
    const count = (text: string): number => (text ? encoder.encode(text, [], []).length : 0);
    return (message: Message): number => countWith(count, message);
  })();
  return loading;
}

function countWith(count: (text: string) => number, m: Message): number {
  let n = FRAMING_TOKENS + count(m.role) + count(m.name ?? '');
  if (typeof m.content === 'string') n += count(m.content);
  else if (Array.isArray(m.content)) {
    for (const part of m.content) {
      n += part.type === 'text' && typeof part['text'] === 'string' ? count(part['text']) : NON_TEXT_PART_TOKENS;
    }
  }
  if (m.role === 'assistant') {
    for (const tc of m.tool_calls ?? []) {
      n += FRAMING_TOKENS + count(tc.function.name) + count(tc.function.arguments);
    }
  }
  if (m.role === 'tool') n += count(m.tool_call_id);
  return n;
}
