import { MnemoError } from '../errors.ts';

/**
 * A summarization that produced nothing usable (the model answered with no text). The summary
 * provider logs it and tries again after the next turn; `summarize(id)` rejects with it.
 */
export class SummaryFailedError extends MnemoError {
  /** Always `'summary_failed'`. */
  readonly code = 'summary_failed';
  constructor(
    message: string,
    /** The conversation whose summary failed. */
    readonly conversationId: string,
  ) {
    super(message);
  }
}
