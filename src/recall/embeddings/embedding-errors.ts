import { MnemoError } from '../../errors.ts';

/**
 * A failed call of the embeddings endpoint. `retryable`: a 408/409/429, a 5xx, a timeout or a
 * connection error (the drain retries with backoff); anything else (400, 401, a malformed
 * answer) is not, and counts an attempt against each row of the batch at once.
 */
export class EmbeddingsError extends MnemoError {
  /** Always `'embeddings_failed'`. */
  readonly code = 'embeddings_failed';
  constructor(
    message: string,
    /** Whether a later try may succeed (see above). */
    readonly retryable: boolean,
    /** The endpoint's HTTP status, when it answered. */
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  /** The message quotes the endpoint's own answer: only its status is kept. */
  override get sentence(): string {
    return this.status === undefined ? 'the embeddings endpoint could not be used' : `the embeddings endpoint answered ${this.status}`;
  }
}
