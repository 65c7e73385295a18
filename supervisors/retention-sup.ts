/**
 * The retention sweeper, a child of the root after the memory and recall it sweeps:
 *
 *   └── retention_sweeper   src/retention-sweeper.ts: one tick of src/retention-sweep.ts
 *                           every `sweepEveryMs` (permanent; a restart starts the walks over,
 *                           which costs one more pass and loses nothing)
 *
 * Registered as `<runtime>_retention_sweeper`: `call(name, { type: 'sweep' })` runs a tick now.
 */
import type { ChildSpec } from '../src/otp/index.ts';
import { start } from '../src/otp/index.ts';
import type { SweepReport } from '../src/retention-sweep.ts';
import { retentionSweeper } from '../src/retention-sweeper.ts';

export interface RetentionSupOptions {
  runtime: string;
  sweepEveryMs: number;
  /** Builds the tick when the process starts (it may be a restart). */
  tick: () => () => Promise<SweepReport>;
}

export const retentionSweeperName = (runtime: string) => `${runtime}_retention_sweeper`;

export function retentionChildren(options: RetentionSupOptions): ChildSpec[] {
  return [
    {
      id: 'retention_sweeper',
      restart: 'permanent',
      shutdown: 30_000,
      start: () => start(retentionSweeper({ everyMs: options.sweepEveryMs, tick: options.tick }), { name: retentionSweeperName(options.runtime) }),
    },
  ];
}
