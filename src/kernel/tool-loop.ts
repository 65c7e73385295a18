import type { Message, ToolMessage } from '../message.ts';
import { newContext, withConversationId, type Context } from './context.ts';
import { newConversationId } from './conversation-id.ts';
import { fromResponse } from './from-response.ts';
import type { InvokeOptions, InvokeResult, Kernel } from './kernel.ts';
import { MaxToolIterationsError } from './kernel-errors.ts';
import { parseToolCall, type ToolCallRecord } from './tool-call.ts';
import { encodeResult, encodeToolError, toolMessage } from './tool-result.ts';

/**
 * `kernel.invoke`: call the model, run the tools it asks for, call it again with the
 * results, until it answers without tools (beamai's `invoke/3` at a693a9c).
 *
 * Two modes, picked by whether a filter carries a memory store (`memoryFilter`):
 * - full mode (no memory): each call gets the whole exchange so far, accumulated here
 *   (messages, then the assistant's tool-call turn and its results, ...); nothing outlives
 *   the call;
 * - delta mode (memory): each call gets only what is new (the messages given, then the tool
 *   results) and the memory filter stores it and expands the history. With no conversation id
 *   in the context, a temporary `conv_...` id is made and its history cleared when `invoke`
 *   ends, on success or error; the returned context still carries it.
 *
 * Tools run one after another in call order, each seeing the context the previous one left.
 * A tool that throws (or is not found) gives `{"error": ...}` content and the loop goes on;
 * an LLM error aborts. At most `maxToolIterations` LLM calls: if the last one still asks for
 * tools, they run, then `MaxToolIterationsError` is thrown (in delta mode that last batch of
 * results is not stored: it would have been the next delta).
 */
export async function runToolLoop(
  kernel: Kernel,
  messages: readonly Message[],
  options: InvokeOptions & { maxToolIterations: number },
): Promise<InvokeResult> {
  const store = kernel.filters.find((f) => f.memory !== undefined)?.memory;
  let context = options.context ?? newContext();
  let temporaryId: string | undefined;
  if (store && context.conversationId === undefined) {
    temporaryId = newConversationId();
    context = withConversationId(context, temporaryId);
  }
  const deltaMode = store !== undefined;

  const loop = async (): Promise<InvokeResult> => {
    const toolCallsMade: ToolCallRecord[] = [];
    let toSend: readonly Message[] = messages;
    for (let iteration = 1; ; iteration++) {
      const chat = await kernel.invokeChat(toSend, {
        context,
        ...(options.systemPrompts ? { systemPrompts: options.systemPrompts } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
      });
      context = chat.context;
      const calls = chat.response.tool_calls;
      if (!Array.isArray(calls) || calls.length === 0) {
        return { response: chat.response, context, toolCallsMade, iterations: iteration };
      }
      const results: ToolMessage[] = [];
      for (const call of calls) {
        const { id, name, args } = parseToolCall(call);
        let content: string;
        let ok = true;
        try {
          const out = await kernel.invokeTool(name, args, context);
          context = out.context;
          content = encodeResult(out.result);
        } catch (err) {
          content = encodeToolError(err);
          ok = false;
        }
        toolCallsMade.push({ id, name, args, result: content, ok });
        results.push(toolMessage(id, content, name));
      }
      if (iteration >= options.maxToolIterations) {
        throw new MaxToolIterationsError(options.maxToolIterations, toolCallsMade, context);
      }
      toSend = deltaMode ? results : [...toSend, fromResponse(chat.response)!, ...results];
    }
  };

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
