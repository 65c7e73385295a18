import type OpenAI from 'openai';
import { EmbeddingsError } from './embedding-errors.ts';
import type { ResolvedEmbeddingsOptions } from './embeddings-options.ts';

/**
 * The embeddings endpoint, on the official `openai` client: `embed(texts)` answers one vector
 * per text, in order, as Float32Array. The client's own retries are off (`maxRetries: 0`): the
 * drain (embed-drain.ts) retries with its own backoff and rate limit, and a query embedding
 * that fails falls back to BM25 at once rather than waiting. Vectors are asked as `float`
 * (every compatible server speaks it; base64 is an OpenAI extension). Failures become
 * `EmbeddingsError` with `retryable` set for 408/409/429/5xx, timeouts and connection errors.
 */
export interface EmbeddingsClient {
  readonly model: string;
  embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]>;
}

export function createEmbeddingsClient(options: ResolvedEmbeddingsOptions): EmbeddingsClient {
  // Made at the first request: the `openai` package loads only when embeddings are used.
  let client: Promise<OpenAI> | undefined;
  const clientOf = () =>
    (client ??= import('openai').then(
      ({ default: OpenAIClient }) =>
        new OpenAIClient({
          apiKey: options.apiKey,
          ...(options.baseURL === undefined ? {} : { baseURL: options.baseURL }),
          maxRetries: 0,
          timeout: options.timeoutMs,
        }),
    ));
  return {
    model: options.model,
    async embed(texts, signal) {
      if (texts.length === 0) return [];
      let answer: OpenAI.Embeddings.CreateEmbeddingResponse;
      try {
        answer = await (await clientOf()).embeddings.create(
          {
            model: options.model,
            input: [...texts],
            encoding_format: 'float',
            ...(options.dimensions === undefined ? {} : { dimensions: options.dimensions }),
          },
          signal === undefined ? {} : { signal },
        );
      } catch (error) {
        throw toEmbeddingsError(error, (await import('openai')).default);
      }
      const data = Array.isArray(answer?.data) ? answer.data : [];
      if (data.length !== texts.length) {
        throw new EmbeddingsError(`the endpoint answered ${data.length} vectors for ${texts.length} inputs`, false);
      }
      const out = new Array<Float32Array>(texts.length);
      for (const [i, item] of data.entries()) {
        const at = typeof item.index === 'number' ? item.index : i;
        const v = item.embedding as unknown;
        if (!Array.isArray(v) || v.length === 0 || at < 0 || at >= texts.length || out[at] !== undefined) {
          throw new EmbeddingsError('the endpoint answered a malformed embedding', false);
        }
        out[at] = Float32Array.from(v as number[]);
      }
      return out;
    },
  };
}

function toEmbeddingsError(error: unknown, OpenAI: typeof import('openai').default): EmbeddingsError {
  if (error instanceof EmbeddingsError) return error;
  if (error instanceof OpenAI.APIConnectionTimeoutError) return new EmbeddingsError('the embeddings request timed out', true, undefined, { cause: error });
  if (error instanceof OpenAI.APIConnectionError) return new EmbeddingsError(`cannot reach the embeddings endpoint: ${error.message}`, true, undefined, { cause: error });
  if (error instanceof OpenAI.APIError) {
    const status = error.status;
    const retryable = status === undefined || status === 408 || status === 409 || status === 429 || status >= 500;
    return new EmbeddingsError(`the embeddings endpoint answered ${status ?? 'an error'}: ${error.message}`, retryable, status, { cause: error });
  }
  if (error instanceof Error && error.name === 'AbortError') return new EmbeddingsError('the embeddings request was aborted', true, undefined, { cause: error });
  return new EmbeddingsError(`the embeddings request failed: ${String(error)}`, true, undefined, { cause: error });
}
