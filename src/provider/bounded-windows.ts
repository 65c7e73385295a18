import type { MessageLog } from '../memory/contract/message-log.ts';
import type { Message } from '../message.ts';
import { readBackwards } from './history-reader.ts';
import type { TokenCounter } from './token-counter.ts';
import { pairToolCalls } from './pair-tool-calls.ts';

/**
 * The two windows read from a `MessageLog` instead of computed over the whole history: equal
 * to `safeWindow(await log.get(id), n)` and `tokenWindow(await log.get(id), maxTokens, count)`
 * (property tests hold them so on random histories), at a cost that does not grow with the
 * conversation: the system messages come from the log's index (`systemMessages`), the rest is
 * read backwards only as far as the window reaches.
 */
export async function readSafeWindow(log: MessageLog, conversationId: string, n: number): Promise<Message[]> {
  const newestFirst: Message[] = [];
  outer: for await (const page of readBackwards(log, conversationId, n + 1)) {
    for (let i = page.length - 1; i >= 0; i--) {
      const m = page[i]!;
      if (m.role === 'system') continue;
      newestFirst.push(m);
      if (newestFirst.length === n) break outer;
    }
  }
  const body = newestFirst.reverse();
  let start = 0;
  while (start < body.length && body[start]!.role === 'tool') start++;
  const systems = (await log.systemMessages(conversationId)).map((r) => r.message);
  return [...systems, ...body.slice(start)];
}

export async function readTokenWindow(log: MessageLog, conversationId: string, maxTokens: number, count: TokenCounter): Promise<Message[]> {
  const systems = (await log.systemMessages(conversationId)).map((r) => r.message);
  let budget = maxTokens - systems.reduce((sum, m) => sum + count(m), 0);
  /** Whole turns kept, newest first. */
  const kept: Message[][] = [];
  /** The turn being read, newest message first, and its cost so far. */
  let turn: Message[] = [];
  let cost = 0;
  // The newest turn is always kept; an older one only if it fits. Once a partial older turn is
  // over budget it cannot fit, so reading stops there.
  const overBudget = () => kept.length > 0 && cost > budget;
  const close = (): boolean => {
    if (overBudget()) return false;
    budget -= cost;
    kept.push(turn.reverse());
    turn = [];
    cost = 0;
    return true;
  };
  let stopped = false;
  outer: for await (const page of readBackwards(log, conversationId, 64)) {
    for (let i = page.length - 1; i >= 0; i--) {
      const m = page[i]!;
      if (m.role === 'system') continue;
      turn.push(m);
      cost += count(m);
      if (m.role === 'user') {
        if (!close()) {
          stopped = true;
          break outer;
        }
      } else if (overBudget()) {
        stopped = true;
        break outer;
      }
    }
  }
  // Messages before the first user message form a turn of their own.
  if (!stopped && turn.length > 0) close();
  return [...systems, ...pairToolCalls(kept.reverse().flat())];
}
