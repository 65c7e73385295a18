import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunResult, WorkloadResult } from '../result-types.ts';
import { formatNumber, formatRatio, renderMarkdownTable } from './table.ts';
import { renderChart } from './svg-chart.ts';

/**
 * Writes one run into `dir`: `run-<iso>.json` and `latest.json` (the whole RunResult),
 * `latest.md` (every workload's table with its meaning and notes), and each workload's charts
 * as `<name>.svg`. Returns the paths written.
 */
export function writeResults(dir: string, run: RunResult): string[] {
  mkdirSync(dir, { recursive: true });
  const written: string[] = [];
  const put = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    written.push(path);
  };
  const json = `${JSON.stringify(run, null, 2)}\n`;
  put(`run-${run.startedAt.replace(/[:.]/g, '-')}.json`, json);
  put('latest.json', json);
  put('latest.md', renderMarkdown(run));
  for (const w of run.workloads) for (const chart of w.charts) put(chart.file, renderChart(chart, w, run.adapters));
  return written;
}

export function renderMarkdown(run: RunResult): string {
  const m = run.machine;
  const out: string[] = [
    `# Mnemo benchmark (${run.mode} mode)`,
    '',
    `Command: \`${run.command}\``,
    '',
    `Run ${run.startedAt} → ${run.finishedAt}. Machine: ${m.cpus} × ${m.cpuModel}, ${m.memoryGiB} GiB RAM, ${m.platform}, Node ${m.node}; ` +
      Object.entries(m.versions)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ') +
      `. Load average (1 min) ${m.loadAverage.start.toFixed(1)} at start, ${m.loadAverage.end.toFixed(1)} at end, on ${m.cpus} cores: ` +
      (m.loadAverage.start > m.cpus || m.loadAverage.end > m.cpus
        ? 'the machine was shared with other work, so absolute figures are low and noisy; read the ratios.'
        : 'the machine was otherwise quiet.'),
    '',
    '## Stores and their durability',
    '',
    '| store | durable | what an append waits for | notes |',
    '| --- | --- | --- | --- |',
    ...run.adapters.map((a) => `| ${a.label} | ${a.durable ? 'yes' : 'no'} | ${a.durability} | ${a.notes ?? ''} |`),
    '',
  ];
  for (const w of run.workloads) {
    out.push(`## ${w.title}`, '', w.description, '', renderMarkdownTable(w, run.adapters), '');
    for (const n of w.notes) out.push(`- ${n}`);
    if (w.notes.length > 0) out.push('');
    const growth = renderGrowth(w, run);
    if (growth !== '') out.push(growth, '');
    if (w.charts.length > 0) out.push(`Charts: ${w.charts.map((c) => `[${c.file}](${c.file})`).join(', ')}`, '');
  }
  return out.join('\n');
}

/**
 * For workloads drawn as lines (cost against size): each store's first metric at the smallest
 * and the largest size, and the factor between them, so flat and growing costs read at a glance.
 */
function renderGrowth(w: WorkloadResult, run: RunResult): string {
  const chart = w.charts.find((c) => c.kind === 'lines');
  if (chart === undefined) return '';
  const xs = [...new Set(w.rows.map((r) => r.x))].sort((a, b) => a - b);
  const lo = xs[0];
  const hi = xs[xs.length - 1];
  if (lo === undefined || hi === undefined || lo === hi) return '';
  const label = w.columns.find((c) => c.key === chart.metric)?.label ?? chart.metric;
  const lines = [
    `Growth of ${label} from ${lo.toLocaleString('en-US')} to ${hi.toLocaleString('en-US')} (${w.xLabel}, ×${formatNumber(hi / lo, 0)}):`,
    '',
    `| store | at ${lo.toLocaleString('en-US')} | at ${hi.toLocaleString('en-US')} | factor |`,
    '| --- | ---: | ---: | ---: |',
  ];
  for (const a of run.adapters) {
    const at = (x: number) => w.rows.find((r) => r.adapter === a.id && r.x === x)?.metrics[chart.metric];
    const first = at(lo);
    const last = at(hi);
    if (first === undefined || last === undefined) continue;
    const factor = first !== null && last !== null && first !== 0 ? formatRatio(last / first) : '—';
    lines.push(`| ${a.label} | ${formatNumber(first, 3)} | ${formatNumber(last, 3)} | ${factor} |`);
  }
  return lines.join('\n');
}
