import type { JsonObject, Message } from '../message.ts';
import type { ChatMemory } from '../memory/contract/chat-memory.ts';
import type { ChatOptions, LlmResponse } from '../llm/llm-service.ts';
import type { Context } from './context.ts';

/**
 * Filters wrap the kernel's two calls like an onion (beamai's `beamai_filter`): the first
 * filter listed is the outermost. An around hook gets `(request, state, next)`:
 * - code before `next` rewrites the request, code after it rewrites the response;
 * - not calling `next` short-circuits the inner layers; calling it again is a retry;
 * - it returns the response, or `[response, newState]` to keep private state, saved in the
 *   response's context under the filter's NAME. A filter reads its state back from the
 *   request's context on the next entry (reuse the returned context), `init` the first time.
 * A filter without a hook for a phase is skipped on that phase.
 */
export interface ChatRequest {
  messages: readonly Message[];
  context: Context;
  options: ChatOptions;
}

export interface ChatResponse {
  response: LlmResponse;
  context: Context;
}

export interface ToolRequest {
  tool: string;
  args: JsonObject;
  context: Context;
}

export interface ToolResponse {
  result: unknown;
  context: Context;
}

export type Next<Req, Res> = (request: Req) => Promise<Res>;

export type Around<Req, Res, S> = (
  request: Req,
  state: S,
  next: Next<Req, Res>,
) => Res | [Res, S] | Promise<Res | [Res, S]>;

export interface FilterHooks<S> {
  aroundChat?: Around<ChatRequest, ChatResponse, S>;
  aroundTool?: Around<ToolRequest, ToolResponse, S>;
}

export type Phase = keyof FilterHooks<unknown>;

export interface Filter {
  readonly name: string;
  readonly hooks: FilterHooks<unknown>;
  readonly init: unknown;
  /** Set only by `memoryFilter`: the store it writes to, which switches `invoke` to delta mode. */
  readonly memory?: ChatMemory;
}

export function createFilter<S = undefined>(name: string, hooks: FilterHooks<S>, init?: S): Filter {
  // The state type is the filter's own business; the chain only carries it.
  return Object.freeze({ name, hooks: hooks as FilterHooks<unknown>, init });
}
