import type { SessionRow } from './recall/rows/row-types.ts';

/**
 * Names kept for one minor version after they were renamed (CHANGELOG: the migration table),
 * each deprecated: its replacement is named. `test/package/deprecated-names.test.ts` lists them.
 * The renamed methods of `Recall` are in `DEPRECATED_RECALL_METHODS` (recall-api.ts).
 */

/** @deprecated Use `SessionRow` (its fields are camelCase: `messageId`, `toolCalls`). */
export type MemoryRow = SessionRow;
