import type { ChatOptions, LlmResponse, LlmService } from '../../src/llm/llm-service.ts';
import type { Message, ToolCall } from '../../src/message.ts';

/**
 * A real `LlmService` that answers from a script, one step per call: a response, a function of
 * the messages it was sent, or an error to throw. Every call is recorded.
 */
export type Step = LlmResponse | Error | ((messages: readonly Message[]) => LlmResponse);

export interface ScriptedLlm extends LlmService {
  calls: { messages: Message[]; options: ChatOptions | undefined }[];
}

export function scriptedLlm(steps: Step[], fallback?: Step): ScriptedLlm {
  const queue = [...steps];
  const llm: ScriptedLlm = {
    calls: [],
    async chat(messages, options) {
      llm.calls.push({ messages: structuredClone([...messages]), options });
      const step = queue.shift() ?? fallback;
      if (step === undefined) throw new Error('script exhausted');
      if (step instanceof Error) throw step;
      return typeof step === 'function' ? step(messages) : step;
    },
  };
  return llm;
}

export function toolCall(id: string, name: string, args: Record<string, unknown>): ToolCall {
  return { id, type: 'function', function: { name, arguments: JSON.stringify(args) } };
}

export function callsTools(...calls: ToolCall[]): LlmResponse {
  return { content: null, tool_calls: calls, finish_reason: 'tool_calls' };
}

export function says(content: string): LlmResponse {
  return { content, finish_reason: 'stop' };
}
