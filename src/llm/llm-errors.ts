import { MnemoError } from '../errors.ts';

/**
 * Why an LLM call failed, as a stable code:
 * - `llm_auth`: the key was refused (401/403); retrying will not help.
 * - `llm_rate_limited`: 429 after the adapter's bounded retries.
 * - `llm_bad_request`: the server rejected the request (400/404/409/422); fix the request.
 * - `llm_unavailable`: 5xx or a connection failure, after the bounded retries.
 * - `llm_timeout`: no answer within the adapter's timeout.
 * - `llm_aborted`: the caller's `AbortSignal` fired.
 * - `llm_error`: anything else (a malformed answer, or a custom service throwing a plain error).
 */
export type LlmErrorCode =
  | 'llm_auth'
  | 'llm_rate_limited'
  | 'llm_bad_request'
  | 'llm_unavailable'
  | 'llm_timeout'
  | 'llm_aborted'
  | 'llm_error';

export class LlmError extends MnemoError {
  constructor(
    readonly code: LlmErrorCode,
    message: string,
    options?: { cause?: unknown; status?: number },
  ) {
    super(message, options);
    this.status = options?.status;
  }

  /** The HTTP status behind the failure, when there was one. */
  readonly status: number | undefined;
}
