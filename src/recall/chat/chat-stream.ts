import { eventChannel } from '../../kernel/event-channel.ts';
import { STREAM_CLOSED } from '../../kernel/kernel.ts';
import type { RecallDeps } from '../recall-deps.ts';
import { chatTurn, type ChatInput, type ChatResult } from './chat-service.ts';
import type { ChatStreamEvent } from './chat-service.ts';
import type { TraceContext } from '../../telemetry/tracing.ts';

/**
 * `chat`, streamed: the same turn (chat-service.ts: the user's row stored before the model
 * call, the reply stored once complete, the same ids and rows), its events as they happen,
 * `done` last with `chat`'s result. Lazy and single use: the turn starts at the first
 * `next()`. A stream cut short — `input.signal` (the client gone, the server's stop deadline)
 * or the consumer ending the iteration (`break`: reason `the stream was closed`) — cancels
 * the model call and stores the turn as interrupted (`turn_interrupted`) with the text
 * streamed so far; `return()` resolves once that is stored. `track` runs the turn (the
 * service's close-aware wrapper), handing it the turn span's context.
 */
export function chatStream(
  deps: RecallDeps,
  input: ChatInput,
  track: (work: (trace: TraceContext | undefined) => Promise<ChatResult>) => Promise<ChatResult>,
): AsyncIterableIterator<ChatStreamEvent> {
  return eventChannel<ChatStreamEvent>(
    async (emit, signal) => {
      const result = await track((trace) => chatTurn(deps, { ...input, signal }, emit, trace));
      return { type: 'done', result };
    },
    { signal: input?.signal, cutReason: STREAM_CLOSED },
  );
}
