import { MnemoError } from '../../errors.ts';

/**
 * Errors of long-term facts. A stale write is `FactConflictError` (`memory_conflict`, HTTP 409):
 * the entry moved on since the version the caller read; nothing was written.
 */
export class FactConflictError extends MnemoError {
  /** Always `'memory_conflict'`. */
  readonly code = 'memory_conflict';
  constructor(
    /** The entry written to. */
    readonly id: string,
    /** The version the caller expected. */
    readonly expected: number,
    /** The entry's version now, and the id of its current successor when it has one. */
    readonly actual: {
      /** Its version now. */
      version: number;
      /** The id of its current successor, when it has one. */
      current?: string;
    },
  ) {
    super(
      `memory entry ${id} is at version ${actual.version}` +
        (actual.current && actual.current !== id ? ` (now ${actual.current})` : '') +
        `, not ${expected}: read it again and retry`,
    );
  }
}

/** No current entry of that id for this user (never was, another user's, or forgotten). */
export class FactNotFoundError extends MnemoError {
  /** Always `'memory_not_found'`. */
  readonly code = 'memory_not_found';
  constructor(
    /** The id asked for. */
    readonly id: string,
  ) {
    super(`no current memory entry ${id}`);
  }
}

/** The extraction model's answer was not the JSON asked for: one failed attempt of the job. */
export class ExtractionAnswerError extends MnemoError {
  readonly code = 'invalid_extraction_answer';
  constructor() {
    super('the model did not answer the JSON object asked for');
  }
}
