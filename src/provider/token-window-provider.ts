import type { ChatMemory } from '../memory/contract/chat-memory.ts';
import type { Message } from '../message.ts';
import { pairToolCalls } from './pair-tool-calls.ts';
import type { MemoryProvider } from './memory-provider.ts';
import { InvalidMemoryConfigError } from './provider-errors.ts';
import { isChatMemory } from './is-chat-memory.ts';
import { readTokenWindow } from './bounded-windows.ts';
import { isMessageLog, readLastTurn } from './history-reader.ts';
import { o200kTokenCounter, type TokenCounter } from './token-counter.ts';

/** What `tokenWindowProvider` takes. */
export interface TokenWindowOptions {
  /** Budget for what is sent, system messages included. An integer > 0. */
  maxTokens: number;
  /** Default: the `o200k_base` tokenizer (see `o200kTokenCounter`). */
  countTokens?: TokenCounter;
}

/**
 * A provider like `defaultProvider` whose `prepare` keeps the newest WHOLE TURNS that fit in
 * `maxTokens` (beyond beamai, whose core has no token trimming):
 * - a turn starts at a user message and runs to the next one (user, assistant tool calls,
 *   their tool results, ..., the answer); messages before the first user message form a turn;
 * - system messages are all kept, at the head in their order, and count against the budget;
 * - the newest turn is always sent, even over budget: it holds the question being answered;
 * - turns are kept newest first and contiguous: the first older turn that does not fit ends it;
 * - then, so that no provider rejects what is sent, a tool result whose call is not before it
 *   in the window is dropped, and a tool call without a result after it is removed from its
 *   assistant turn (the turn is dropped if nothing remains). With whole turns this only
 *   changes histories that were already broken.
 * The store is never changed. Over a `MessageLog` it also has `prepareHistory` (the same
 * window, reading backwards from the end until the budget is full: flat as the conversation
 * grows) and `lastTurn`.
 */
export function tokenWindowProvider(store: ChatMemory, options: TokenWindowOptions): MemoryProvider {
  if (!isChatMemory(store)) throw new InvalidMemoryConfigError('store must have get, add and clear', store);
  const { maxTokens } = options ?? {};
  if (!Number.isInteger(maxTokens) || maxTokens <= 0) {
    throw new InvalidMemoryConfigError(`maxTokens must be an integer > 0, got ${String(maxTokens)}`, maxTokens);
  }
  if (options.countTokens !== undefined && typeof options.countTokens !== 'function') {
    throw new InvalidMemoryConfigError('countTokens must be a function', options.countTokens);
  }
  const counter = async () => options.countTokens ?? (await o200kTokenCounter());
  const provider: MemoryProvider = {
    history: (id) => store.get(id),
    append: (id, messages) => store.add(id, messages),
    clear: (id) => store.clear(id),
    prepare: async (_id, messages) => tokenWindow(messages, maxTokens, await counter()),
  };
  if (!isMessageLog(store)) return provider;
  return {
    ...provider,
    prepareHistory: async (id) => readTokenWindow(store, id, maxTokens, await counter()),
    lastTurn: (id) => readLastTurn(store, id),
  };
}

/** The `prepare` of `tokenWindowProvider`, as a pure function. */
export function tokenWindow(messages: readonly Message[], maxTokens: number, count: TokenCounter): Message[] {
  const systems = messages.filter((m) => m.role === 'system');
  const turns = splitTurns(messages.filter((m) => m.role !== 'system'));
  let budget = maxTokens - systems.reduce((sum, m) => sum + count(m), 0);
  let first = turns.length;
  while (first > 0) {
    const cost = turns[first - 1]!.reduce((sum, m) => sum + count(m), 0);
    if (first < turns.length && cost > budget) break;
    budget -= cost;
    first--;
  }
  return [...systems, ...pairToolCalls(turns.slice(first).flat())];
}

function splitTurns(body: readonly Message[]): Message[][] {
  const turns: Message[][] = [];
  for (const m of body) {
    if (m.role === 'user' || turns.length === 0) turns.push([m]);
    else turns[turns.length - 1]!.push(m);
  }
  return turns;
}
