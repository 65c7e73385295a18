import type { AssistantMessage, ContentBlock, Message, ToolCall } from '../message.ts';

/** What the model is told about a tool: OpenAI's function-tool shape. */
export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
}

export type ToolChoice = 'auto' | 'none' | 'required' | { name: string };

export interface ChatOptions {
  tools?: readonly ToolSpec[];
  toolChoice?: ToolChoice;
  /** Sampling temperature for this call; overrides the service's own default. */
  temperature?: number;
  signal?: AbortSignal;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export interface LlmResponse {
  content: string | null;
  tool_calls?: ToolCall[];
  content_blocks?: ContentBlock[];
  finish_reason?: string;
  usage?: Usage;
}

/**
 * One chat-completions call. Implementations throw an `LlmError` (a `MnemoError`) on failure;
 * they never retry forever and never swallow an abort.
 *
 * `stream` (optional) is the same call answered as it is written (`LlmStreamEvent`s, ending
 * with `done`); a failure is thrown from the iteration. Without it, streaming callers (the
 * kernel's and agent's `stream`) use `chat` and hand its text over as one delta.
 */
export interface LlmService {
  chat(messages: readonly Message[], options?: ChatOptions): Promise<LlmResponse>;
  stream?(messages: readonly Message[], options?: ChatOptions): AsyncIterable<LlmStreamEvent>;
}

export type { AssistantMessage };

/**
 * What `LlmService.stream` yields, in this order: `text` deltas as the model writes them;
 * each `tool_call` once its pieces are all in (complete id, name and arguments); then exactly
 * one `done`, last, with the whole response, as `chat` would have answered it (`content` is
 * the deltas joined, `null` when there were none; usage when the server reported it).
 * Ending the iteration early (`break`, `return()`) cancels the model call.
 */
export type LlmStreamEvent =
  | { type: 'text'; delta: string }
  | { type: 'tool_call'; call: ToolCall }
  | { type: 'done'; response: LlmResponse };
