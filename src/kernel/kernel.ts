import { InvalidInputError, MnemoError } from '../errors.ts';
import { LlmError } from '../llm/llm-errors.ts';
import { streamResponse } from '../llm/llm-stream.ts';
import type { ChatOptions, LlmResponse } from '../llm/llm-service.ts';
import type { Message } from '../message.ts';
import { newContext, withConversationId } from './context.ts';
import { newConversationId } from './conversation-id.ts';
import type { ChatRequest, ChatResponse, ToolRequest, ToolResponse } from './filter.ts';
import { runChain } from './filter-chain.ts';
import { NoLlmServiceError, ToolNotFoundError } from './kernel-errors.ts';
import { systemPromptFilter, toSystemMessages } from './system-prompt-filter.ts';
import type { InvokeOptions, InvokeResult, Kernel, KernelConfig } from './kernel-types.ts';
import { toolSpec, type Tool } from './tool.ts';
import { runToolLoop, type ToolLoopSteps } from './tool-loop.ts';
import { eventChannel } from './event-channel.ts';
import type { LoopEvent } from './stream-events.ts';

export type { ChatCallOptions, InvokeOptions, InvokeResult, Kernel, KernelConfig, KernelSettings } from './kernel-types.ts';

/**
 * The stateless kernel (beamai's `beamai_kernel`): an LLM service, tools, and filters around
 * both. It records nothing itself; memory is a filter (`memoryFilter`) or the agent's provider.
 * Its types are in `kernel-types.ts`.
 *
 * - `invokeChat`: one chat call through the filters, the system prompts innermost. The
 *   kernel's tools are advertised (tool choice `auto` unless set).
 * - `invokeTool`: one tool call through the filters' `aroundTool` hooks.
 * - `invoke`: the tool loop (`tool-loop.ts`, beamai's `invoke/3` at a693a9c) in one of two
 *   modes, picked by whether a filter carries a memory store (`memoryFilter`):
 *   - full mode (no memory): each call gets the whole exchange so far, accumulated here
 *     (messages, then the assistant's tool-call turn and its results, ...); nothing outlives
 *     the call;
 *   - delta mode (memory): each call gets only what is new (the messages given, then the tool
 *     results) and the memory filter stores it and expands the history. With no conversation
 *     id in the context, a temporary `conv_...` id is made and its history cleared when
 *     `invoke` ends, on success or error; the returned context still carries it.
 *   Tools run one after another, each seeing the context the previous one left. At the
 *   `maxToolIterations` limit the last batch of tools has run; in delta mode its results are
 *   not stored (they would have been the next delta).
 * - `stream`: `invoke` with the loop's events (`stream-events.ts`), through `eventChannel`.
 */
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
      if (options.traceContext) chatOptions.traceContext = options.traceContext;
      const request: ChatRequest = { messages, context: options.context ?? newContext(), options: chatOptions };
      return runChain(chain, 'aroundChat', async (req: ChatRequest): Promise<ChatResponse> => {
        let response: LlmResponse;
        try {
          const onText = options.onText;
          response = onText ? await streamResponse(llm, req.messages, req.options, onText) : await llm.chat(req.messages, req.options);
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
      return invokeWithTools(kernel, messages, { ...options, maxToolIterations: maxIterations });
    },

    stream(messages, options = {}) {
      return eventChannel(
        async (emit, signal) => {
          if (!llm) throw new NoLlmServiceError();
          const maxIterations = options.maxToolIterations ?? settings.maxToolIterations ?? 10;
          checkIterations(maxIterations);
          const result = await invokeWithTools(kernel, messages, { ...options, signal, maxToolIterations: maxIterations, onEvent: emit });
          return { type: 'done', response: result.response, ...(result.usage ? { usage: result.usage } : {}), result };
        },
        { signal: options.signal, cutReason: STREAM_CLOSED },
      );
    },
  };
  return Object.freeze(kernel);
}

/** The abort reason of a run whose stream was closed before its end. */
export const STREAM_CLOSED = 'the stream was closed';

function checkIterations(n: number): void {
  if (!Number.isInteger(n) || n < 1) {
    throw new InvalidInputError('invalid_option', `maxToolIterations must be an integer >= 1, got ${n}`);
  }
}

async function invokeWithTools(
  kernel: Kernel,
  messages: readonly Message[],
  options: InvokeOptions & { maxToolIterations: number; onEvent?: (event: LoopEvent) => void },
): Promise<InvokeResult> {
  const store = kernel.filters.find((f) => f.memory !== undefined)?.memory;
  let context = options.context ?? newContext();
  let temporaryId: string | undefined;
  if (store && context.conversationId === undefined) {
    temporaryId = newConversationId();
    context = withConversationId(context, temporaryId);
  }
  let toSend: readonly Message[] = messages;
  const steps: ToolLoopSteps = {
    toSend: () => toSend,
    recordResults(results, reply) {
      toSend = store !== undefined ? results : [...toSend, reply, ...results];
    },
  };
  const loop = () =>
    runToolLoop(kernel, steps, {
      context,
      maxToolIterations: options.maxToolIterations,
      ...(options.systemPrompts ? { systemPrompts: options.systemPrompts } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.traceContext ? { traceContext: options.traceContext } : {}),
      ...(options.onEvent ? { onEvent: options.onEvent } : {}),
    });

  if (temporaryId === undefined) return loop();
  let result: InvokeResult;
  try {
    result = await loop();
  } catch (err) {
    // The loop's error is the one to report; a failing cleanup must not hide it.
    await store!.clear(temporaryId).catch(() => undefined);
    throw err;
  }
  await store!.clear(temporaryId);
  return result;
}
