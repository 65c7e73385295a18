import { InvalidInputError } from '../errors.ts';
import type { ChatMemory } from '../memory/contract/chat-memory.ts';
import type { Message } from '../message.ts';
import { readSafeWindow } from '../provider/bounded-windows.ts';
import { isMessageLog } from '../provider/history-reader.ts';
import { safeWindow } from '../provider/safe-window.ts';
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
 * why memory goes first.
 *
 * What is sent: by default the full history, as in beamai (whose memory filter has no window),
 * so its cost grows with the conversation. Beyond beamai, `{ window: n }` sends
 * `safeWindow(history, n)` instead (system messages hoisted, the last n others, leading orphan
 * tool results dropped); over a `MessageLog` that window is read from the end of the log
 * (`readSafeWindow`), so a call costs the same at 100 messages and at 100,000.
 */
export interface MemoryFilterOptions {
  /** Send only this many non-system messages (an integer > 0); default: the full history. */
  window?: number;
}

/**
 * The memory filter over `store` (see `MemoryFilterOptions` for what it does around each call). Put
 * it first in `createKernel({ filters })`; it switches `invoke` to delta mode.
 *
 * @throws `InvalidInputError` `invalid_option` for a `window` that is not an integer > 0.
 */
export function memoryFilter(store: ChatMemory, options: MemoryFilterOptions = {}): Filter {
  const { window } = options;
  if (window !== undefined && (!Number.isInteger(window) || window <= 0)) {
    throw new InvalidInputError('invalid_option', `memoryFilter window must be an integer > 0, got ${String(window)}`, { option: 'window' });
  }
  const read = (id: string): Promise<Message[]> => {
    if (window === undefined) return store.get(id);
    if (isMessageLog(store)) return readSafeWindow(store, id, window);
    return store.get(id).then((all) => safeWindow(all, window));
  };
  const filter = createFilter('memory', {
    async aroundChat(request, _state, next) {
      const id = conversationId(request.context);
      if (id === undefined) return next(request);
      await store.add(id, request.messages);
      const history = await read(id);
      const result = await next({ ...request, messages: history });
      const reply = fromResponse(result.response);
      if (reply) await store.add(id, [reply]);
      return result;
    },
  });
  return Object.freeze({ ...filter, memory: store });
}
