import type { AssistantMessage } from '../message.ts';
import type { LlmResponse } from '../llm/llm-service.ts';

/**
 * The assistant turn to store for a response (beamai's `beamai_message:from_response`):
 * - non-empty `tool_calls` → `{role: 'assistant', content: null, tool_calls}`; any text in
 *   the same response is dropped;
 * - otherwise `content === null` → `undefined`: nothing is stored;
 * - otherwise `{role: 'assistant', content}`;
 * - non-empty `content_blocks` are kept (replayed thinking keeps the prompt cache valid);
 *   without them the key is absent.
 */
export function fromResponse(response: LlmResponse): AssistantMessage | undefined {
  let message: AssistantMessage;
  if (Array.isArray(response.tool_calls) && response.tool_calls.length > 0) {
    message = { role: 'assistant', content: null, tool_calls: response.tool_calls };
  } else if (typeof response.content === 'string') {
    message = { role: 'assistant', content: response.content };
  } else {
    return undefined;
  }
  if (Array.isArray(response.content_blocks) && response.content_blocks.length > 0) {
    message.content_blocks = response.content_blocks;
  }
  return message;
}
