import type { ChatResult } from './chat-service.ts';

/**
 * What `recall.chatStream` yields, in the API's terms (`POST /api/chat/stream` sends each as
 * an SSE event of the same name):
 * - `delta`: a piece of the reply's text, as the model writes it;
 * - `tool_call`: a memory tool is about to run, `input` printed as in `toolCalls`;
 * - `tool_result`: it finished, with its output;
 * - `done`, last and once: exactly what `chat` returns, after the reply is stored.
 */
export type ChatStreamEvent =
  | { type: 'delta'; text: string }
  | { type: 'tool_call'; name: string; input: string }
  | { type: 'tool_result'; name: string; output: string }
  | { type: 'done'; result: ChatResult };
