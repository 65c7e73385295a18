import type { LlmResponse, LlmService, ToolChoice, Usage } from '../llm/llm-service.ts';
import type { JsonObject, Message, SystemMessage } from '../message.ts';
import type { Context } from './context.ts';
import type { ChatResponse, Filter, ToolResponse } from './filter.ts';
import type { Tool } from './tool.ts';
import type { ToolCallRecord } from './tool-call.ts';
import type { StreamEvent } from './stream-events.ts';

/**
 * The kernel's types, apart from its code, so that `kernel.ts` (which makes a kernel) and
 * `tool-loop.ts` (which drives one) both import them and not each other.
 */
export interface KernelSettings {
  /** Default for `invoke`'s `maxToolIterations`; 10 when unset. */
  maxToolIterations?: number;
  toolChoice?: ToolChoice;
}

export interface KernelConfig {
  llm?: LlmService;
  tools?: readonly Tool[];
  /** Outermost first; put `memoryFilter` first. */
  filters?: readonly Filter[];
  settings?: KernelSettings;
}

export interface ChatCallOptions {
  context?: Context;
  /** Injected innermost on every call, never stored. */
  systemPrompts?: readonly (string | SystemMessage)[];
  signal?: AbortSignal;
  /** Stream the call: its text pieces as they arrive (`LlmService.stream`, else `chat`'s text
   *  as one piece). The call still resolves with the whole response. */
  onText?: (delta: string) => void;
}

export interface InvokeOptions extends ChatCallOptions {
  /** LLM calls allowed in one `invoke`: this, else the kernel's setting, else 10. */
  maxToolIterations?: number;
}

export interface InvokeResult {
  response: LlmResponse;
  /** The context of the last chat call, filter states included (and the temporary id, if one was made). */
  context: Context;
  toolCallsMade: ToolCallRecord[];
  /** LLM calls made. */
  iterations: number;
  /** Summed over the LLM calls; absent when none reported usage. */
  usage?: Usage;
}

export interface Kernel {
  readonly tools: ReadonlyMap<string, Tool>;
  readonly filters: readonly Filter[];
  readonly settings: Readonly<KernelSettings>;
  invokeChat(messages: readonly Message[], options?: ChatCallOptions): Promise<ChatResponse>;
  invokeTool(name: string, args: JsonObject, context?: Context): Promise<ToolResponse>;
  invoke(messages: readonly Message[], options?: InvokeOptions): Promise<InvokeResult>;
  /**
   * `invoke`, streamed: the same run (same calls, same storage), its events as they happen,
   * `done` last with `invoke`'s result. Lazy and single use; ending the iteration early aborts
   * the run (as `signal` would) and waits for it to settle.
   */
  stream(messages: readonly Message[], options?: InvokeOptions): AsyncIterableIterator<StreamEvent<InvokeResult>>;
}
