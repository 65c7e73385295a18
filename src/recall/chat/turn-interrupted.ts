import { MnemoError } from '../../errors.ts';

/**
 * A chat turn cancelled through its `signal` (its client went away, or the server's stop
 * deadline passed) before its reply was stored. The user's row stays; the turn is stored as a
 * failed turn whose error code is `turn_interrupted`, so a reader can tell a cut-short turn
 * from a model or storage failure. `reason` is the signal's reason when it was a string.
 */
export class TurnInterruptedError extends MnemoError {
  /** Always `'turn_interrupted'`. */
  readonly code = 'turn_interrupted';

  constructor(
    /** The signal's reason when it was a string, else `'cancelled'`. */
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`the turn was interrupted: ${reason}`, options);
  }

  /** The error for a turn cancelled by `signal`. */
  static of(signal: AbortSignal, cause?: unknown): TurnInterruptedError {
    const reason = typeof signal.reason === 'string' ? signal.reason : 'cancelled';
    return new TurnInterruptedError(reason, cause === undefined ? undefined : { cause });
  }
}
