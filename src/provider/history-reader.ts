import type { ChatMemory } from '../memory/contract/chat-memory.ts';
import type { MessageLog } from '../memory/contract/message-log.ts';
import type { Message } from '../message.ts';

/**
 * Reading a conversation from its end, for policies that send a bounded part of it (the
 * windows) and so must not pay for the whole history each turn. Over a `MessageLog` (a store
 * with `tail`, `range` and `systemMessages`), `readBackwards` yields pages newest first, each
 * page ascending: a `tail(firstPage)`, then `range`s just below it of doubling size (capped),
 * until the start. A caller stops when it has what it needs, so it pays for what it reads.
 * A plain `ChatMemory` has no ranges: its callers keep the whole-history path.
 */
export function isMessageLog(store: ChatMemory): store is MessageLog {
  const s = store as Partial<MessageLog>;
  return typeof s.tail === 'function' && typeof s.range === 'function' && typeof s.systemMessages === 'function';
}

const MAX_PAGE = 4096;

export async function* readBackwards(log: MessageLog, conversationId: string, firstPage: number): AsyncGenerator<Message[]> {
  let size = Math.max(1, Math.min(firstPage, MAX_PAGE));
  let page = await log.tail(conversationId, size);
  for (;;) {
    if (page.length === 0) return;
    yield page.map((r) => r.message);
    const below = page[0]!.message_id - 1;
    if (page.length < size || below < 1) return;
    size = Math.min(size * 2, MAX_PAGE);
    page = await log.range(conversationId, { from: Math.max(1, below - size + 1), to: below });
  }
}

/**
 * The last turn: from the last user message to the end (the whole history when it has no user
 * message), system messages included. Where a run's tool calls can still lack results.
 */
export async function readLastTurn(log: MessageLog, conversationId: string): Promise<Message[]> {
  const pages: Message[][] = [];
  for await (const page of readBackwards(log, conversationId, 8)) {
    const user = page.findLastIndex((m) => m.role === 'user');
    if (user >= 0) {
      pages.push(page.slice(user));
      break;
    }
    pages.push(page);
  }
  return pages.reverse().flat();
}
