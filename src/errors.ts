/**
 * The root of Mnemo's error hierarchy. Every error a user can catch carries a stable `code`,
 * so callers branch on `err.code`, never on message text. Each layer defines its own
 * subclasses (and so its own codes) next to the code that throws them.
 *
 * What is stored and served about a failure (a failed turn's row, a fact's `judge_error`, an
 * extraction job's `last_error`) is an `ErrorRecord`: the code and the error's `sentence`,
 * never text from outside Mnemo. A model provider's answer can carry a masked key, an account
 * or an internal URL, so an error wrapping one says a fixed sentence of Mnemo's own for its
 * code instead; its message (the provider's words) goes to the log only.
 */
export abstract class MnemoError extends Error {
  /** The stable code callers branch on (`err.code`); each subclass documents its own. */
  abstract readonly code: string;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }

  /** What may be stored and served about this error: its message, unless a subclass wraps outside words. */
  get sentence(): string {
    return this.message;
  }
}

/** A failure as stored and served: `{code, message}`, the message being Mnemo's own sentence. */
export interface ErrorRecord {
  /** The error's stable code. */
  code: string;
  /** Mnemo's own sentence for it (`MnemoError.sentence`), never a provider's text. */
  message: string;
}

/** Said of an error that is not a `MnemoError`: its text is not Mnemo's, so it is not kept. */
export const FOREIGN_ERROR_SENTENCE = 'failed with an error from outside Mnemo (its text is logged, not stored)';

/** The record of `err`: a `MnemoError`'s code and sentence, else `foreignCode` and a fixed sentence. */
export function errorRecord(err: unknown, foreignCode: string): ErrorRecord {
  return err instanceof MnemoError ? { code: err.code, message: err.sentence } : { code: foreignCode, message: FOREIGN_ERROR_SENTENCE };
}

/** Bad input at a public boundary. Nothing was stored or changed. */
export class InvalidInputError<C extends string = InvalidInputCode> extends MnemoError {
  constructor(
    /** Which rule the input broke (`InvalidInputCode`, or a layer's own code such as `invalid_query`). */
    readonly code: C,
    message: string,
    /** What was wrong, when there is more to say than the message (e.g. `{ option: 'idleMs' }`). */
    readonly details?: Readonly<Record<string, unknown>>,
  ) {
    super(message);
  }
}

/**
 * The codes of `InvalidInputError` at the store and runtime boundary:
 * - `invalid_message`: a message (or its `meta`) a store cannot keep; details say which and why;
 * - `invalid_batch`: messages or entries that are not an array, or an entry that is not `{ message, meta? }`;
 * - `invalid_id`: an empty or otherwise unusable conversation, user or session id;
 * - `invalid_option`: an option or argument out of its range (details name it).
 */
export type InvalidInputCode =
  | 'invalid_message'
  | 'invalid_batch'
  | 'invalid_id'
  | 'invalid_option';
