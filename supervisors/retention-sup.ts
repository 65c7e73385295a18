/**
 * The retention sweeper, a child of the root after the memory and recall it sweeps:
 *
 *   └── retention_sweeper   src/retention/retention-sweeper.ts: asks for a round of
 *                           src/retention/retention-sweep.ts every `sweepEveryMs` (permanent;
 *                           a restart starts LMDB's walks over, which costs one more pass and
 *                           loses nothing; on PostgreSQL the walks resume from the sweep's job)
 *
 * Registered as `<runtime>_retention_sweeper`: `call(name, { type: 'sweep' })` runs a tick now.
 */
import type { ChildSpec } from '../src/otp/index.ts';
import { start } from '../src/otp/index.ts';
import { retentionSweeper } from '../src/retention/retention-sweeper.ts';
import type { SweepRounds } from '../src/retention/sweep-rounds.ts';

export interface RetentionSupOptions {
  runtime: string;
  sweepEveryMs: number;
  /** Builds the rounds when the process starts (it may be a restart). */
  rounds: () => SweepRounds;
}

export const retentionSweeperName = (runtime: string) => `${runtime}_retention_sweeper`;

export function retentionChildren(options: RetentionSupOptions): ChildSpec[] {
  return [
    {
      id: 'retention_sweeper',
      restart: 'permanent',
      shutdown: 30_000,
      start: () => start(retentionSweeper({ everyMs: options.sweepEveryMs, rounds: options.rounds }), { name: retentionSweeperName(options.runtime) }),
    },
  ];
}
