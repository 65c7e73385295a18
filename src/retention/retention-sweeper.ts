import type { GenServerLogic, Pid } from '../otp/index.ts';
import { genServer, sendAfter } from '../otp/index.ts';
import type { SweepReport } from './retention-sweep.ts';
import type { SweepRounds } from './sweep-rounds.ts';

/**
 * The retention sweeper: a gen server that asks for a round of the retention sweep
 * (retention-sweep.ts) every `everyMs`; supervisors/retention-sup.ts starts it under the root.
 * Whether this process runs the round, and from where, is its `SweepRounds`' (sweep-rounds.ts):
 * always on LMDB; on a shared database, the process that leases the sweep's job.
 *
 * - The timer is the process's own (`sendAfter` to its pid: it dies with the process), armed
 *   again after each tick, so ticks never overlap and a slow tick delays the next rather than
 *   piling up.
 * - `call(pid, { type: 'sweep' })` runs a round now, between timer ticks (a gen server handles
 *   one message at a time), and answers with its `SweepReport`; a failing round rejects it.
 * - A failing timer tick (storage down) is dropped: it must not crash the process into its
 *   supervisor's restart intensity; the next tick tries again.
 * - Its rounds are built at init (`rounds()`): on LMDB the cursors live in them, so a restart
 *   starts the walks over, which costs one more pass and loses nothing; on a shared database
 *   they live in the job.
 */
export interface RetentionSweeperOptions {
  /** Ms from the start, and from the end of each timer tick, to the next timer tick. */
  everyMs: number;
  /** Builds the rounds when the process starts (it may be a restart). */
  rounds: () => SweepRounds;
}

/** What `call` asks of the sweeper. */
export interface SweepCall {
  readonly type: 'sweep';
}

interface TickInfo {
  readonly type: 'tick';
}

export function retentionSweeper(options: RetentionSweeperOptions): GenServerLogic<void> {
  return genServer<{ rounds: SweepRounds; pid: Pid }, void, SweepCall, never, TickInfo>({
    init: (_input, self) => {
      sendAfter(self.pid, { type: 'tick' }, options.everyMs);
      return { rounds: options.rounds(), pid: self.pid };
    },
    handleCall: (_request, _from, state): Promise<SweepReport> => state.rounds.now(),
    async handleInfo(message, state) {
      if (message.type !== 'tick') return;
      await state.rounds.due().catch(() => undefined);
      sendAfter(state.pid, { type: 'tick' }, options.everyMs);
    },
  });
}
