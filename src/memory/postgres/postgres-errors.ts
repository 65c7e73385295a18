import { DatabaseError } from 'pg';
import { MnemoError } from '../../errors.ts';
import { StorageError } from '../contract/memory-errors.ts';

/**
 * How a PostgreSQL failure reaches the caller. Bad input never gets here (it is an
 * `InvalidInputError`, thrown before any SQL); what is left is the database:
 *
 * - `storage_unavailable` (`StorageUnavailableError`): the server could not be reached or
 *   went away: connection refused or reset, server shutting down, starting up or in recovery,
 *   too many connections, a read-only standby. Transient: the store keeps working once the
 *   server is back, with no reconnect call. `details.maybeStored` is `true` when a write was in
 *   flight as the connection dropped: the commit may or may not have happened (the classic
 *   lost-acknowledgement case), so read `lastId`/`tail` before retrying. `false` means the
 *   write certainly did not happen.
 * - `StorageError('storage_full')`: the server's disk is full (SQLSTATE 53100); nothing stored.
 * - `StorageError('storage_failed')`: the server refused the statement for another reason
 *   (permissions, a missing database, ...); nothing stored.
 */
export class StorageUnavailableError extends StorageError {
  /** Always `'storage_unavailable'`. */
  declare readonly code: 'storage_unavailable';
  /** Whether a write may have been stored after all, and which operation failed. */
  declare readonly details: Readonly<{
    /** `true`: a write was in flight as the connection dropped; read before retrying. */
    maybeStored: boolean;
    /** What was running. */
    operation: PostgresOperation;
  }>;

  constructor(message: string, details: Readonly<{ maybeStored: boolean; operation: PostgresOperation }>, options?: { cause?: unknown }) {
    super('storage_unavailable', message, details, options);
  }
}

/** The operation a `StorageUnavailableError` interrupted. */
export type PostgresOperation = 'append' | 'clear' | 'read' | 'migrate';

/** SQLSTATEs that mean "the server is not there right now" rather than "your statement failed". */
const UNAVAILABLE_STATES = new Set([
  '57P01', // admin_shutdown: pg_ctl stop/restart -m fast
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: starting up, shutting down, in recovery
  '57P05', // idle_session_timeout
  '53300', // too_many_connections
  '25006', // read_only_sql_transaction: connected to a standby (failover in progress)
]);

/**
 * Turns whatever `pg` threw into Mnemo's typed errors. `sent` says whether the statement had
 * been handed to the server: a connection lost after that leaves a write's outcome unknown.
 */
export function toStorageError(
  error: unknown,
  context: { operation: PostgresOperation; conversationId?: string; sent: boolean },
): MnemoError {
  if (error instanceof MnemoError) return error;
  const where = context.conversationId === undefined ? '' : ` (${context.conversationId})`;
  const isWrite = context.operation === 'append' || context.operation === 'clear';
  if (error instanceof DatabaseError) {
    const state = error.code ?? '';
    if (state.startsWith('08') || UNAVAILABLE_STATES.has(state)) {
      // An error before ReadyForQuery means the implicit transaction did not commit (a fast
      // shutdown's 57P01 is raised only where interrupts are allowed, never mid-commit) -
      // except after a crash of another backend (57P02), which kills sessions at any instant.
      const anyInstant = state === '57P02' || state.startsWith('08');
      return new StorageUnavailableError(`PostgreSQL is unavailable: ${context.operation}${where} failed [${state}]`, {
        maybeStored: anyInstant && isWrite && context.sent,
        operation: context.operation,
      }, { cause: error });
    }
    if (state === '53100') {
      return new StorageError('storage_full', `PostgreSQL's disk is full: ${context.operation}${where} stored nothing`, { sqlstate: state }, { cause: error });
    }
    return new StorageError('storage_failed', `PostgreSQL refused ${context.operation}${where} [${state}]: ${error.message}`, { sqlstate: state }, { cause: error });
  }
  // Anything else `pg` throws is about the connection: refused, reset, terminated, timed out.
  return new StorageUnavailableError(`PostgreSQL is unavailable: ${context.operation}${where} failed (${describe(error)})`, {
    maybeStored: isWrite && context.sent,
    operation: context.operation,
  }, { cause: error });
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' ? `${code}: ${error.message}` : error.message;
  }
  return String(error);
}
