import type OpenAI from 'openai';
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionContentPart,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
  ChatCompletionToolChoiceOption,
} from 'openai/resources/chat/completions';
import type { Message, ToolCall } from '../message.ts';
import { LlmError } from './llm-errors.ts';
import type { ChatOptions, LlmResponse, LlmService, ToolChoice, Usage } from './llm-service.ts';
import type { LlmStreamEvent } from './llm-service.ts';
import { tracedLlm } from './traced-llm.ts';

/** What `openAICompatible` takes. */
export interface OpenAICompatibleOptions {
  /** The server's API key (sent as a bearer token). */
  apiKey: string;
  /** The server's `/v1` root, e.g. `http://127.0.0.1:8000/v1`. Default: `OPENAI_BASE_URL`
   *  when set (the client reads it), else OpenAI's. */
  baseURL?: string;
  /** The model to call, e.g. `'gpt-4o-mini'`. */
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
 * `stream` is the same call with `stream: true` (see below).
 */
export function openAICompatible(options: OpenAICompatibleOptions): LlmService {
  // The client (and the `openai` package) is loaded at the first call: an application that
  // never calls the model does not pay for it.
  let client: Promise<OpenAI> | undefined;
  const clientOf = (): Promise<OpenAI> =>
    (client ??= loadOpenAI().then(
      (OpenAIClient) =>
        new OpenAIClient({
          apiKey: options.apiKey,
          // Omitted, not null, when unset: null would turn off the client's own OPENAI_BASE_URL default.
          ...(options.baseURL === undefined ? {} : { baseURL: options.baseURL }),
          maxRetries: options.maxRetries ?? 2,
          timeout: options.timeoutMs ?? 60_000,
        }),
    ));
  const requestBody = (messages: readonly Message[], chatOptions: ChatOptions): ChatCompletionCreateParamsNonStreaming => {
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
    return body;
  };
  return tracedLlm({
    async chat(messages, chatOptions: ChatOptions = {}): Promise<LlmResponse> {
      let completion: ChatCompletion;
      try {
        completion = await (await clientOf()).chat.completions.create(requestBody(messages, chatOptions), { signal: chatOptions.signal });
      } catch (err) {
        throw toLlmError(err, await loadOpenAI());
      }
      return fromCompletion(completion);
    },

    // The same call with `stream: true`: text deltas as they arrive, tool calls assembled from
    // their `delta.tool_calls[i]` pieces (each complete once a later index starts, or at the
    // end). Retries happen only before the first chunk (the client's own rule).
    async *stream(messages, chatOptions: ChatOptions = {}): AsyncGenerator<LlmStreamEvent> {
      const body: ChatCompletionCreateParamsStreaming = {
        ...requestBody(messages, chatOptions),
        stream: true,
        stream_options: { include_usage: true },
      };
      const signal = chatOptions.signal;
      let chunks: AsyncIterable<ChatCompletionChunk>;
      try {
        chunks = await (await clientOf()).chat.completions.create(body, { signal });
      } catch (err) {
        throw toLlmError(err, await loadOpenAI());
      }
      const calls = new ToolCallAssembler();
      let content: string | null = null;
      let finishReason: string | undefined;
      let usage: Usage | undefined;
      try {
        for await (const chunk of chunks) {
          if (chunk.usage) {
            const { prompt_tokens, completion_tokens, total_tokens } = chunk.usage;
            usage = { prompt_tokens, completion_tokens, total_tokens };
          }
          const choice = chunk.choices?.[0];
          if (!choice) continue;
          const text = choice.delta?.content;
          if (typeof text === 'string' && text !== '') {
            content = (content ?? '') + text;
            yield { type: 'text', delta: text };
          }
          for (const piece of choice.delta?.tool_calls ?? []) {
            for (const call of calls.add(piece)) yield { type: 'tool_call', call };
          }
          if (choice.finish_reason) finishReason = choice.finish_reason;
        }
      } catch (err) {
        throw toLlmError(err, await loadOpenAI());
      }
      // The client ends an aborted stream quietly, as if it were complete: it is not.
      if (signal?.aborted) throw new LlmError('llm_aborted', 'the call was aborted', { cause: signal.reason });
      for (const call of calls.finish()) yield { type: 'tool_call', call };
      const response: LlmResponse = { content };
      if (calls.all.length > 0) response.tool_calls = calls.all;
      if (finishReason) response.finish_reason = finishReason;
      if (usage) response.usage = usage;
      yield { type: 'done', response };
    },
  }, { provider: 'openai', model: options.model });
}

/**
 * Tool calls from their streamed pieces: the first piece of index i carries the id and name,
 * later ones append to the arguments. Calls come out in index order, each once.
 */
class ToolCallAssembler {
  readonly all: ToolCall[] = [];
  private readonly byIndex = new Map<number, ToolCall>();
  private emitted = 0;

  /** Takes one piece; returns the calls it completed (those below a newly started index). */
  add(piece: ChatCompletionChunk.Choice.Delta.ToolCall): ToolCall[] {
    let call = this.byIndex.get(piece.index);
    const started = call === undefined;
    if (call === undefined) {
      call = { id: '', type: 'function', function: { name: '', arguments: '' } };
      this.byIndex.set(piece.index, call);
      this.all.push(call);
    }
    if (piece.id) call.id = piece.id;
    if (piece.function?.name) call.function.name += piece.function.name;
    if (piece.function?.arguments) call.function.arguments += piece.function.arguments;
    return started ? this.take(this.all.length - 1) : [];
  }

  /** The calls not handed out yet. */
  finish(): ToolCall[] {
    return this.take(this.all.length);
  }

  private take(upTo: number): ToolCall[] {
    const done = this.all.slice(this.emitted, upTo);
    this.emitted = Math.max(this.emitted, upTo);
    return done;
  }
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

let openAIModule: Promise<typeof OpenAI> | undefined;

/** The `openai` package's client class, imported once, when first needed. */
function loadOpenAI(): Promise<typeof OpenAI> {
  return (openAIModule ??= import('openai').then((m) => m.default));
}

function toLlmError(err: unknown, OpenAI: typeof import('openai').default): LlmError {
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
