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
 */
export interface LlmService {
  chat(messages: readonly Message[], options?: ChatOptions): Promise<LlmResponse>;
}

export type { AssistantMessage };
