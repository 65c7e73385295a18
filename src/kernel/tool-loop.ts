import type { AssistantMessage, Message, SystemMessage, ToolMessage } from '../message.ts';
import type { Context } from './context.ts';
import { fromResponse } from './from-response.ts';
import type { InvokeResult, Kernel } from './kernel-types.ts';
import { MaxToolCallsError, MaxToolIterationsError } from './kernel-errors.ts';
import { parseToolCall, type ToolCallRecord } from './tool-call.ts';
import { encodeResult, encodeToolError, toolMessage } from './tool-result.ts';
import { addUsage, type LoopEvent } from './stream-events.ts';
import type { Usage } from '../llm/llm-service.ts';
import { withToolSpan } from '../telemetry/gen-ai.ts';
import type { TraceContext } from '../telemetry/tracing.ts';

/**
 * The one tool loop, used by `kernel.invoke` and by the agent: call the model, run the tools
 * it asks for, call it again, until it answers without tools. What is sent and what is kept
 * is the caller's (`ToolLoopSteps`); the loop owns the limits and the running of tools.
 *
 * The limits, one rule (beamai's: both its kernel `invoke/3` and its agent loop test the
 * budget at the top of the loop, before each LLM call):
 * - before each LLM call, if `maxToolIterations` calls were made, `MaxToolIterationsError`;
 *   so when the last allowed call still asks for tools, those tools run and their results go
 *   to `recordResults`, then the error comes, before any further call;
 * - before each LLM call after the first, if `maxToolCalls` (default unlimited) tool calls
 *   were made, `MaxToolCallsError`; a batch may cross the limit.
 *
 * Tools: sequentially by default, in call order, each seeing the context the previous one left
 * (`invokeTool`'s returned context); with `parallel`, all at once on the context of the chat
 * call, which the batch then leaves unchanged. Results are in call order either way. A tool
 * that throws or is not found gives `{"error": ...}` content and the loop goes on; an LLM
 * error aborts. The context threads through the chat calls (filter states).
 *
 * Streaming is this same loop with `onEvent`: each LLM call is then streamed (its text handed
 * over as `text` events while the step's response still resolves whole, through the same
 * filters), and each tool reports `tool_call` before it runs and `tool_result` when it is
 * done (with `parallel`, results in the order they finish). What is sent, stored and
 * returned does not change. The result's `usage` sums the calls' usages (absent when none had one).
 */
export interface ToolLoopSteps {
  /** The messages for the LLM call about to be made. */
  toSend(): readonly Message[] | Promise<readonly Message[]>;
  /** The model's turn as `fromResponse` makes it (`undefined` for a null reply), before its tools run. */
  recordReply?(reply: AssistantMessage | undefined): void | Promise<void>;
  /** One batch of tool results, in call order, after the whole batch ran. */
  recordResults?(results: ToolMessage[], reply: AssistantMessage): void | Promise<void>;
}

export interface ToolLoopOptions {
  context: Context;
  systemPrompts?: readonly (string | SystemMessage)[];
  signal?: AbortSignal;
  /** The OpenTelemetry context the model-call and tool spans are children of. Default: the active one. */
  traceContext?: TraceContext | undefined;
  /** LLM calls allowed; an integer >= 1 (checked by the caller). */
  maxToolIterations: number;
  /** Tool calls allowed before another LLM call; default Infinity. */
  maxToolCalls?: number;
  /** Run a batch's calls concurrently; default false. */
  parallel?: boolean;
  /** Put the tool's name on its result message (beamai a693a9c's kernel does, HEAD's agent does not); default true. */
  nameResults?: boolean;
  /** Stream: receives the run's events as they happen (see above). Default: none, no streaming. */
  onEvent?: (event: LoopEvent) => void;
}

export async function runToolLoop(kernel: Kernel, steps: ToolLoopSteps, options: ToolLoopOptions): Promise<InvokeResult> {
  const maxToolCalls = options.maxToolCalls ?? Infinity;
  const nameResults = options.nameResults ?? true;
  let context = options.context;
  const toolCallsMade: ToolCallRecord[] = [];
  const onEvent = options.onEvent;
  const onText = onEvent ? (delta: string) => onEvent({ type: 'text', delta }) : undefined;
  let usage: Usage | undefined;

  const runOne = async (call: unknown, on: Context): Promise<[ToolMessage, ToolCallRecord, Context]> => {
    const parsed = parseToolCall(call);
    const { id, name, args } = parsed;
    onEvent?.({ type: 'tool_call', call: parsed });
    let content: string;
    let ok = true;
    let after = on;
    try {
      const out = await withToolSpan(name, id, options.traceContext, () => kernel.invokeTool(name, args, on));
      after = out.context;
      content = encodeResult(out.result);
    } catch (err) {
      content = encodeToolError(err);
      ok = false;
    }
    const message = nameResults ? toolMessage(id, content, name) : toolMessage(id, content);
    onEvent?.({ type: 'tool_result', callId: id, name, output: content, ok });
    return [message, { id, name, args, result: content, ok }, after];
  };

  for (let iteration = 1; ; iteration++) {
    if (iteration > options.maxToolIterations) {
      throw new MaxToolIterationsError(options.maxToolIterations, toolCallsMade, context);
    }
    if (toolCallsMade.length >= maxToolCalls) throw new MaxToolCallsError(maxToolCalls, toolCallsMade);
    const chat = await kernel.invokeChat(await steps.toSend(), {
      context,
      ...(options.systemPrompts ? { systemPrompts: options.systemPrompts } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.traceContext ? { traceContext: options.traceContext } : {}),
      ...(onText ? { onText } : {}),
    });
    context = chat.context;
    usage = addUsage(usage, chat.response.usage);
    const reply = fromResponse(chat.response);
    await steps.recordReply?.(reply);
    const calls = chat.response.tool_calls;
    if (!Array.isArray(calls) || calls.length === 0) {
      return { response: chat.response, context, toolCallsMade, iterations: iteration, ...(usage ? { usage } : {}) };
    }
    const results: ToolMessage[] = [];
    if (options.parallel) {
      const done = await Promise.all(calls.map((call) => runOne(call, context)));
      for (const [message, record] of done) {
        results.push(message);
        toolCallsMade.push(record);
      }
    } else {
      for (const call of calls) {
        const [message, record, after] = await runOne(call, context);
        context = after;
        results.push(message);
        toolCallsMade.push(record);
      }
    }
    // A response with tool calls always makes an assistant turn (tool calls win over text).
    await steps.recordResults?.(results, reply!);
  }
}
