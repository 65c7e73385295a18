import type { LlmResponse, LlmService, ToolChoice, Usage } from '../llm/llm-service.ts';
import type { JsonObject, Message, SystemMessage } from '../message.ts';
import type { Context } from './context.ts';
import type { TraceContext } from '../telemetry/tracing.ts';
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
  /**
   * How the model may use the kernel's tools on each call. Default `'auto'` (when it has tools).
   */
  toolChoice?: ToolChoice;
}

/** What `createKernel` takes. */
export interface KernelConfig {
  /** The model. Without it, `invokeChat`, `invoke` and `stream` throw `NoLlmServiceError`. */
  llm?: LlmService;
  /** Tools advertised on every call; names must be distinct (`invalid_option`). Default none. */
  tools?: readonly Tool[];
  /** Outermost first; put `memoryFilter` first. */
  filters?: readonly Filter[];
  /** Defaults for the calls. */
  settings?: KernelSettings;
}

/** Options of one `invokeChat` (and of `invoke`, `stream`). */
export interface ChatCallOptions {
  /** The context the call runs in. Default a fresh one (`newContext()`). */
  context?: Context;
  /** Injected innermost on every call, never stored. */
  systemPrompts?: readonly (string | SystemMessage)[];
  /** Passed to each model call: the built-in services reject with `LlmError` `llm_aborted` when it fires. */
  signal?: AbortSignal;
  /** The OpenTelemetry context the model-call and tool spans are children of. Default: the active one. */
  traceContext?: TraceContext | undefined;
  /** Stream the call: its text pieces as they arrive (`LlmService.stream`, else `chat`'s text
   *  as one piece). The call still resolves with the whole response. */
  onText?: (delta: string) => void;
}

/** Options of `invoke` and `stream`: a chat call's, and the loop's limit. */
export interface InvokeOptions extends ChatCallOptions {
  /** LLM calls allowed in one `invoke`: this, else the kernel's setting, else 10. */
  maxToolIterations?: number;
}

/** What `invoke` resolves with. */
export interface InvokeResult {
  /** The model's last answer: the one that called no more tools. */
  response: LlmResponse;
  /** The context of the last chat call, filter states included (and the temporary id, if one was made). */
  context: Context;
  /** Every tool call of the run, in call order, with its result. */
  toolCallsMade: ToolCallRecord[];
  /** LLM calls made. */
  iterations: number;
  /** Summed over the LLM calls; absent when none reported usage. */
  usage?: Usage;
}

/** A kernel made by `createKernel` (see there for what each call does). Stateless and frozen. */
export interface Kernel {
  /** Its tools, by name. */
  readonly tools: ReadonlyMap<string, Tool>;
  /** Its filters, outermost first. */
  readonly filters: readonly Filter[];
  /** Its settings. */
  readonly settings: Readonly<KernelSettings>;
  /**
   * One model call through the filters, the system prompts innermost, the kernel's tools
   * advertised. Nothing is stored unless a filter stores it.
   *
   * @throws `NoLlmServiceError` (`no_llm_service`) without an `llm`; `LlmError` when the call fails
   * (a plain error from your service comes as `llm_error`).
   */
  invokeChat(messages: readonly Message[], options?: ChatCallOptions): Promise<ChatResponse>;
  /**
   * One tool call through the filters' `aroundTool` hooks. The tool's own error is thrown as it is.
   *
   * @throws `ToolNotFoundError` (`tool_not_found`) for a name the kernel does not have.
   */
  invokeTool(name: string, args: JsonObject, context?: Context): Promise<ToolResponse>;
  /**
   * The tool loop: calls the model, runs the tools it asks for, calls it again with their results,
   * until it answers without tools. With a `memoryFilter`, each call sends only what is new and the
   * filter stores it.
   *
   * @throws `NoLlmServiceError`, `LlmError`, `InvalidInputError` `invalid_option` (a bad
   * `maxToolIterations`), `MaxToolIterationsError` (`max_tool_iterations`) when the last allowed
   * call still asks for tools.
   */
  invoke(messages: readonly Message[], options?: InvokeOptions): Promise<InvokeResult>;
  /**
   * `invoke`, streamed: the same run (same calls, same storage), its events as they happen,
   * `done` last with `invoke`'s result. Lazy and single use; ending the iteration early aborts
   * the run (as `signal` would) and waits for it to settle.
   */
  stream(messages: readonly Message[], options?: InvokeOptions): AsyncIterableIterator<StreamEvent<InvokeResult>>;
}
