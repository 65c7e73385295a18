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
  /** The messages to send (a hook may replace them). */
  messages: readonly Message[];
  /** The call's context (this filter's state is in `filterStates`). */
  context: Context;
  /** The model call's options: advertised tools, tool choice, signal. */
  options: ChatOptions;
}

/** What an `aroundChat` hook returns: the model's answer and the context to carry on with. */
export interface ChatResponse {
  /** The model's answer (a hook may rewrite it). */
  response: LlmResponse;
  /** The context after the call. */
  context: Context;
}

/** What an `aroundTool` hook gets: the tool's name, its arguments and the context. */
export interface ToolRequest {
  /** The tool's name. */
  tool: string;
  /** The arguments the model gave (decoded JSON). */
  args: JsonObject;
  /** The call's context. */
  context: Context;
}

/** What an `aroundTool` hook returns: the tool's result and the context to carry on with. */
export interface ToolResponse {
  /** What the tool returned (the model gets a string as it is, anything else as JSON). */
  result: unknown;
  /** The context after the call. */
  context: Context;
}

/**
 * The inner layers of the onion: call it to pass the request on; it resolves with their response.
 */
export type Next<Req, Res> = (request: Req) => Promise<Res>;

/**
 * A hook around one phase: gets the request, its state (the filter's `init` the first time) and
 * `next`; returns the response, or `[response, newState]` to keep state.
 */
export type Around<Req, Res, S> = (
  request: Req,
  state: S,
  next: Next<Req, Res>,
) => Res | [Res, S] | Promise<Res | [Res, S]>;

/** A filter's hooks; on a phase without one, the filter is skipped. */
export interface FilterHooks<S> {
  /** Around each model call. */
  aroundChat?: Around<ChatRequest, ChatResponse, S>;
  /** Around each tool call. */
  aroundTool?: Around<ToolRequest, ToolResponse, S>;
}

/** A filter phase: `aroundChat` or `aroundTool`. */
export type Phase = keyof FilterHooks<unknown>;

/** A named set of hooks, made by `createFilter` (or `memoryFilter`, `systemPromptFilter`). */
export interface Filter {
  /** Its name: the key of its state in `Context.filterStates`. */
  readonly name: string;
  /** Its hooks. */
  readonly hooks: FilterHooks<unknown>;
  /** Its state before its first save. */
  readonly init: unknown;
  /** Set only by `memoryFilter`: the store it writes to, which switches `invoke` to delta mode. */
  readonly memory?: ChatMemory;
}

/**
 * A filter named `name` with `hooks`, whose state starts as `init`. Pass it in `createKernel({
 * filters })`, outermost first. Frozen.
 */
export function createFilter<S = undefined>(name: string, hooks: FilterHooks<S>, init?: S): Filter {
  // The state type is the filter's own business; the chain only carries it.
  return Object.freeze({ name, hooks: hooks as FilterHooks<unknown>, init });
}
