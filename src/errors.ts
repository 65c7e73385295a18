/**
 * The root of Mnemo's error hierarchy. Every error a user can catch carries a stable `code`,
 * so callers branch on `err.code`, never on message text. Each layer defines its own
 * subclasses (and so its own codes) next to the code that throws them.
 */
export abstract class MnemoError extends Error {
  abstract readonly code: string;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Bad input at a public boundary. Nothing was stored or changed. */
export class InvalidInputError<C extends string = InvalidInputCode> extends MnemoError {
  constructor(
    readonly code: C,
    message: string,
    readonly details?: Readonly<Record<string, unknown>>,
  ) {
    super(message);
  }
}

export type InvalidInputCode =
  | 'invalid_message'
  | 'invalid_batch'
  | 'invalid_id'
  | 'invalid_option';
