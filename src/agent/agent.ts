import { InvalidInputError } from '../errors.ts';
import type { LlmResponse, LlmService, Usage } from '../llm/llm-service.ts';
import type { AssistantMessage, Message, UserMessage } from '../message.ts';
import { newContext, withConversationId } from '../kernel/context.ts';
import { newConversationId } from '../kernel/conversation-id.ts';
import { createKernel, STREAM_CLOSED } from '../kernel/kernel.ts';
import { eventChannel } from '../kernel/event-channel.ts';
import type { LoopEvent, StreamEvent } from '../kernel/stream-events.ts';
import type { Kernel } from '../kernel/kernel-types.ts';
import { NoLlmServiceError } from '../kernel/kernel-errors.ts';
import type { Tool } from '../kernel/tool.ts';
import type { ToolCallRecord } from '../kernel/tool-call.ts';
import { runToolLoop } from '../kernel/tool-loop.ts';
import type { MemoryProvider } from '../provider/memory-provider.ts';
import { danglingToolResults } from './dangling-tool-calls.ts';
import { failedTurnMarker, isFailedTurnMarker, withoutFailedTurns } from './failed-turns.ts';
import { resolveMemory, type MemoryConfig } from './memory-config.ts';
import type { TraceContext } from '../telemetry/tracing.ts';

/**
 * An agent (beamai's `beamai_agent`): a kernel for the LLM and tools, a memory provider for
 * the history, and its own tool loop that orchestrates the two. The kernel has NO memory
 * filter: the agent persists explicitly, so nothing is stored twice.
 *
 * `run(text)`:
 * 1. heal tool calls left without results by an earlier run (`danglingToolResults`);
 * 2. load the history BEFORE storing the new user message (else it would be read twice),
 *    then store it; failed turns of the history are not sent (failed-turns.ts);
 * 3. the kernel's tool loop (`runToolLoop`): send `prepare(history + this run)` (the window
 *    only shapes what is sent; the store keeps everything), with the system prompt injected
 *    by the kernel, innermost and never stored; store the assistant turn; if it called
 *    tools, run them (concurrently by default, results in call order), store the results in
 *    call order, and go again;
 * 4. answer `{response, toolCallsMade, iterations (LLM calls), messages (history + this run)}`.
 * Limits are the loop's one rule, tested before each LLM call: `maxToolIterations` LLM calls
 * (default 10; when the last one still calls tools, they run and are stored, then
 * `MaxToolIterationsError`), and `maxToolCalls` tool calls (default unlimited; a batch may
 * cross it, and `MaxToolCallsError` comes before the next call). Tool failures are content; any
 * other error (LLM, limits, a store) fails the run under the failed-turn rule (failed-turns.ts):
 * the user message stays, an error marker is stored after it, the error is rethrown, and later
 * runs leave that turn out of what they send.
 * Flat turn cost: when the provider has `prepareHistory` and `lastTurn` (the built-in ones
 * with a window over a `MessageLog`, e.g. `{ window: 50 }` on the runtime's memory), the run
 * reads no whole history: healing looks at the last turn only (where an abandoned run leaves
 * its calls), each call sends `prepareHistory` (what `prepare(history + this run)` gives, as
 * this run's messages are stored before each call), and `messages` starts from that last turn
 * instead of the whole history (`agent.messages()` still reads it all).
 * Runs and writes of one agent are serialized; reads are not.
 *
 * `stream(text)` is `run(text)` with its events as they happen (`stream-events.ts`): the same
 * loop, the same messages stored at the same moments; `done` last carries `run`'s result.
 * Ending the iteration early aborts the run like its `signal` (the user message and any turn
 * already stored stay, the reply being written is not stored) and waits for it to settle.
 */
