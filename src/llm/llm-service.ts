import type { AssistantMessage, ContentBlock, Message, ToolCall } from '../message.ts';
import type { TraceContext } from '../telemetry/tracing.ts';

/** What the model is told about a tool: OpenAI's function-tool shape. */
export interface ToolSpec {
  /** The tool's name, unique within a kernel: what the model calls it by. */
  name: string;
  /** What the tool does, for the model. */
  description: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
}

/**
 * How the model may use the advertised tools: `'auto'` (it decides), `'none'` (text only),
 * `'required'` (it must call one), or `{ name }` (it must call that one).
 */
export type ToolChoice =
  | 'auto'
  | 'none'
  | 'required'
  | {
      /** The tool it must call. */
      name: string;
    };

/** Options of one model call. */
export interface ChatOptions {
  /** Tools the model may call. Default none. */
  tools?: readonly ToolSpec[];
  /** How it may use them. Default: the server's (`auto` when tools are given). */
  toolChoice?: ToolChoice;
  /** Sampling temperature for this call; overrides the service's own default. */
  temperature?: number;
  /** Cancels the call: it rejects with `LlmError` `llm_aborted`. */
  signal?: AbortSignal | undefined;
  /** The OpenTelemetry context the call's span is a child of (a turn's). Default: the active one. */
  traceContext?: TraceContext | undefined;
}

/** Tokens a call used, as the server reported them (OpenAI's field names). */
export interface Usage {
  /** Tokens of the messages sent. */
  prompt_tokens: number;
  /** Tokens of the answer. */
  completion_tokens: number;
  /** Their sum. */
  total_tokens: number;
}

/** A model's answer (the first choice). */
export interface LlmResponse {
  /** Its text; `null` when it only called tools. */
  content: string | null;
  /** The tool calls it asks for, as the server sent them. */
  tool_calls?: ToolCall[];
  /** Provider blocks kept with the reply (e.g. thinking blocks), stored with the message. */
  content_blocks?: ContentBlock[];
  /** Why it stopped (`'stop'`, `'tool_calls'`, `'length'`, ...), when the server said. */
  finish_reason?: string;
  /** Tokens used, when the server reported them. */
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
  /**
   * Calls the model with `messages` and resolves with its answer.
   *
   * @throws `LlmError` (see `LlmErrorCode`) when the call fails or is aborted.
   */
  chat(messages: readonly Message[], options?: ChatOptions): Promise<LlmResponse>;
  /**
   * The same call answered as it is written (see `LlmStreamEvent`); a failure is thrown from the
   * iteration.
   */
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
  | {
      /** A piece of text. */
      type: 'text';
      /** The text, as the model wrote it. */
      delta: string;
    }
  | {
      /** A complete tool call. */
      type: 'tool_call';
      /** The call: id, name and arguments whole. */
      call: ToolCall;
    }
  | {
      /** The end, once. */
      type: 'done';
      /** The whole response, as `chat` would have answered it. */
      response: LlmResponse;
    };
