import { MnemoError } from '../errors.ts';

/** `stale_parent`: the named parent is not the head; `exists`: the id is taken, under another parent. */
export type CheckpointConflictReason = 'stale_parent' | 'exists';

/**
 * A `put` that would fork a thread's checkpoint chain by accident: it names a parent that is
 * no longer the head of its `(thread_id, checkpoint_ns)`, because another writer advanced the
 * thread after this one read it. Nothing was written. The writer's state was computed from a
 * stale checkpoint, so it must re-read the thread (`getTuple`) and redo its step; branching
 * on purpose (time travel, editing an old checkpoint) is asked for with
 * `configurable.fork = true`.
 */
export class CheckpointConflictError extends MnemoError {
  /** Always `'checkpoint_conflict'`. */
  readonly code = 'checkpoint_conflict';

  constructor(
    /** Which put was refused and why. */
    readonly details: {
      /** The thread (`configurable.thread_id`). */
      readonly threadId: string;
      /** Its namespace (`configurable.checkpoint_ns`, `''` for the root graph). */
      readonly checkpointNs: string;
      /** The checkpoint the put tried to write. */
      readonly checkpointId: string;
      /** The parent it named (undefined: none). */
      readonly parentId: string | undefined;
      /** The thread's head when the put was refused (undefined: the thread is empty). */
      readonly headId: string | undefined;
      /** `stale_parent`: the parent is not the head; `exists`: the id is taken, under another parent. */
      readonly reason: CheckpointConflictReason;
    },
  ) {
    super(
      details.reason === 'exists'
        ? `checkpoint ${details.checkpointId} of thread ${details.threadId} already exists under another parent; nothing was written`
        : `thread ${details.threadId} (namespace '${details.checkpointNs}') moved on: the put ` +
            (details.parentId === undefined ? 'names no parent (its writer found the thread empty)' : `names parent ${details.parentId}`) +
            ` but the head is ${details.headId ?? 'none'}; nothing was written. Re-read the thread and retry, ` +
            'or pass configurable.fork = true to branch on purpose',
    );
  }
}
