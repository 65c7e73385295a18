/**
 * The retention sweeper, a child of the root after the memory and recall it sweeps:
 *
 *   └── retention_sweeper   one tick of src/retention-sweep.ts every `sweepEveryMs`
 *                           (permanent; its cursors live in its state, so a restart starts
 *                           the walks over, which costs one more pass and loses nothing)
 *
 * The timer is the process's own (`sendAfter` to its pid: it dies with the process), armed
 * again after each tick, so ticks never overlap and a slow tick delays the next rather than
 * piling up. `call(name, { type: 'sweep' })` runs a tick now, between timer ticks (a gen
 * server handles one message at a time).
 */
import type { ChildSpec, Pid } from '../src/otp/index.ts';
import { genServer, sendAfter, start } from '../src/otp/index.ts';
import type { SweepReport } from '../src/retention-sweep.ts';

export interface RetentionSupOptions {
  runtime: string;
  sweepEveryMs: number;
  /** Builds the tick when the process starts (it may be a restart). */
  tick: () => () => Promise<SweepReport>;
}

export const retentionSweeperName = (runtime: string) => `${runtime}_retention_sweeper`;

interface TickInfo {
  readonly type: 'tick';
}

interface SweepCall {
  readonly type: 'sweep';
}

export function retentionChildren(options: RetentionSupOptions): ChildSpec[] {
  const sweeper: ChildSpec = {
    id: 'retention_sweeper',
    restart: 'permanent',
    shutdown: 30_000,
    start: () =>
      start(
        genServer<{ tick: () => Promise<SweepReport>; pid: Pid }, void, SweepCall, never, TickInfo>({
          init: (_input, self) => {
            sendAfter(self.pid, { type: 'tick' }, options.sweepEveryMs);
            return { tick: options.tick(), pid: self.pid };
          },
          handleCall: (_request, _from, state) => state.tick(),
          async handleInfo(message, state) {
            if (message.type !== 'tick') return;
            // A failing tick (storage down) must not crash this process into the root's restart
            // intensity: the next tick tries again.
            await state.tick().catch(() => undefined);
            sendAfter(state.pid, { type: 'tick' }, options.sweepEveryMs);
          },
        }),
        { name: retentionSweeperName(options.runtime) },
      ),
  };
  return [sweeper];
}
