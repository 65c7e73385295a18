import OpenAI from 'openai';
import type {
  ChatCompletion,
  ChatCompletionContentPart,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
  ChatCompletionToolChoiceOption,
} from 'openai/resources/chat/completions';
import type { Message, ToolCall } from '../message.ts';
import { LlmError } from './llm-errors.ts';
import type { ChatOptions, LlmResponse, LlmService, ToolChoice } from './llm-service.ts';

export interface OpenAICompatibleOptions {
  apiKey: string;
  /** The server's `/v1` root, e.g. `http://127.0.0.1:8000/v1`. Default: `OPENAI_BASE_URL`
   *  when set (the client reads it), else OpenAI's. */
  baseURL?: string;
  model: string;
  /** Retries of 408/409/429/5xx and connection errors, with the client's own backoff
   *  (it honours `retry-after` / `retry-after-ms`). Default 2. */
  maxRetries?: number;
  /** Per attempt. Default 60 000 ms. */
  timeoutMs?: number;
  /** Sent with every call that does not name its own (`ChatOptions.temperature`). Default:
   *  none sent (the server's default). */
  temperature?: number;
}

/**
 * An `LlmService` over any OpenAI-compatible chat-completions server, on the official
 * `openai` client. Sends the OpenAI message shape (a stored message's `content_blocks` and any
 * extra fields stay behind: they are not part of that protocol), advertises tools as function
 * tools, and maps the first choice back to an `LlmResponse`. Failures become `LlmError`s.
 */
export function openAICompatible(options: OpenAICompatibleOptions): LlmService {
  const client = new OpenAI({
    apiKey: options.apiKey,
    // Omitted, not null, when unset: null would turn off the client's own OPENAI_BASE_URL default.
    ...(options.baseURL === undefined ? {} : { baseURL: options.baseURL }),
    maxRetries: options.maxRetries ?? 2,
    timeout: options.timeoutMs ?? 60_000,
  });
  return {
    async chat(messages, chatOptions: ChatOptions = {}): Promise<LlmResponse> {
      const body: ChatCompletionCreateParamsNonStreaming = {
        model: options.model,
        messages: messages.map(toWire),
      };
      const temperature = chatOptions.temperature ?? options.temperature;
      if (temperature !== undefined) body.temperature = temperature;
      if (chatOptions.tools && chatOptions.tools.length > 0) {
        body.tools = chatOptions.tools.map((t) => ({
          type: 'function',
          function: { name: t.name, description: t.description, parameters: t.parameters },
        }));
        if (chatOptions.toolChoice !== undefined) body.tool_choice = toWireChoice(chatOptions.toolChoice);
      }
      let completion: ChatCompletion;
      try {
        completion = await client.chat.completions.create(body, { signal: chatOptions.signal });
      } catch (err) {
        throw toLlmError(err);
      }
      return fromCompletion(completion);
    },
  };
}

function toWire(m: Message): ChatCompletionMessageParam {
  switch (m.role) {
    case 'system':
      return { role: 'system', content: m.content, ...(m.name ? { name: m.name } : {}) };
    case 'user':
      return {
        role: 'user',
        content: typeof m.content === 'string' ? m.content : (m.content as unknown as ChatCompletionContentPart[]),
        ...(m.name ? { name: m.name } : {}),
      };
    case 'assistant':
      return {
        role: 'assistant',
        content: m.content,
        ...(m.tool_calls && m.tool_calls.length > 0
          ? {
              tool_calls: m.tool_calls.map((tc) => ({
                id: tc.id,
                type: 'function' as const,
                function: { name: tc.function.name, arguments: tc.function.arguments },
              })),
            }
          : {}),
      };
    case 'tool':
      return { role: 'tool', tool_call_id: m.tool_call_id, content: m.content };
  }
}

function toWireChoice(choice: ToolChoice): ChatCompletionToolChoiceOption {
  return typeof choice === 'string' ? choice : { type: 'function', function: { name: choice.name } };
}

function fromCompletion(completion: ChatCompletion): LlmResponse {
  const choice = completion.choices?.[0];
  if (!choice) throw new LlmError('llm_error', 'the server answered with no choices');
  const toolCalls: ToolCall[] = [];
  for (const tc of choice.message.tool_calls ?? []) {
    if (tc.type === 'function') {
      toolCalls.push({ id: tc.id, type: 'function', function: { name: tc.function.name, arguments: tc.function.arguments } });
    }
  }
  const response: LlmResponse = { content: choice.message.content ?? null };
  if (toolCalls.length > 0) response.tool_calls = toolCalls;
  if (choice.finish_reason) response.finish_reason = choice.finish_reason;
  if (completion.usage) {
    const { prompt_tokens, completion_tokens, total_tokens } = completion.usage;
    response.usage = { prompt_tokens, completion_tokens, total_tokens };
  }
  return response;
}

function toLlmError(err: unknown): LlmError {
  if (err instanceof LlmError) return err;
  const message = err instanceof Error ? err.message : String(err);
  // Order matters: the timeout and abort errors are subclasses of the connection error.
  if (err instanceof OpenAI.APIUserAbortError) return new LlmError('llm_aborted', message, { cause: err });
  if (err instanceof OpenAI.APIConnectionTimeoutError) return new LlmError('llm_timeout', message, { cause: err });
  if (err instanceof OpenAI.APIConnectionError) return new LlmError('llm_unavailable', message, { cause: err });
  if (err instanceof OpenAI.APIError && typeof err.status === 'number') {
    const status = err.status;
    const code =
      status === 401 || status === 403 ? 'llm_auth'
      : status === 429 ? 'llm_rate_limited'
      : status === 408 ? 'llm_timeout'
      : status >= 500 ? 'llm_unavailable'
      : status >= 400 ? 'llm_bad_request'
      : 'llm_error';
    return new LlmError(code, message, { cause: err, status });
  }
  return new LlmError('llm_error', message, { cause: err });
}
