import type { LlmResponse, Usage } from '../llm/llm-service.ts';
import type { ParsedToolCall } from './tool-call.ts';

/**
 * What `kernel.stream` and `agent.stream` yield (a discriminated union on `type`):
 * - `text`: a piece of the model's reply, as it arrives (the pieces of one LLM call joined are
 *   its `content`; a call that only asks for tools may send some too);
 * - `tool_call`: the loop is about to run this call (as `parseToolCall` reads it);
 * - `tool_result`: a call finished; `output` is the content the model gets back, `ok` false
 *   when the tool threw or was not found;
 * - `done`, last and once: the final response, the usage summed over the run's LLM calls
 *   (absent when none reported any), and the run's whole result (what `invoke`/`run` return).
 * A failed run yields no `done`: its error is thrown from the iteration.
 */
export interface TextEvent {
  /** A piece of the reply. */
  type: 'text';
  /** The text, as it arrived. */
  delta: string;
}

/** A tool call about to run. */
export interface ToolCallEvent {
  /** A call about to run. */
  type: 'tool_call';
  /** The call, as `parseToolCall` reads it. */
  call: ParsedToolCall;
}

/** A tool call that finished. */
export interface ToolResultEvent {
  /** A call finished. */
  type: 'tool_result';
  /** The id of its call. */
  callId: string;
  /** The tool's name. */
  name: string;
  /** The content the model gets back. */
  output: string;
  /** False when the tool threw or was not found. */
  ok: boolean;
}

/** The last event of a run that succeeded. */
export interface DoneEvent<R> {
  /** The run is over. */
  type: 'done';
  /** The final response. */
  response: LlmResponse;
  /** Summed over the run's LLM calls; absent when none reported usage. */
  usage?: Usage;
  /** What `invoke` (or `run`) would have resolved with. */
  result: R;
}

/** What the tool loop reports while it runs (everything but `done`). */
export type LoopEvent = TextEvent | ToolCallEvent | ToolResultEvent;

/** One event of `kernel.stream` or `agent.stream`; `R` is the run's result type. */
export type StreamEvent<R> = LoopEvent | DoneEvent<R>;

/** The sum of the usages given; `undefined` when none is. */
export function addUsage(total: Usage | undefined, more: Usage | undefined): Usage | undefined {
  if (more === undefined) return total;
  if (total === undefined) return { ...more };
  return {
    prompt_tokens: total.prompt_tokens + more.prompt_tokens,
    completion_tokens: total.completion_tokens + more.completion_tokens,
    total_tokens: total.total_tokens + more.total_tokens,
  };
}
