import type { GenServerLogic, Pid } from './otp/index.ts';
import { genServer, sendAfter } from './otp/index.ts';
import type { SweepReport } from './retention-sweep.ts';

/**
 * The retention sweeper: a gen server that runs one tick of the retention sweep
 * (retention-sweep.ts) every `everyMs`; supervisors/retention-sup.ts starts it under the root.
 *
 * - The timer is the process's own (`sendAfter` to its pid: it dies with the process), armed
 *   again after each tick, so ticks never overlap and a slow tick delays the next rather than
 *   piling up.
 * - `call(pid, { type: 'sweep' })` runs a tick now, between timer ticks (a gen server handles
 *   one message at a time), and answers with its `SweepReport`; a failing tick rejects it.
 * - A failing timer tick (storage down) is dropped: it must not crash the process into its
 *   supervisor's restart intensity; the next tick tries again.
 * - Its cursors live in the tick `tick()` builds at init, so a restart starts the walks over,
 *   which costs one more pass and loses nothing.
 */
export interface RetentionSweeperOptions {
  /** Ms from the start, and from the end of each timer tick, to the next timer tick. */
  everyMs: number;
  /** Builds the tick when the process starts (it may be a restart). */
  tick: () => () => Promise<SweepReport>;
}

/** What `call` asks of the sweeper. */
export interface SweepCall {
  readonly type: 'sweep';
}

interface TickInfo {
  readonly type: 'tick';
}

export function retentionSweeper(options: RetentionSweeperOptions): GenServerLogic<void> {
  return genServer<{ tick: () => Promise<SweepReport>; pid: Pid }, void, SweepCall, never, TickInfo>({
    init: (_input, self) => {
      sendAfter(self.pid, { type: 'tick' }, options.everyMs);
      return { tick: options.tick(), pid: self.pid };
    },
    handleCall: (_request, _from, state) => state.tick(),
    async handleInfo(message, state) {
      if (message.type !== 'tick') return;
      await state.tick().catch(() => undefined);
      sendAfter(state.pid, { type: 'tick' }, options.everyMs);
    },
  });
}
