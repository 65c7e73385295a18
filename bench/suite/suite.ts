import { cpus, loadavg, totalmem, tmpdir } from 'node:os';
import { readFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { ADAPTERS } from './adapters/registry.ts';
import { Progress } from './progress.ts';
import { renderConsole } from './report/table.ts';
import { writeResults } from './report/write-results.ts';
import { type MachineInfo, type RunResult, type WorkloadId, type WorkloadResult } from './result-types.ts';
import { FULL, QUICK } from './sizes.ts';
import { PEER_INFOS, type AdapterId } from './types.ts';
import type { Workload } from './workload.ts';
import { WORKLOADS } from './workloads/index.ts';

/**
 * The benchmark suite: runs the selected workloads one after another, each over the selected
 * adapters (sequentially, in this process or in child processes), prints each workload's table
 * when it finishes, and writes the run to `outDir` (JSON, Markdown, SVG). An adapter limited to
 * some workloads (`info.workloads`) runs only there; one that cannot run here (`unavailable`,
 * say PostgreSQL without `MNEMO_PG_URL`) is skipped with a note in each workload it belongs to.
 */
export interface SuiteOptions {
  mode: 'quick' | 'full';
  /** Workloads to run; default all. */
  only?: readonly WorkloadId[];
  /** Adapters to include; default all. */
  adapters?: readonly AdapterId[];
  outDir: string;
  /** Progress bars and tables (default true). */
  verbose?: boolean;
  /** How the run was started, recorded with it. Default `npm run bench`. */
  command?: string;
  /** The ranked-search workload's corpus size, when not the mode's (`--ranked-size`). */
  rankedSize?: number;
}

export async function runSuite(options: SuiteOptions): Promise<{ run: RunResult; files: string[] }> {
  const startedAt = new Date().toISOString();
  const loadAtStart = loadavg()[0] ?? 0;
  const base = options.mode === 'quick' ? QUICK : FULL;
  const sizes = options.rankedSize === undefined ? base : { ...base, ranked: { ...base.ranked, size: options.rankedSize } };
  const adapters = ADAPTERS.filter((a) => options.adapters === undefined || options.adapters.includes(a.info.id));
  const selected: Workload[] = WORKLOADS.filter((w) => options.only === undefined || options.only.includes(w.id));
  const progress = new Progress(options.verbose ?? true);
  const results: WorkloadResult[] = [];
  try {
    for (const workload of selected) {
      progress.log(`[${workload.id}] ${workload.title}`);
      const mine = adapters.filter((a) => a.info.workloads === undefined || a.info.workloads.includes(workload.id));
      const skipped = mine.flatMap((a) => {
        const why = a.unavailable?.();
        return why === undefined ? [] : [`${a.info.label} skipped: ${why}.`];
      });
      const ready = mine.filter((a) => a.unavailable?.() === undefined);
      const result = await workload.run({
        mode: options.mode,
        sizes,
        adapters: ready.filter((a) => a.info.diagnostic !== true),
        withDiagnostics: ready,
        progress,
      });
      result.notes.push(...skipped);
      results.push(result);
      if (options.verbose ?? true) progress.print(renderConsole(result, [...adapters.map((a) => a.info), ...PEER_INFOS]));
    }
  } finally {
    progress.stop();
  }
  const run: RunResult = {
    schema: 1,
    mode: options.mode,
    command: options.command ?? 'npm run bench',
    startedAt,
    finishedAt: new Date().toISOString(),
    machine: machineInfo(loadAtStart),
    adapters: [...adapters.map((a) => a.info), ...PEER_INFOS.filter((p) => results.some((w) => w.rows.some((r) => r.adapter === p.id)))],
    workloads: results,
  };
  const files = writeResults(options.outDir, run);
  return { run, files };
}

function machineInfo(loadAtStart: number): MachineInfo {
  const version = (pkg: string): string => {
    try {
      const file = new URL(`../../node_modules/${pkg}/package.json`, import.meta.url);
      return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
    } catch {
      return 'unknown';
    }
  };
  const memory = new Database(':memory:');
  const sqliteVersion = (memory.prepare('select sqlite_version() as v').get() as { v: string }).v;
  memory.close();
  return {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.versions.node,
    platform: `${process.platform} ${process.arch}`,
    tmpdir: tmpdir(),
    loadAverage: { start: loadAtStart, end: loadavg()[0] ?? 0 },
    versions: {
      lmdb: version('lmdb'),
      'better-sqlite3': version('better-sqlite3'),
      sqlite: sqliteVersion,
      '@langchain/langgraph-checkpoint': version('@langchain/langgraph-checkpoint'),
      '@langchain/langgraph-checkpoint-sqlite': version('@langchain/langgraph-checkpoint-sqlite'),
      xstate: version('xstate'),
    },
  };
}
