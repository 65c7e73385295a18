import { MnemoError } from '../errors.ts';

/**
 * The layered memory's own errors (bad input is the shared `InvalidInputError`; storage
 * failures are the store's `StorageError`). Each has a stable `code`.
 */

/** A call on a recall service after its `close()` (`memoryTools()`, a standalone service). */
export class RecallClosedError extends MnemoError {
  /** Always `'recall_closed'`. */
  readonly code = 'recall_closed';
  constructor() {
    super('the recall service is closed');
  }
}

/** The runtime has no layered memory (started with `recall: false`, or on storage other than LMDB or PostgreSQL). */
export class RecallUnavailableError extends MnemoError {
  /** Always `'recall_unavailable'`. */
  readonly code = 'recall_unavailable';
}

/** A scan sent to the search pool after it closed. */
export class SearchPoolClosedError extends MnemoError {
  /** Always `'pool_closed'`. */
  readonly code = 'pool_closed';
  constructor() {
    super('the search pool is closed');
  }
}

/** A call naming a user whose erasure (`eraseUser`) is running: retry after it (then the user has no data). */
export class UserErasingError extends MnemoError {
  /** Always `'user_erasing'`. */
  readonly code = 'user_erasing';
  constructor(
    /** The user being erased. */
    readonly userId: string,
  ) {
    super(`user ${JSON.stringify(userId.slice(0, 80))} is being erased; retry when the erasure has finished`);
  }
}

/** What a `RecallLimitError` says was exceeded (recall-limits.ts). */
export type RecallLimitCode = 'session_limit' | 'fork_limit' | 'search_terms_limit';

/** A call that would take a user past one of recall's limits (recall-limits.ts); nothing was written. */
export class RecallLimitError extends MnemoError {
  constructor(
    /** Which limit (see `RecallLimits`). */
    readonly code: RecallLimitCode,
    /** The limit in force. */
    readonly limit: number,
    message: string,
  ) {
    super(message);
  }
}
