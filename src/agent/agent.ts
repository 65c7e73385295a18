import { InvalidInputError } from '../errors.ts';
import type { LlmResponse, LlmService } from '../llm/llm-service.ts';
import type { AssistantMessage, Message, ToolMessage, UserMessage } from '../message.ts';
import { newContext, withConversationId, type Context } from '../kernel/context.ts';
import { newConversationId } from '../kernel/conversation-id.ts';
import { fromResponse } from '../kernel/from-response.ts';
import { createKernel, type Kernel } from '../kernel/kernel.ts';
import { MaxToolCallsError, MaxToolIterationsError, NoLlmServiceError } from '../kernel/kernel-errors.ts';
import type { Tool } from '../kernel/tool.ts';
import { parseToolCall, type ToolCallRecord } from '../kernel/tool-call.ts';
import { encodeResult, encodeToolError, toolMessage } from '../kernel/tool-result.ts';
import type { MemoryProvider } from '../provider/memory-provider.ts';
import { danglingToolResults } from './dangling-tool-calls.ts';
import { failedTurnMarker, isFailedTurnMarker, withoutFailedTurns } from './failed-turns.ts';
import { resolveMemory, type MemoryConfig } from './memory-config.ts';

/**
 * An agent (beamai's `beamai_agent`): a kernel for the LLM and tools, a memory provider for
 * the history, and its own tool loop that orchestrates the two. The kernel has NO memory
 * filter: the agent persists explicitly, so nothing is stored twice.
 *
 * `run(text)`:
 * 1. heal tool calls left without results by an earlier run (`danglingToolResults`);
 * 2. load the history BEFORE storing the new user message (else it would be read twice),
 *    then store it; failed turns of the history are not sent (failed-turns.ts);
 * 3. loop: send `prepare(history + this run)` (the window only shapes what is sent; the
 *    store keeps everything), with the system prompt injected by the kernel, innermost and
 *    never stored; store the assistant turn; if it called tools, run them (concurrently by
 *    default, results in call order), store the results in call order, and go again;
 * 4. answer `{response, toolCallsMade, iterations (LLM calls), messages (history + this run)}`.
 * Limits: `maxToolIterations` LLM calls (default 10; when the last one still calls tools,
 * they run and are stored, then `MaxToolIterationsError`), and `maxToolCalls` tool calls
 * (default unlimited; checked before each LLM call, like beamai, so a batch may cross it and
 * `MaxToolCallsError` comes before the next call). Tool failures are content; any other error
 * (LLM, limits, a store) fails the run under the failed-turn rule (failed-turns.ts): the user
 * message stays, an error marker is stored after it, the error is rethrown, and later runs
 * leave that turn out of what they send.
 * Runs and writes of one agent are serialized; reads are not.
 */
export interface AgentConfig {
  llm: LlmService;
  tools?: readonly Tool[];
  systemPrompt?: string;
  memory?: MemoryConfig;
  /** Default: a fresh `conv_...` id. */
  conversationId?: string;
  /** LLM calls per run; an integer >= 1, default 10. */
  maxToolIterations?: number;
  /** Tool calls per run; an integer >= 1 or Infinity (the default). */
  maxToolCalls?: number;
  /** Run one turn's tool calls concurrently; default true. */
  parallelTools?: boolean;
}

export interface AgentRunResult {
  response: LlmResponse;
  toolCallsMade: ToolCallRecord[];
  /** LLM calls made by this run. */
  iterations: number;
  /** The history the run started from, then this run's messages. */
  messages: Message[];
}

export interface Agent {
  readonly conversationId: string;
  /** `undefined` when memory is off. */
  readonly memory: MemoryProvider | undefined;
  readonly kernel: Kernel;
  run(text: string, options?: { signal?: AbortSignal }): Promise<AgentRunResult>;
  /** The stored history; `[]` without memory. */
  messages(): Promise<Message[]>;
  /** Appends one message to the history; nothing without memory. */
  addMessage(message: Message): Promise<void>;
  clearMessages(): Promise<void>;
  /** The last assistant message with text content (tool-call-only turns and error markers skipped). */
  lastResponse(): Promise<AssistantMessage | undefined>;
}

