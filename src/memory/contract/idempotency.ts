import { InvalidInputError } from '../../errors.ts';
import type { AppendOptions } from './message-log.ts';

/**
 * Exactly-once appends: an append may carry an idempotency key. The conversation's single
 * writer looks the key up before it writes the batch (LMDB, in memory: synchronously, in the
 * write's event turn, see write-queue.ts; PostgreSQL: claimed first in the transaction); a key already stored (and younger
 * than the window) answers with the records it stored, and nothing new is stored. The key is
 * written in the same atomic step as the batch's messages, so a batch and its key are stored
 * together or not at all: a retry after a timeout, a lost acknowledgement or a SIGKILL either
 * finds the key (and gets the first attempt's records) or finds neither (and stores the batch).
 *
 * - Scope: per conversation (`[conversationId, key]`); `clear` forgets the conversation's keys.
 * - Window: a key is honoured for `IDEMPOTENCY_WINDOW_MS` (24 h) after its batch was stored,
 *   measured on the store's clock; older keys are treated as absent. Each backend says how they
 *   go, none by scanning everything at once (LMDB: a key is a field of its batch's first row,
 *   and the index in memory drops it as keyed writes come: key-index.ts).
 * - The key identifies the write: a retry returns what the first attempt stored, whatever
 *   entries the retry carries.
 */
export type { AppendOptions } from './message-log.ts';

/** How long a stored key is honoured: 24 hours. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;
/** A keyed write sweeps at least this often (store clock), when keyed writes come at all. */
export const KEY_SWEEP_EVERY_MS = 60 * 1000;
/** At most this many keys are examined (or removed) per sweep. */
export const KEY_SWEEP_LIMIT = 1000;
export const MAX_IDEMPOTENCY_KEY_LENGTH = 200;

/** A stored key: the batch it guards is ids `firstId .. firstId + count - 1`, stored at `at` (epoch ms). */
export interface KeyRecord {
  key: string;
  firstId: number;
  count: number;
  at: number;
}

/** Whether `record` is still honoured at `now`. */
export function keyIsLive(record: KeyRecord, now: number): boolean {
  return record.at > now - IDEMPOTENCY_WINDOW_MS;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function fail(reason: string): never {
  throw new InvalidInputError('invalid_option', `idempotencyKey ${reason}`, { option: 'idempotencyKey', reason });
}

export function validateIdempotencyKey(key: unknown): string {
  if (typeof key !== 'string') return fail('must be a string');
  if (key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH) fail(`must be 1-${MAX_IDEMPOTENCY_KEY_LENGTH} characters`);
  if (key.includes('\u0000')) fail('must not contain NUL');
  if (LONE_SURROGATE.test(key)) fail('must be well-formed Unicode (lone surrogate)');
  return key;
}

/** No options (shared: an append without options allocates none). */
const NO_OPTIONS: AppendOptions = Object.freeze({});

/** An append's options, checked: `{}` when none were given. */
export function validateAppendOptions(options: unknown): AppendOptions {
  if (options === undefined) return NO_OPTIONS;
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new InvalidInputError('invalid_option', 'append options must be an object {idempotencyKey?, onNumbered?, traceContext?}', { option: 'options' });
  }
  const { idempotencyKey, onNumbered, traceContext } = options as AppendOptions;
  if (onNumbered !== undefined && typeof onNumbered !== 'function') {
    throw new InvalidInputError('invalid_option', 'onNumbered must be a function', { option: 'onNumbered' });
  }
  if (traceContext !== undefined && typeof (traceContext as { getValue?: unknown } | null)?.getValue !== 'function') {
    throw new InvalidInputError('invalid_option', 'traceContext must be an OpenTelemetry Context', { option: 'traceContext' });
  }
  const checked: AppendOptions = {};
  if (idempotencyKey !== undefined) checked.idempotencyKey = validateIdempotencyKey(idempotencyKey);
  if (onNumbered !== undefined) checked.onNumbered = onNumbered;
  if (traceContext !== undefined) checked.traceContext = traceContext;
  return checked;
}
