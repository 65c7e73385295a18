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

/**
 * Mnemo's own sentence for each code: what a failed turn's row, a fact's `judge_error`, an
 * extraction's `last_error` and an HTTP error's `detail` say. The message of an `LlmError` from
 * a provider is the provider's own text, for the log only.
 */
export const LLM_ERROR_SENTENCES: Readonly<Record<LlmErrorCode, string>> = {
  llm_auth: 'the model provider refused the API key',
  llm_rate_limited: 'the model provider is rate-limiting the calls; try again later',
  llm_bad_request: 'the model provider rejected the request',
  llm_unavailable: 'the model provider is unavailable; try again later',
  llm_timeout: 'the model did not answer in time',
  llm_aborted: 'the model call was cancelled',
  llm_error: 'the model’s answer could not be used',
};

/**
 * A failed model call, with a stable `code` (`LlmErrorCode`). Its `message` is the provider's
 * own text, for the log; its `sentence`, what is stored and served, is Mnemo's for the code.
 */
export class LlmError extends MnemoError {
  constructor(
    /** Why the call failed (see `LlmErrorCode`). */
    readonly code: LlmErrorCode,
    message: string,
    options?: { cause?: unknown; status?: number },
  ) {
    super(message, options);
    this.status = options?.status;
  }

  /** The HTTP status behind the failure, when there was one. */
  readonly status: number | undefined;

  /** The code's fixed sentence: the message is the provider's. */
  override get sentence(): string {
    return LLM_ERROR_SENTENCES[this.code] ?? LLM_ERROR_SENTENCES.llm_error;
  }
}
