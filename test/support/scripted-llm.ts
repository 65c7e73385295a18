import type { ChatOptions, LlmResponse, LlmService } from '../../src/llm/llm-service.ts';
import type { Message, ToolCall } from '../../src/message.ts';

/**
 * The one scripted LlmService of the tests: answers call i with `script[i]` (or the function's
 * result; past the end of the script, `fallback` when given) and records exactly what each call
 * was sent. A step that is an Error is thrown by `chat`.
 */
export interface ScriptedLlm extends LlmService {
  calls: { messages: Message[]; options: ChatOptions | undefined }[];
}

export type Step = LlmResponse | Error | ((messages: readonly Message[]) => LlmResponse);

export function scriptedLlm(
  script: readonly Step[] | ((messages: readonly Message[], i: number) => LlmResponse),
  fallback?: Step,
): ScriptedLlm {
  const calls: ScriptedLlm['calls'] = [];
  return {
    calls,
    async chat(messages, options) {
      calls.push({ messages: structuredClone([...messages]), options });
      const i = calls.length - 1;
      const step = typeof script === 'function' ? script(messages, i) : (script[i] ?? fallback);
      if (step === undefined) throw new Error(`scripted LLM has no step ${i}`);
      if (step instanceof Error) throw step;
      return typeof step === 'function' ? step(messages) : step;
    },
  };
}

export const text = (content: string): LlmResponse => ({ content, finish_reason: 'stop' });
/** `text`, by the name the recall tests read best. */
export const says = text;

/** A tool call as the model sends it, for `callsTools`. */
export function toolCall(id: string, name: string, args: Record<string, unknown>): ToolCall {
  return { id, type: 'function', function: { name, arguments: JSON.stringify(args) } };
}

/** A reply that only calls tools (`toolCalls` from tuples, this from `toolCall`s). */
export function callsTools(...calls: ToolCall[]): LlmResponse {
  return { content: null, tool_calls: calls, finish_reason: 'tool_calls' };
}

export function toolCalls(...calls: [id: string, name: string, args: Record<string, unknown>][]): LlmResponse {
  return {
    content: null,
    finish_reason: 'tool_calls',
    tool_calls: calls.map(([id, name, args]) => ({ id, type: 'function', function: { name, arguments: JSON.stringify(args) } })),
  };
}

/**
 * The scripted LLM with `stream`: each answer's text word by word (each after a turn of the
 * event loop), then its tool calls, then `done`. It honours the signal as a real one would:
 * aborted, it stops yielding.
 */
export function streamingLlm(script: readonly Step[] | ((messages: readonly Message[], i: number) => LlmResponse)): ScriptedLlm {
  const inner = scriptedLlm(script);
  return {
    calls: inner.calls,
    chat: inner.chat,
    async *stream(messages, options) {
      const response = await inner.chat(messages, options);
      for (const delta of typeof response.content === 'string' ? (response.content.match(/\s*\S+\s*|\s+/g) ?? []) : []) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        if (options?.signal?.aborted) return;
        yield { type: 'text' as const, delta };
      }
      for (const call of response.tool_calls ?? []) yield { type: 'tool_call' as const, call };
      yield { type: 'done' as const, response };
    },
  };
}
