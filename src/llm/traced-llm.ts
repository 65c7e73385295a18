/**
 * `tracedLlm(service, {provider, model})`: an `LlmService` whose `chat` and `stream` are each one
 * model-call span of the GenAI conventions (telemetry/gen-ai.ts: `chat {model}`, kind CLIENT, the
 * provider and model, and from the answer its finish reason and token usage); the service is
 * otherwise the same (its errors, its streaming). Without a tracer provider the spans are no-ops.
 */
import type { Attributes, Span } from '@opentelemetry/api';
import {
  GEN_AI_FINISH_REASONS,
  GEN_AI_INPUT_TOKENS,
  GEN_AI_OPERATION,
  GEN_AI_OUTPUT_TOKENS,
  GEN_AI_PROVIDER,
  GEN_AI_REQUEST_MODEL,
} from '../telemetry/gen-ai.ts';
import { SPAN_KIND, tracedStream, withLeafSpan } from '../telemetry/tracing.ts';
import type { ChatOptions, LlmResponse, LlmService } from './llm-service.ts';

export interface ModelInfo {
  /** `gen_ai.provider.name`: `openai` for any OpenAI-compatible server, `mnemo` for the offline fallback. */
  provider: string;
  model: string;
}

export function tracedLlm<S extends LlmService>(service: S, info: ModelInfo): S {
  const name = `chat ${info.model}`;
  const attributes: Attributes = { [GEN_AI_OPERATION]: 'chat', [GEN_AI_PROVIDER]: info.provider, [GEN_AI_REQUEST_MODEL]: info.model };
  // The call is the application's code (its HTTP client's spans nest under the model call's).
  const client = (options: ChatOptions | undefined) => ({ kind: SPAN_KIND.CLIENT, parent: options?.traceContext, activate: true });
  const stream = service.stream?.bind(service);
  return {
    ...service,
    chat: (messages, options) =>
      withLeafSpan(
        name,
        attributes,
        // A span that records nothing gets the call's own promise (no `then` of ours).
        (span) => (span.isRecording() ? service.chat(messages, options).then((response) => recordResponse(span, response)) : service.chat(messages, options)),
        client(options),
      ),
    ...(stream === undefined
      ? {}
      : {
          stream: (messages, options) =>
            tracedStream(name, attributes, () => stream(messages, options), (span, event) => {
              if (event.type === 'done') recordResponse(span, event.response);
            }, client(options)),
        }),
  };
}

function recordResponse(span: Span, response: LlmResponse): LlmResponse {
  if (response.finish_reason !== undefined) span.setAttribute(GEN_AI_FINISH_REASONS, [response.finish_reason]);
  if (response.usage !== undefined) {
    span.setAttribute(GEN_AI_INPUT_TOKENS, response.usage.prompt_tokens);
    span.setAttribute(GEN_AI_OUTPUT_TOKENS, response.usage.completion_tokens);
  }
  return response;
}

