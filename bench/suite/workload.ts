import type { Progress } from './progress.ts';
import type { WorkloadId, WorkloadResult } from './result-types.ts';
import type { Sizes } from './sizes.ts';
import type { AdapterFactory } from './types.ts';

/** What every workload gets; it returns its result, and the suite prints and writes it. */
export interface WorkloadContext {
  mode: 'quick' | 'full';
  sizes: Sizes;
  /** The stores compared (selected for this run, diagnostics left out), in table order. */
  adapters: readonly AdapterFactory[];
  /** `adapters` plus the diagnostic ones (for the workload they explain). */
  withDiagnostics: readonly AdapterFactory[];
  progress: Progress;
}

export interface Workload {
  id: WorkloadId;
  title: string;
  run(ctx: WorkloadContext): Promise<WorkloadResult>;
}
