import { InvalidInputError } from '../../errors.ts';

/**
 * Recall's `embeddings` option: an OpenAI-compatible `POST /embeddings` endpoint whose vectors
 * join BM25 in `recall.search` and in the ranking of long-term facts (hybrid, by reciprocal
 * rank fusion). Absent: BM25 alone, nothing is queued, nothing is called.
 *
 * Every field but `model` has a default (`resolveEmbeddingsOptions` fills them and rejects a
 * bad value with `InvalidInputError` `invalid_option`).
 */
export interface EmbeddingsOptions {
  /** The server's `/v1` root, e.g. `http://127.0.0.1:8000/v1`. Default: `OPENAI_BASE_URL`, else OpenAI's. */
  baseURL?: string;
  /** Default: `OPENAI_API_KEY`, else `'none'` (a local server usually wants no key). */
  apiKey?: string;
  /** The embedding model, e.g. `text-embedding-3-small`. Required. */
  model: string;
  /** Sent as `dimensions` when set (text-embedding-3 models can shorten vectors). Default: the model's. */
  dimensions?: number;
  /** Rows per request. Default 64. */
  batchSize?: number;
  /** Requests per minute at most (a token bucket, bursts up to `burst`). Default 60. */
  requestsPerMinute?: number;
  /** Requests the bucket holds when full. Default 5. */
  burst?: number;
  /** Attempts of one row before it goes to the dead letters. Default 5. */
  maxAttempts?: number;
  /** Per request of the drain, ms. Default 30 000. */
  timeoutMs?: number;
  /** A query's own embedding, ms: past it the query answers BM25 (and says so). Default 5000. */
  queryTimeoutMs?: number;
  /** First retry delay after a 429/5xx/timeout, ms, doubled per failure up to 60 000. Default 1000. */
  retryBaseMs?: number;
  /** Candidates from each ranking fused by RRF. Default 50. */
  candidates?: number;
  /** Vectors of a user above which the brute-force scan runs on the search pool. Default 20 000. */
  poolThreshold?: number;
  /** Characters of a row sent to the endpoint (the rest is cut). Default 8000. */
  maxChars?: number;
}

export type ResolvedEmbeddingsOptions = Required<Omit<EmbeddingsOptions, 'baseURL' | 'dimensions'>> &
  Pick<EmbeddingsOptions, 'baseURL' | 'dimensions'>;

export const EMBEDDINGS_DEFAULTS = {
  batchSize: 64,
  requestsPerMinute: 60,
  burst: 5,
  maxAttempts: 5,
  timeoutMs: 30_000,
  queryTimeoutMs: 5_000,
  retryBaseMs: 1000,
  candidates: 50,
  poolThreshold: 20_000,
  maxChars: 8000,
} as const;

export function resolveEmbeddingsOptions(options: EmbeddingsOptions, env: NodeJS.ProcessEnv = process.env): ResolvedEmbeddingsOptions {
  if (typeof options !== 'object' || options === null) throw bad('embeddings must be an object');
  if (typeof options.model !== 'string' || options.model.trim() === '') throw bad('embeddings.model must be a non-empty string');
  const positive = (name: keyof typeof EMBEDDINGS_DEFAULTS, min = 1): number => {
    const v = options[name] ?? EMBEDDINGS_DEFAULTS[name];
    if (typeof v !== 'number' || !Number.isFinite(v) || v < min || (name !== 'requestsPerMinute' && !Number.isInteger(v))) {
      throw bad(`embeddings.${name} must be a number >= ${min}, got ${String(v)}`);
    }
    return v;
  };
  if (options.dimensions !== undefined && (!Number.isInteger(options.dimensions) || options.dimensions < 1)) {
    throw bad(`embeddings.dimensions must be an integer >= 1, got ${String(options.dimensions)}`);
  }
  const baseURL = options.baseURL ?? (env['OPENAI_BASE_URL']?.trim() || undefined);
  return {
    model: options.model.trim(),
    apiKey: options.apiKey ?? (env['OPENAI_API_KEY']?.trim() || 'none'),
    ...(baseURL === undefined ? {} : { baseURL }),
    ...(options.dimensions === undefined ? {} : { dimensions: options.dimensions }),
    batchSize: Math.min(positive('batchSize'), 2048),
    requestsPerMinute: positive('requestsPerMinute', Number.MIN_VALUE),
    burst: positive('burst'),
    maxAttempts: positive('maxAttempts'),
    timeoutMs: positive('timeoutMs'),
    queryTimeoutMs: positive('queryTimeoutMs'),
    retryBaseMs: positive('retryBaseMs', 0),
    candidates: Math.min(positive('candidates'), 1000),
    poolThreshold: positive('poolThreshold', 0),
    maxChars: positive('maxChars'),
  };
}

function bad(message: string): InvalidInputError {
  return new InvalidInputError('invalid_option', message, { field: 'embeddings' });
}