export interface AgentConfig {
  /**
   * The model the agent calls (`openAICompatible`, `llmFromEnv`, `fallbackLlm`, or your own
   * `LlmService`). Required: without it `createAgent` throws `NoLlmServiceError`.
   */
  llm: LlmService;
  /** Tools the model may call (`defineTool`). Default none. */
  tools?: readonly Tool[];
  /** Sent first on every LLM call and never stored. Default none. */
  systemPrompt?: string;
  /**
   * Where the history lives (see `MemoryConfig`). Default `'default'`: the shared default store, no
   * window.
   */
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

/** What `run` resolves with (and `stream`'s `done` event carries). */
export interface AgentRunResult {
  /** The model's last answer: the one that called no more tools. */
  response: LlmResponse;
  /** Every tool call of the run, in call order, with its result. */
  toolCallsMade: ToolCallRecord[];
  /** LLM calls made by this run. */
  iterations: number;
  /** Summed over the run's LLM calls; absent when none reported usage. */
  usage?: Usage;
  /**
   * The history the run started from, then this run's messages. With a provider that reads
   * boundedly (`prepareHistory`), the history part is only its last turn.
   */
  messages: Message[];
}

/** Options of one `run` or `stream`. */
export interface AgentRunOptions {
  /** Aborts the run: the model call rejects with `LlmError` `llm_aborted`. */
  signal?: AbortSignal | undefined;
  /** The OpenTelemetry context the run's model-call and tool spans are children of. Default: the active one. */
  traceContext?: TraceContext | undefined;
}

/** An agent made by `createAgent`: one conversation, its memory and its kernel. Frozen. */
export interface Agent {
  /** The conversation its history is stored under. */
  readonly conversationId: string;
  /** `undefined` when memory is off. */
  readonly memory: MemoryProvider | undefined;
  /**
   * The kernel it calls the model and its tools through (no memory filter: the agent stores
   * explicitly).
   */
  readonly kernel: Kernel;
  /**
   * Runs one turn: stores `text` as a user message, calls the model (and the tools it asks for, up
   * to the limits) and stores every message of the turn. Runs of one agent are serialized.
   *
   * @throws `InvalidInputError` `invalid_message` when `text` is not a string.
   * @throws `MaxToolIterationsError` (`max_tool_iterations`) or `MaxToolCallsError`
   * (`max_tool_calls`) when a limit is reached.
   * @throws `LlmError` (its `code`), or a `StorageError` from the store: the turn is stored as
   * failed (its user message and an error marker) and left out of what later runs send.
   */
  run(text: string, options?: AgentRunOptions): Promise<AgentRunResult>;
  /** `run`, streamed (lazy, single use; see above). */
  stream(text: string, options?: AgentRunOptions): AsyncIterableIterator<StreamEvent<AgentRunResult>>;
  /** The stored history; `[]` without memory. */
  messages(): Promise<Message[]>;
  /** Appends one message to the history; nothing without memory. */
  addMessage(message: Message): Promise<void>;
  /** Clears the stored history of its conversation; nothing without memory. */
  clearMessages(): Promise<void>;
  /** The last assistant message with text content (tool-call-only turns and error markers skipped). */
  lastResponse(): Promise<AssistantMessage | undefined>;
}

/**
 * Makes an agent (see `AgentConfig` for what a run does). Nothing is read or stored until the first
 * call.
 *
 * @throws `NoLlmServiceError` (`no_llm_service`) without `llm`.
 * @throws `InvalidInputError` `invalid_option` for a bad `maxToolIterations` or `maxToolCalls`;
 * `invalid_id` for an empty `conversationId`.
 * @throws `InvalidMemoryConfigError` (`invalid_memory_config`) for a `memory` setting that cannot
 * work.
 *
 * @example
 * ```ts
 * import { createAgent, llmFromEnv, startRuntime } from 'mnemo';
 *
 * const runtime = await startRuntime({ dataDir: './data' }); // the default store, durable
 * const agent = createAgent({ llm: llmFromEnv(), conversationId: 'alice', memory: { window: 50 } });
 * const { response } = await agent.run('My name is Alice.');
 * console.log(response.content);
 * await runtime.stop();
 * ```
 */
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

  const runOnce = async (
    text: string,
    signal: AbortSignal | undefined,
    traceContext: TraceContext | undefined,
    onEvent?: (event: LoopEvent) => void,
  ): Promise<AgentRunResult> => {
    if (typeof text !== 'string') throw new InvalidInputError('invalid_message', 'run(text) takes a string');
    const user: UserMessage = { role: 'user', content: text };
    const context = withConversationId(newContext(), conversationId);
    const messages: Message[] = [];
    // A provider that reads only what it sends: heal from the last turn, send its window.
    const bounded = provider?.prepareHistory !== undefined && provider.lastTurn !== undefined ? provider : undefined;
    if (provider) {
      const history = bounded ? await bounded.lastTurn!(conversationId) : await provider.history(conversationId);
      const healed = danglingToolResults(history);
      if (healed.length > 0) await provider.append(conversationId, healed);
      await provider.append(conversationId, [user]);
      messages.push(...history, ...healed);
    }
    messages.push(user);
    const runStart = messages.length - 1;
    // What is sent never holds a failed turn of the history (failed-turns.ts).
    const toSend = async (): Promise<Message[]> => {
      if (bounded) return withoutFailedTurns(await bounded.prepareHistory!(conversationId));
      return provider ? provider.prepare(conversationId, withoutFailedTurns(messages)) : messages;
    };
    try {
      const { response, toolCallsMade, iterations, usage } = await runToolLoop(
        kernel,
        {
          toSend,
          async recordReply(reply) {
            if (!reply) return;
            if (provider) await provider.append(conversationId, [reply]);
            messages.push(reply);
          },
          async recordResults(results) {
            if (provider) await provider.append(conversationId, results);
            messages.push(...results);
          },
        },
        {
          context,
          systemPrompts,
          maxToolIterations,
          maxToolCalls,
          parallel,
          nameResults: false,
          ...(signal ? { signal } : {}),
          ...(traceContext ? { traceContext } : {}),
          ...(onEvent ? { onEvent } : {}),
        },
      );
      return { response, toolCallsMade, iterations, ...(usage ? { usage } : {}), messages };
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

  const agent: Agent = {
    conversationId,
    memory: provider,
    kernel,
    run: (text, options = {}) => serialized(() => runOnce(text, options.signal, options.traceContext)),
    stream: (text, options = {}) =>
      eventChannel(
        async (emit, signal) => {
          const result = await serialized(() => runOnce(text, signal, options.traceContext, emit));
          return { type: 'done', response: result.response, ...(result.usage ? { usage: result.usage } : {}), result };
        },
        { signal: options.signal, cutReason: STREAM_CLOSED },
      ),
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
