import { runStartup, type StartupWay } from '../startup-run.ts';
import type { ResultRow } from '../result-types.ts';
import type { Workload } from '../workload.ts';

/**
 * Import + open + first read in a fresh process, the compiled package against raw lmdb-js on
 * the same files (bench/suite/startup-run.ts; `npx tsx bench/startup.ts` is the same, with a
 * `--baseline` build beside). Rows for the selected stores among raw lmdb-js, Mnemo's runtime
 * (`mnemo-lmdb`) and its standalone store (`mnemo-store`). Where the restart workload loads the
 * sources through tsx and times from the store's module on, this one loads what users install
 * and counts the import.
 */
export const startupWorkload: Workload = {
  id: 'startup',
  title: 'Import + open + first read, compiled package',
  async run(ctx) {
    const started = performance.now();
    const { messages, perConversation, runs } = ctx.sizes.startup;
    const chosen = new Set(ctx.withDiagnostics.map((a) => a.info.id));
    const ways = (['raw-lmdb', 'mnemo-lmdb', 'mnemo-store'] as const).filter((w) => chosen.has(w));
    const step = ctx.progress.step(`startup @ ${messages.toLocaleString('en-US')} msgs`, runs);
    const rows: ResultRow[] = runStartup({ messages, per: perConversation, runs, ways: ways as StartupWay[], onRound: () => step.tick() }).map((r) => ({
      adapter: r.way as Exclude<StartupWay, 'baseline'>,
      x: messages,
      metrics: { totalMs: r.totalMs, importMs: r.importMs, openMs: r.openMs, readMs: r.readMs, processMs: r.processMs },
      ...(r.rowsRead ? {} : { note: 'first read returned the wrong count' }),
    }));
    step.done();
    return {
      id: 'startup',
      title: this.title,
      description:
        'A fresh Node process that imports the compiled package, opens a store holding the data and reads one conversation (100 rows): Mnemo\'s runtime (startRuntime: the supervision tree, the journal, recall), its standalone store, and raw lmdb-js opening the same files. Lower is better.',
      xLabel: 'messages stored',
      params: { messages, perConversation, runs },
      columns: [
        { key: 'totalMs', label: 'import + open + read ms', digits: 1 },
        { key: 'importMs', label: 'import ms', digits: 1 },
        { key: 'openMs', label: 'open ms', digits: 1 },
        { key: 'readMs', label: 'read ms', digits: 2 },
        { key: 'processMs', label: 'process ms', digits: 0 },
      ],
      ratios: [{ metric: 'totalMs', baseline: 'raw-lmdb', label: 'time ÷ raw lmdb-js' }],
      rows,
      charts: [],
      notes: ['Median of the children, taking turns; page cache warm. The target: Mnemo\'s runtime ≤ 2.0x raw lmdb-js (issue 36).'],
      seconds: (performance.now() - started) / 1000,
    };
  },
};
