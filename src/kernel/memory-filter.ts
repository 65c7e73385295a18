import type { ChatMemory } from '../memory/contract/chat-memory.ts';
import { conversationId } from './context.ts';
import { createFilter, type Filter } from './filter.ts';
import { fromResponse } from './from-response.ts';

/**
 * The kernel-level memory (beamai's `beamai_memory_filter`). Put it FIRST in the filter list
 * (outermost). Around each chat call, with the context's conversation id:
 * 1. store the request's messages (the delta: the new user message, or the tool results);
 * 2. read the conversation's full history (which now ends with the delta);
 * 3. REPLACE the request's messages with it and call the inner layers: history can never be
 *    prepended twice, so there is no "already in the prompt" check;
 * 4. store the reply as `fromResponse` makes it (nothing for a null reply; tool calls win
 *    over text).
 * Without a conversation id it passes the request through and touches nothing.
 * On an LLM error the delta is already stored and no reply is.
 * Re-entry: a filter outside this one that calls `next` twice stores the delta twice; that is
 * why memory goes first. There is no window here: the full history is sent.
 */
export function memoryFilter(store: ChatMemory): Filter {
  const filter = createFilter('memory', {
    async aroundChat(request, _state, next) {
      const id = conversationId(request.context);
      if (id === undefined) return next(request);
      await store.add(id, request.messages);
      const history = await store.get(id);
      const result = await next({ ...request, messages: history });
      const reply = fromResponse(result.response);
      if (reply) await store.add(id, [reply]);
      return result;
    },
  });
  return Object.freeze({ ...filter, memory: store });
}
