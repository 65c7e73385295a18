import type { Language } from '../language.ts';
import type { Message } from '../message.ts';
import type { TokenCounter } from './token-counter.ts';

/**
 * The offline summary (no model): the previous summary's lines, then one line per user message
 * and per assistant reply with text, `User: {first sentence}` / `Assistant: {first sentence}`
 * (a sentence ends at `.`, `!`, `?`, `。`, `！`, `？` or a line break; at most 200 characters);
 * in Chinese `用户：{…}` / `助手：{…}`.
 * Tool calls and results are left out. Bounded to `maxTokens`: the OLDEST lines go first, so
 * the summary keeps the latest part of the conversation when it has to shed some.
 * Deterministic, so the same history always gives the same summary.
 */
export function extractiveSummary(
  previous: string | undefined,
  messages: readonly Message[],
  maxTokens: number,
  count: TokenCounter,
  language: Language = 'en',
): string {
  const [user, assistant] = language === 'zh' ? ['用户：', '助手：'] : ['User: ', 'Assistant: '];
  const lines = previous ? previous.split('\n').filter((l) => l !== '') : [];
  for (const m of messages) {
    if (m.role !== 'user' && m.role !== 'assistant') continue;
    const sentence = firstSentence(textOf(m));
    if (sentence === '') continue;
    lines.push(`${m.role === 'user' ? user : assistant}${sentence}`);
  }
  return keepNewestLines(lines, maxTokens, count);
}

const MAX_SENTENCE_CHARS = 200;

export function firstSentence(text: string): string {
  const trimmed = text.trim();
  const end = trimmed.search(/[.!?。！？](\s|$)|[。！？]|\n/u);
  const sentence = (end < 0 ? trimmed : trimmed.slice(0, end + 1)).trim();
  const chars = [...sentence];
  return chars.length <= MAX_SENTENCE_CHARS ? sentence : `${chars.slice(0, MAX_SENTENCE_CHARS - 1).join('')}…`;
}

/** Drops lines from the head until the text costs at most `maxTokens`. */
function keepNewestLines(lines: string[], maxTokens: number, count: TokenCounter): string {
  const cost = lines.map((l) => textTokens(l, count) + 1);
  let total = cost.reduce((a, b) => a + b, 0);
  let first = 0;
  while (first < lines.length - 1 && total > maxTokens) total -= cost[first++]!;
  const kept = lines.slice(first).join('\n');
  return total > maxTokens ? clipToTokens(kept, maxTokens, count) : kept;
}

/** Tokens of a text alone (a message's framing subtracted). */
export function textTokens(text: string, count: TokenCounter): number {
  return count({ role: 'assistant', content: text }) - count({ role: 'assistant', content: '' });
}

/** The longest prefix of `text` (by code points) costing at most `maxTokens`, ending in `…` when cut. */
export function clipToTokens(text: string, maxTokens: number, count: TokenCounter): string {
  if (textTokens(text, count) <= maxTokens) return text;
  const chars = [...text];
  let lo = 0;
  let hi = chars.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (textTokens(`${chars.slice(0, mid).join('')}…`, count) <= maxTokens) lo = mid;
    else hi = mid - 1;
  }
  return lo === 0 ? '' : `${chars.slice(0, lo).join('')}…`;
}

export function textOf(m: Message): string {
  if (typeof m.content === 'string') return m.content;
  if (m.content === null) return '';
  return m.content.map((part) => (part.type === 'text' && typeof part['text'] === 'string' ? part['text'] : '')).join('');
}
