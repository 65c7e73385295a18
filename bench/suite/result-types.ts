import type { AdapterId, AdapterInfo, WorkloadId } from './types.ts';

export { WORKLOAD_IDS, type WorkloadId } from './types.ts';

/**
 * What a run produces, as written to `bench/results/*.json`. A workload's rows are one per
 * (adapter, x): x is what varies along the workload (concurrency, conversation length, corpus
 * size, ...); `metrics` are its measured values (null when not measured, with a `note`).
 */
export interface ResultRow {
  adapter: AdapterId;
  x: number;
  metrics: Record<string, number | null>;
  note?: string;
}

export interface Column {
  key: string;
  label: string;
  /** Fraction digits in tables. */
  digits: number;
}

/** A ratio column: `metric` of the row divided by the same metric of `baseline` at the same x. */
/**
 * The columns of a rate measured over `repeats` interleaved runs: the rate (`key`), its min and
 * max when there are repeats (`min<Key>`, `max<Key>`), and the p50/p99 latency.
 */
export function rateColumns(key: string, label: string, repeats: number): Column[] {
  const Key = key[0]!.toUpperCase() + key.slice(1);
  return [
    { key, label, digits: 0 },
    ...(repeats > 1
      ? [
          { key: `min${Key}`, label: 'min', digits: 0 },
          { key: `max${Key}`, label: 'max', digits: 0 },
        ]
      : []),
    { key: 'p50Ms', label: 'p50 ms', digits: 2 },
    { key: 'p99Ms', label: 'p99 ms', digits: 2 },
  ];
}

export interface RatioColumn {
  metric: string;
  baseline: AdapterId;
  label: string;
}

export interface ChartSpec {
  /** File name under the results dir. */
  file: string;
  kind: 'bars' | 'lines';
  title: string;
  metric: string;
  yLabel: string;
  logY: boolean;
  /** Lines only. */
  logX?: boolean;
}

export interface WorkloadResult {
  id: WorkloadId;
  title: string;
  /** What the figure means, one paragraph. */
  description: string;
  /** What x is, for table headers and axes. */
  xLabel: string;
  params: Record<string, number | string | boolean | number[]>;
  columns: Column[];
  ratios: RatioColumn[];
  rows: ResultRow[];
  charts: ChartSpec[];
  notes: string[];
  seconds: number;
}

export interface MachineInfo {
  cpus: number;
  cpuModel: string;
  memoryGiB: number;
  node: string;
  platform: string;
  tmpdir: string;
  versions: Record<string, string>;
  /** 1-minute load average when the run started and when it ended (the machine may be shared). */
  loadAverage: { start: number; end: number };
}

export interface RunResult {
  schema: 1;
  mode: 'quick' | 'full';
  /** How the run was started (e.g. `npm run bench -- --quick`). */
  command: string;
  startedAt: string;
  finishedAt: string;
  machine: MachineInfo;
  adapters: AdapterInfo[];
  workloads: WorkloadResult[];
}
