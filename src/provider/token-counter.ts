import type { Message } from '../message.ts';

/** How many tokens a message costs in the prompt. */
export type TokenCounter = (message: Message) => number;

/** Text parts are counted; any other part (an image, audio) as this many tokens. */
const NON_TEXT_PART_TOKENS = 85;
/** Per message and per tool call, the framing the chat format adds (the OpenAI cookbook's 3). */
const FRAMING_TOKENS = 3;
/**
 * The longest run of non-space characters encoded in one piece. js-tiktoken merges a piece's
 * byte pairs in time quadratic in its length: one pasted 2 KB string without spaces (base64, a
 * hash dump, 'kkkk...') cost ~0.5 s per count. Longer runs are encoded in slices of this length:
 * a cut moves the count by at most one token per slice (85 of o200k's 200k tokens are longer
 * than 64 bytes, all runs of one symbol), and the worst case stays near 15 µs a character.
 */
const LONGEST_PIECE = 64;
const LONG_RUN = new RegExp(`\\S{${LONGEST_PIECE + 1},}`, 'g');

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
    const encoded = (text: string): number => (text ? encoder.encode(text, [], []).length : 0);
    const count = memoized((text) => sliced(text, encoded));
    return (message: Message): number => countWith(count, message);
  })();
  return loading;
}

/**
 * Texts counted lately, up to MEMO_CHARS characters in all (~8 MB), forgotten all at once when
 * full. A chat turn asks whether its session's summary is due, which counts every row since the
 * last summary: without the memo each turn re-encoded them all (a turn's CPU grew with its
 * session, 0.4 -> 9 ms a turn at 100 sessions of 100 turns).
 */
const MEMO_CHARS = 4_000_000;
const MEMO_LONGEST = 16_384;

export function memoized(count: (text: string) => number): (text: string) => number {
  const memo = new Map<string, number>();
  let chars = 0;
  return (text) => {
    if (text.length > MEMO_LONGEST) return count(text);
    let n = memo.get(text);
    if (n === undefined) {
      n = count(text);
      if (chars + text.length > MEMO_CHARS) {
        memo.clear();
        chars = 0;
      }
      memo.set(text, n);
      chars += text.length;
    }
    return n;
  };
}

/** `encode` over `text`, each run of non-space characters longer than LONGEST_PIECE in slices. */
function sliced(text: string, encode: (text: string) => number): number {
  if (text.length <= LONGEST_PIECE) return encode(text);
  let n = 0;
  let from = 0;
  for (const run of text.matchAll(LONG_RUN)) {
    n += encode(text.slice(from, run.index));
    for (let at = run.index; at < run.index + run[0].length; at += LONGEST_PIECE) {
      n += encode(text.slice(at, Math.min(at + LONGEST_PIECE, run.index + run[0].length)));
    }
    from = run.index + run[0].length;
  }
  return n + encode(text.slice(from));
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
