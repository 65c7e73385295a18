import { MnemoError } from '../../errors.ts';

/**
 * A write or read the storage could not carry out. The input was fine (bad input is an
 * `InvalidInputError`); what failed is the store. Every code leaves the store consistent:
 * a batch that failed is wholly absent, and the store stays usable.
 *
 * - `storage_full`: the storage has no room for the batch (disk or file size limit reached,
 *   LMDB map full). Nothing of the batch was stored; freeing space (e.g. `clear`) makes the
 *   store writable again.
 * - `storage_failed`: the commit failed for another reason (an I/O error the OS reported).
 *   Nothing of the batch was stored.
 * - `write_aborted`: the conversation's actor crashed before the batch was written. Nothing of
 *   the batch was stored; retrying is safe.
 * - `write_conflict`: another writer (a second store or process on the same LMDB environment)
 *   already stored a message under an id this batch was numbered with. Nothing of the batch
 *   was stored; the next write numbers after what is stored, so retrying is safe.
 * - `store_closed`: the store (or its runtime) was closed or stopped before the operation ran.
 * - `data_dir_locked`: another live process holds the LMDB data directory (`details.pid`,
 *   `details.hostname`); one directory serves one process. Nothing was opened; share memory
 *   between processes with the PostgreSQL backend.
 * - `storage_unavailable`: a storage server (PostgreSQL) could not be reached; `details` says
 *   whether the write may have been stored after all. The store recovers by itself.
 * - `environment_shared`: a compaction was refused, nothing done, because something else in the
 *   process holds the same LMDB environment (a standalone store or LangGraph saver over the
 *   directory; or another compaction runs): close it, then compact.
 */
export type StorageErrorCode =
  | 'storage_full'
  | 'storage_failed'
  | 'write_aborted'
  | 'write_conflict'
  | 'store_closed'
  | 'storage_unavailable'
  | 'data_dir_locked'
  | 'environment_shared';

/** A store's failure, with its code (see `StorageErrorCode` for what each guarantees). */
export class StorageError extends MnemoError {
  constructor(
    /** What failed (see `StorageErrorCode`). */
    readonly code: StorageErrorCode,
    message: string,
    /** More about it, by code (e.g. `data_dir_locked`: `pid`, `hostname`). */
    readonly details: Readonly<Record<string, unknown>> = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
