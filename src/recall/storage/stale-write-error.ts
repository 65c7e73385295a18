import { MnemoError } from '../../errors.ts';

/**
 * A write that was one step of a longer operation found its guard gone (recall-store.ts
 * GUARDS): the user was erased since the operation began, a job lost its lease (erased, or
 * taken over after its lease expired), or the session it writes for was deleted meanwhile (a
 * summary's `appendSummary`). Nothing was written.
 */
export class StaleWriteError extends MnemoError {
  /** Always `'write_stale'`. */
  readonly code = 'write_stale';

  constructor(
    /**
     * `erased`: the user was erased meanwhile; `lease_lost`: the job's lease is gone;
     * `session_gone`: the session was deleted meanwhile.
     */
    readonly reason: 'erased' | 'lease_lost' | 'session_gone',
    /** The user. */
    readonly userId: string,
  ) {
    super(
      reason === 'erased'
        ? `user ${JSON.stringify(userId)} was erased while this call ran; nothing was stored`
        : reason === 'lease_lost'
          ? `a job of user ${JSON.stringify(userId)} lost its lease; nothing was stored`
          : `a session of user ${JSON.stringify(userId)} was deleted while this call ran; nothing was stored`,
    );
  }
}
