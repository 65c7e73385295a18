import { LlmError } from './llm-errors.ts';
import type { ChatOptions, LlmResponse, LlmService, LlmStreamEvent } from './llm-service.ts';
import type { Message } from '../message.ts';

/**
 * One model call whose text is handed to `onText` as it comes, resolving with the whole
 * response. A service without `stream` is called with `chat`, and its text is handed over
 * as one delta. A stream that ends without `done`, or goes on after `signal` fired, fails
 * (`llm_error`, `llm_aborted`): a cut-short reply is never taken for a whole one.
 */
export async function streamResponse(
  llm: LlmService,
  messages: readonly Message[],
  options: ChatOptions,
  onText: (delta: string) => void,
): Promise<LlmResponse> {
  if (!llm.stream) {
    const response = await llm.chat(messages, options);
    if (typeof response.content === 'string' && response.content !== '') onText(response.content);
    return response;
  }
  let response: LlmResponse | undefined;
  for await (const event of llm.stream(messages, options)) {
    if (options.signal?.aborted) throw abortedError(options.signal);
    if (event.type === 'text') onText(event.delta);
    else if (event.type === 'done') response = event.response;
  }
  if (options.signal?.aborted) throw abortedError(options.signal);
  if (response === undefined) throw new LlmError('llm_error', 'the model stream ended without a done event');
  return response;
}

export function abortedError(signal: AbortSignal): LlmError {
  const reason = typeof signal.reason === 'string' ? signal.reason : 'the call was aborted';
  return new LlmError('llm_aborted', reason, { cause: signal.reason });
}
