import { InvalidInputError, MnemoError } from '../errors.ts';
import { LlmError } from '../llm/llm-errors.ts';
import type { ChatOptions, LlmResponse, LlmService, ToolChoice } from '../llm/llm-service.ts';
import type { JsonObject, Message, SystemMessage } from '../message.ts';
import { newContext, type Context } from './context.ts';
import type { ChatRequest, ChatResponse, Filter, ToolRequest, ToolResponse } from './filter.ts';
import { runChain } from './filter-chain.ts';
import { NoLlmServiceError, ToolNotFoundError } from './kernel-errors.ts';
import { systemPromptFilter, toSystemMessages } from './system-prompt-filter.ts';
import { toolSpec, type Tool } from './tool.ts';
import type { ToolCallRecord } from './tool-call.ts';
import { runToolLoop } from './tool-loop.ts';

/**
 * The stateless kernel (beamai's `beamai_kernel`): an LLM service, tools, and filters around
 * both. It records nothing itself; memory is a filter (`memoryFilter`) or the agent's provider.
 *
 * - `invokeChat`: one chat call through the filters, the system prompts innermost. The
 *   kernel's tools are advertised (tool choice `auto` unless set).
 * - `invokeTool`: one tool call through the filters' `aroundTool` hooks.
 * - `invoke`: the tool loop (see `tool-loop.ts`).
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
}

export interface Kernel {
  readonly tools: ReadonlyMap<string, Tool>;
  readonly filters: readonly Filter[];
  readonly settings: Readonly<KernelSettings>;
  invokeChat(messages: readonly Message[], options?: ChatCallOptions): Promise<ChatResponse>;
  invokeTool(name: string, args: JsonObject, context?: Context): Promise<ToolResponse>;
  invoke(messages: readonly Message[], options?: InvokeOptions): Promise<InvokeResult>;
}

export function createKernel(config: KernelConfig = {}): Kernel {
  const { llm } = config;
  const tools = new Map<string, Tool>();
  for (const tool of config.tools ?? []) {
    if (tools.has(tool.name)) {
      throw new InvalidInputError('invalid_option', `two tools are named ${JSON.stringify(tool.name)}`);
    }
    tools.set(tool.name, tool);
  }
  const filters = Object.freeze([...(config.filters ?? [])]);
  const settings = Object.freeze({ ...config.settings });
  if (settings.maxToolIterations !== undefined) checkIterations(settings.maxToolIterations);
  const specs = [...tools.values()].map(toolSpec);

  const kernel: Kernel = {
    tools,
    filters,
    settings,

    async invokeChat(messages, options = {}) {
      if (!llm) throw new NoLlmServiceError();
      const prompts = toSystemMessages(options.systemPrompts);
      const chain = prompts.length > 0 ? [...filters, systemPromptFilter(prompts)] : filters;
      const chatOptions: ChatOptions = {};
      if (specs.length > 0) {
        chatOptions.tools = specs;
        chatOptions.toolChoice = settings.toolChoice ?? 'auto';
      }
      if (options.signal) chatOptions.signal = options.signal;
      const request: ChatRequest = { messages, context: options.context ?? newContext(), options: chatOptions };
      return runChain(chain, 'aroundChat', async (req: ChatRequest): Promise<ChatResponse> => {
        let response: LlmResponse;
        try {
          response = await llm.chat(req.messages, req.options);
        } catch (err) {
          // A custom service may throw anything; callers branch on a code.
          throw err instanceof MnemoError ? err : new LlmError('llm_error', String((err as Error)?.message ?? err), { cause: err });
        }
        return { response, context: req.context };
      }, request);
    },

    async invokeTool(name, args, context = newContext()) {
      if (!tools.has(name)) throw new ToolNotFoundError(name);
      const request: ToolRequest = { tool: name, args, context };
      return runChain(filters, 'aroundTool', async (req: ToolRequest): Promise<ToolResponse> => {
        const tool = tools.get(req.tool);
        if (!tool) throw new ToolNotFoundError(req.tool);
        return { result: await tool.execute(req.args, req.context), context: req.context };
      }, request);
    },

    async invoke(messages, options = {}) {
      if (!llm) throw new NoLlmServiceError();
      const maxIterations = options.maxToolIterations ?? settings.maxToolIterations ?? 10;
      checkIterations(maxIterations);
      return runToolLoop(kernel, messages, { ...options, maxToolIterations: maxIterations });
    },
  };
  return Object.freeze(kernel);
}

function checkIterations(n: number): void {
  if (!Number.isInteger(n) || n < 1) {
    throw new InvalidInputError('invalid_option', `maxToolIterations must be an integer >= 1, got ${n}`);
  }
}
