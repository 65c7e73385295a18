import type { RunnableConfig } from '@langchain/core/runnables';
import { InvalidInputError } from '../errors.ts';

/**
 * Where a checkpoint lives: `(thread_id, checkpoint_ns, checkpoint_id)`, read from a
 * `RunnableConfig` and checked at the boundary, since all three become parts of database keys
 * (no NUL character, which PostgreSQL's text cannot hold; bounded length: an LMDB key holds at
 * most 1978 bytes in all).
 *
 * `thread_id` may be a string or a finite number (taken as its decimal string, as SQL savers
 * store it); `checkpoint_ns` defaults to `''` (the root graph).
 */
export interface ThreadAddress {
  readonly threadId: string;
  readonly checkpointNs: string;
}

export interface CheckpointAddress extends ThreadAddress {
  /** Undefined: the thread's latest checkpoint (a read) or no parent (a put). */
  readonly checkpointId: string | undefined;
}

const LIMITS = { thread_id: 256, checkpoint_ns: 1024, checkpoint_id: 128, task_id: 256, channel: 256 } as const;

export function checkKeyPart(field: keyof typeof LIMITS, value: unknown, options: { allowEmpty?: boolean } = {}): string {
  if (typeof value !== 'string') {
    throw new InvalidInputError('invalid_id', `${field} must be a string (got ${value === null ? 'null' : typeof value})`, { field });
  }
  if (value === '' && options.allowEmpty !== true) throw new InvalidInputError('invalid_id', `${field} must not be empty`, { field });
  if (value.includes('\u0000')) throw new InvalidInputError('invalid_id', `${field} must not contain a NUL character`, { field });
  if (Buffer.byteLength(value) > LIMITS[field]) {
    throw new InvalidInputError('invalid_id', `${field} is longer than ${LIMITS[field]} bytes`, { field });
  }
  return value;
}

export function threadIdOf(value: unknown): string {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (value === undefined) {
    throw new InvalidInputError('invalid_id', 'config.configurable.thread_id is required: the checkpointer stores state per thread', { field: 'thread_id' });
  }
  return checkKeyPart('thread_id', value);
}

/** The address in `config`; `thread_id` required. */
export function addressOf(config: RunnableConfig): CheckpointAddress {
  const configurable = config.configurable;
  if (configurable === undefined || configurable === null) {
    throw new InvalidInputError('invalid_id', 'config.configurable is required (with a thread_id)', { field: 'configurable' });
  }
  const threadId = threadIdOf(configurable['thread_id']);
  const ns = configurable['checkpoint_ns'] ?? '';
  const id = configurable['checkpoint_id'] ?? configurable['thread_ts'];
  return {
    threadId,
    checkpointNs: checkKeyPart('checkpoint_ns', ns, { allowEmpty: true }),
    checkpointId: id === undefined || id === '' ? undefined : checkKeyPart('checkpoint_id', id),
  };
}

/** The normalized config LangGraph expects back for a checkpoint. */
export function configOf(threadId: string, checkpointNs: string, checkpointId: string): RunnableConfig {
  return { configurable: { thread_id: threadId, checkpoint_ns: checkpointNs, checkpoint_id: checkpointId } };
}
