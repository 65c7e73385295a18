import { MnemoError } from '../../errors.ts';

/**
 * A write that was one step of a longer operation found its guard gone (recall-store.ts
 * GUARDS): the user was erased since the operation began, or a job lost its lease (erased, or
 * taken over after its lease expired). Nothing was written.
 */
export class StaleWriteError extends MnemoError {
  /** Always `'write_stale'`. */
  readonly code = 'write_stale';

  constructor(
    /** `erased`: the user was erased meanwhile; `lease_lost`: the job's lease is gone. */
    readonly reason: 'erased' | 'lease_lost',
    /** The user. */
    readonly userId: string,
  ) {
    super(
      reason === 'erased'
        ? `user ${JSON.stringify(userId)} was erased while this call ran; nothing was stored`
        : `a job of user ${JSON.stringify(userId)} lost its lease; nothing was stored`,
    );
  }
}
