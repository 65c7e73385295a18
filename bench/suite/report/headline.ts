/**
 * The headline figures: twelve rows chosen from a run of the suite (bench/results/latest.json),
 * each Mnemo beside the anchor it is measured against, rendered as one Markdown table between
 * `<!-- figures:begin -->` and `<!-- figures:end -->` in the pages that show current figures
 * (README.md, docs/benchmarks.md). The pages never carry a figure typed by hand: `npx tsx
 * bench/figures.ts` rewrites them from the results, `--check` fails when they differ, and
 * test/docs/figures.test.ts runs that check.
 *
 * A row whose workload, size or store is missing from the run says so ("not in this run"): a
 * figure is never invented, and the table keeps its rows.
 */
import type { ResultRow, RunResult } from '../result-types.ts';
import { formatNumber } from './table.ts';

export const BEGIN = '<!-- figures:begin (rendered by `npx tsx bench/figures.ts` from bench/results/latest.json) -->';
export const END = '<!-- figures:end -->';

interface Headline {
  label: string;
  workload: string;
  x: number;
  metric: string;
  anchor: string;
  /** Higher is better (throughput) or lower is better (time, bytes). */
  better: 'higher' | 'lower';
  digits: number;
}

export const HEADLINES: readonly Headline[] = [
  { label: 'durable appends/s, one conversation (`commit`)', workload: 'commit', x: 1, metric: 'appendsPerSec', anchor: 'sqlite', better: 'higher', digits: 0 },
  { label: 'durable appends/s, 1,000 conversations × 20 (`append`)', workload: 'append', x: 1000, metric: 'opsPerSec', anchor: 'raw-lmdb', better: 'higher', digits: 0 },
  { label: 'append p99 ms, 1,000 conversations (`append`)', workload: 'append', x: 1000, metric: 'p99Ms', anchor: 'raw-lmdb', better: 'lower', digits: 1 },
  { label: 'last-50 read p50 ms, 100k messages (`tail`)', workload: 'tail', x: 100_000, metric: 'p50Ms', anchor: 'sqlite', better: 'lower', digits: 3 },
  { label: 'chat turns/s, 100 sessions, offline reply (`chat`)', workload: 'chat', x: 100, metric: 'turnsPerSec', anchor: 'jsonl', better: 'higher', digits: 0 },
  { label: 'import + open + first read ms, 100k messages, fresh process (`startup`)', workload: 'startup', x: 100_000, metric: 'totalMs', anchor: 'raw-lmdb', better: 'lower', digits: 1 },
  { label: 'open + first read ms, 1M messages (`restart`)', workload: 'restart', x: 1_000_000, metric: 'firstReadMs', anchor: 'raw-lmdb', better: 'lower', digits: 1 },
  { label: 'ranked search p50 ms, 1M messages, a common word (`ranked`)', workload: 'ranked', x: 1_000_000, metric: 'commonP50Ms', anchor: 'sqlite-fts5', better: 'lower', digits: 2 },
  { label: 'ranked index build s, 200k messages (`index-build`)', workload: 'index-build', x: 200_000, metric: 'buildS', anchor: 'sqlite-fts5', better: 'lower', digits: 2 },
  { label: 'bytes on disk per message, 100k in 1,000 conversations (`disk`)', workload: 'disk', x: 100_000, metric: 'bytesPerMessage', anchor: 'sqlite', better: 'lower', digits: 0 },
  { label: 'the same, each store compacted by its own maintenance (Mnemo `compact --rebuild`, SQLite `VACUUM`)', workload: 'disk', x: 100_000, metric: 'compactedPerMessage', anchor: 'sqlite', better: 'lower', digits: 0 },
  { label: 'RSS bytes per live conversation, 100k live (`live`)', workload: 'live', x: 100_000, metric: 'bytesPerConversation', anchor: 'target', better: 'lower', digits: 0 },
];

/** The ratio cell of a row the run did not measure (its workload or size was not run). */
export const NOT_MEASURED = 'not in this run';

/** The 4 KB a live conversation may cost (issue target), Erlang's process is ~2.7 KB. */
const LIVE_TARGET_BYTES = 4096;

function rowOf(run: RunResult, workload: string, adapter: string, x: number): ResultRow | undefined {
  const w = run.workloads.find((w) => w.id === workload);
  // x = -1: the workload has one size; take it.
  return w?.rows.find((r) => r.adapter === adapter && (x === -1 || r.x === x));
}

/** The table (and the line saying where it comes from) for `run`; `more` links to every table. */
export function renderHeadline(run: RunResult, more: string): string {
  const label = (id: string) => run.adapters.find((a) => a.id === id)?.label ?? id;
  const lines = ['| workload | Mnemo | anchor | Mnemo ÷ anchor |', '|---|---:|---:|---:|'];
  for (const h of HEADLINES) {
    const mine = rowOf(run, h.workload, 'mnemo-lmdb', h.x)?.metrics[h.metric];
    const theirs = h.anchor === 'target' ? LIVE_TARGET_BYTES : rowOf(run, h.workload, h.anchor, h.x)?.metrics[h.metric];
    const anchorName = h.anchor === 'target' ? 'the 4 KB target' : label(h.anchor);
    if (mine == null || theirs == null) {
      lines.push(`| ${h.label} | – | ${anchorName} – | ${NOT_MEASURED} |`);
      continue;
    }
    // Ratios read "how many times the anchor's figure": above 1 is ahead for throughput,
    // behind for times and bytes; the words say which.
    const ratio = mine / theirs;
    const ahead = h.better === 'higher' ? ratio >= 1 : ratio <= 1;
    lines.push(
      `| ${h.label} | ${formatNumber(mine, h.digits)} | ${anchorName} ${formatNumber(theirs, h.digits)} | ${ratio.toFixed(2)}x (${ahead ? 'ahead' : 'behind'}) |`,
    );
  }
  const m = run.machine;
  const day = run.startedAt.slice(0, 10);
  return [
    `${day}, ${m.cpus} × ${m.cpuModel}, ${m.memoryGiB} GiB, ${m.platform}, Node ${m.node}; \`${run.command.split(' (')[0]}\` (every table: ${more}).`,
    '',
    ...lines,
  ].join('\n');
}

/** `page` with the text between its markers replaced by `table`; the page must hold both markers. */
export function withHeadline(page: string, table: string): string {
  const begin = page.indexOf(BEGIN);
  const end = page.indexOf(END);
  if (begin === -1 || end < begin) throw new Error('the page has no figures markers');
  return `${page.slice(0, begin + BEGIN.length)}\n${table}\n${page.slice(end)}`;
}