export function createAgent(config: AgentConfig): Agent {
  if (!config?.llm) throw new NoLlmServiceError();
  const maxToolIterations = config.maxToolIterations ?? 10;
  if (!Number.isInteger(maxToolIterations) || maxToolIterations < 1) {
    throw new InvalidInputError('invalid_option', `maxToolIterations must be an integer >= 1, got ${maxToolIterations}`);
  }
  const maxToolCalls = config.maxToolCalls ?? Infinity;
  if (maxToolCalls !== Infinity && (!Number.isInteger(maxToolCalls) || maxToolCalls < 1)) {
    throw new InvalidInputError('invalid_option', `maxToolCalls must be an integer >= 1 or Infinity, got ${maxToolCalls}`);
  }
  const conversationId = config.conversationId ?? newConversationId();
  if (typeof conversationId !== 'string' || conversationId === '') {
    throw new InvalidInputError('invalid_id', 'conversationId must be a non-empty string');
  }
  const provider = resolveMemory(config.memory);
  const kernel = createKernel({ llm: config.llm, tools: config.tools ?? [] });
  const systemPrompts = config.systemPrompt ? [config.systemPrompt] : [];
  const parallel = config.parallelTools ?? true;

  // One run or write at a time per agent: an interleaved run would read half of another.
  let queue: Promise<unknown> = Promise.resolve();
  const serialized = <T>(work: () => Promise<T>): Promise<T> => {
    const result = queue.then(work);
    queue = result.catch(() => undefined);
    return result;
  };

  const runTools = async (calls: readonly unknown[], context: Context): Promise<[ToolMessage[], ToolCallRecord[]]> => {
    const one = async (call: unknown): Promise<[ToolMessage, ToolCallRecord]> => {
      const { id, name, args } = parseToolCall(call);
      let content: string;
      let ok = true;
      try {
        content = encodeResult((await kernel.invokeTool(name, args, context)).result);
      } catch (err) {
        content = encodeToolError(err);
        ok = false;
      }
      return [toolMessage(id, content), { id, name, args, result: content, ok }];
    };
    let done: [ToolMessage, ToolCallRecord][];
    if (parallel) done = await Promise.all(calls.map(one));
    else {
      done = [];
      for (const call of calls) done.push(await one(call));
    }
    return [done.map(([m]) => m), done.map(([, r]) => r)];
  };

  const runOnce = async (text: string, signal: AbortSignal | undefined): Promise<AgentRunResult> => {
    if (typeof text !== 'string') throw new InvalidInputError('invalid_message', 'run(text) takes a string');
    const user: UserMessage = { role: 'user', content: text };
    const context = withConversationId(newContext(), conversationId);
    const messages: Message[] = [];
    // What is sent: the history without its failed turns (failed-turns.ts), then this run.
    let sendable: Message[] = [];
    if (provider) {
      const history = await provider.history(conversationId);
      const healed = danglingToolResults(history);
      if (healed.length > 0) await provider.append(conversationId, healed);
      await provider.append(conversationId, [user]);
      messages.push(...history, ...healed);
      sendable = withoutFailedTurns(messages);
    }
    messages.push(user);
    const runStart = messages.length - 1;
    try {
      return await loop(messages, sendable, runStart, context, signal);
    } catch (err) {
      // The failed-turn rule: the user message stays, an error marker follows it (after
      // results for any tool call this run left unanswered, so the turn is whole).
      if (provider) {
        const run = messages.slice(runStart);
        await provider.append(conversationId, [...danglingToolResults(run), failedTurnMarker(err)]).catch(() => undefined);
      }
      throw err;
    }
  };

  const loop = async (
    messages: Message[],
    sendable: readonly Message[],
    runStart: number,
    context: Context,
    signal: AbortSignal | undefined,
  ): Promise<AgentRunResult> => {
    const toolCallsMade: ToolCallRecord[] = [];
    for (let iteration = 1; ; iteration++) {
      if (iteration > maxToolIterations) throw new MaxToolIterationsError(maxToolIterations, toolCallsMade, context);
      if (toolCallsMade.length >= maxToolCalls) throw new MaxToolCallsError(maxToolCalls, toolCallsMade);
      const outgoing = [...sendable, ...messages.slice(runStart)];
      const toSend = provider ? await provider.prepare(conversationId, outgoing) : outgoing;
      const { response } = await kernel.invokeChat(toSend, {
        context,
        systemPrompts,
        ...(signal ? { signal } : {}),
      });
      const reply = fromResponse(response);
      if (reply) {
        if (provider) await provider.append(conversationId, [reply]);
        messages.push(reply);
      }
      const calls = response.tool_calls;
      if (!Array.isArray(calls) || calls.length === 0) {
        return { response, toolCallsMade, iterations: iteration, messages };
      }
      const [results, records] = await runTools(calls, context);
      if (provider) await provider.append(conversationId, results);
      messages.push(...results);
      toolCallsMade.push(...records);
    }
  };

  const agent: Agent = {
    conversationId,
    memory: provider,
    kernel,
    run: (text, options = {}) => serialized(() => runOnce(text, options.signal)),
    messages: async () => (provider ? provider.history(conversationId) : []),
    addMessage: (message) => serialized(async () => {
      if (provider) await provider.append(conversationId, [message]);
    }),
    clearMessages: () => serialized(async () => {
      if (provider) await provider.clear(conversationId);
    }),
    async lastResponse() {
      const history = await agent.messages();
      for (let i = history.length - 1; i >= 0; i--) {
        const m = history[i]!;
        if (m.role === 'assistant' && typeof m.content === 'string' && !isFailedTurnMarker(m)) return m;
      }
      return undefined;
    },
  };
  return Object.freeze(agent);
}
