import type { Progress } from './progress.ts';
import type { WorkloadId, WorkloadResult } from './result-types.ts';
import type { Sizes } from './sizes.ts';
import type { AdapterFactory } from './types.ts';

/** What every workload gets; it returns its result, and the suite prints and writes it. */
export interface WorkloadContext {
  mode: 'quick' | 'full';
  sizes: Sizes;
  /** The adapters selected for this run, in table order (a workload uses those it applies to). */
  adapters: readonly AdapterFactory[];
  progress: Progress;
}

export interface Workload {
  id: WorkloadId;
  title: string;
  run(ctx: WorkloadContext): Promise<WorkloadResult>;
}
