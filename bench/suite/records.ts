import type { BenchMessage } from './types.ts';

/**
 * The records every adapter stores: deterministic chat-like messages (a seeded PRNG over a small
 * vocabulary), alternating user and assistant, 40-400 characters, so every store sees exactly
 * the same bytes. Keyword corpora plant two words: `COMMON_KEYWORD` in every 20th message (a
 * "most recent 20" search stops early) and `RARE_KEYWORD` only in message 3 (every search must
 * scan the whole conversation to find it).
 */
export const COMMON_KEYWORD = 'mango';
export const RARE_KEYWORD = 'kiwifruit';

const WORDS = (
  'the a memory agent session daily note remember user assistant reply tool call result window ' +
  'anchor search keyword durable commit flush actor supervisor restart message history context ' +
  'prompt token budget summary title today yesterday meeting project deadline invoice travel ' +
  'flight hotel coffee tea birthday gift music concert weather rain sun walk run swim book read ' +
  'write code test deploy server client request response latency throughput disk page tree ' +
  'branch leaf key value store table index scan range order stable fast slow small large'
).split(' ');

/** mulberry32: tiny, fast, and the same sequence on every run. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Message `index` (0-based) of conversation `conversation`. */
export function messageAt(conversation: number, index: number): BenchMessage {
  const rand = prng(conversation * 1_000_003 + index * 7919 + 17);
  const target = 40 + Math.floor(rand() * 360);
  const words: string[] = [];
  let length = 0;
  while (length < target) {
    const w = WORDS[Math.floor(rand() * WORDS.length)]!;
    words.push(w);
    length += w.length + 1;
  }
  if (index % 20 === 19) words.splice(Math.floor(words.length / 2), 0, COMMON_KEYWORD);
  if (index === 3) words.splice(1, 0, RARE_KEYWORD);
  return { role: index % 2 === 0 ? 'user' : 'assistant', content: words.join(' ') };
}

export function messagesOf(conversation: number, from: number, count: number): BenchMessage[] {
  const out: BenchMessage[] = [];
  for (let i = 0; i < count; i++) out.push(messageAt(conversation, from + i));
  return out;
}

/** Conversation ids valid for every store (recall's id rule is the strictest: `[A-Za-z0-9_-]`). */
export function conversationName(prefix: string, index: number): string {
  return `${prefix}-${index}`;
}
