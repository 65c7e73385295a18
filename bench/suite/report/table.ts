import type { AdapterId, AdapterInfo } from '../types.ts';
import type { ResultRow, WorkloadResult } from '../result-types.ts';

/**
 * A workload's rows as a table (for the console and for Markdown): one line per (x, adapter),
 * x ascending then adapters in suite order, the measured columns, then each ratio (the row's
 * metric over the baseline's at the same x; `—` where either is missing).
 */
export interface Table {
  header: string[];
  /** True for columns to right-align (numbers). */
  numeric: boolean[];
  rows: string[][];
}

export function formatNumber(value: number | null | undefined, digits: number): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  const abs = Math.abs(value);
  const d = abs >= 1000 ? 0 : abs >= 100 ? Math.min(digits, 1) : digits;
  return value.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });
}

export function formatRatio(value: number | null): string {
  if (value === null || !Number.isFinite(value)) return '—';
  return `${value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2)}×`;
}

export function ratioOf(rows: readonly ResultRow[], row: ResultRow, metric: string, baseline: AdapterId): number | null {
  const base = rows.find((r) => r.adapter === baseline && r.x === row.x)?.metrics[metric];
  const value = row.metrics[metric];
  if (base === null || base === undefined || value === null || value === undefined || base === 0) return null;
  return value / base;
}

export function sortedRows(result: WorkloadResult, adapters: readonly AdapterInfo[]): ResultRow[] {
  const order = new Map(adapters.map((a, i) => [a.id, i]));
  return [...result.rows].sort((a, b) => a.x - b.x || (order.get(a.adapter) ?? 99) - (order.get(b.adapter) ?? 99));
}

export function tableOf(result: WorkloadResult, adapters: readonly AdapterInfo[]): Table {
  const label = new Map(adapters.map((a) => [a.id, a.label]));
  const present = new Set(result.rows.map((r) => r.adapter));
  const ratios = result.ratios.filter((r) => present.has(r.baseline));
  const withNotes = result.rows.some((r) => r.note !== undefined);
  const header = [
    result.xLabel,
    'store',
    ...result.columns.map((c) => c.label),
    ...ratios.map((r) => r.label),
    ...(withNotes ? ['note'] : []),
  ];
  const numeric = [true, false, ...result.columns.map(() => true), ...ratios.map(() => true), ...(withNotes ? [false] : [])];
  const rows = sortedRows(result, adapters).map((row) => [
    row.x.toLocaleString('en-US'),
    label.get(row.adapter) ?? row.adapter,
    ...result.columns.map((c) => formatNumber(row.metrics[c.key], c.digits)),
    ...ratios.map((r) => formatRatio(ratioOf(result.rows, row, r.metric, r.baseline))),
    ...(withNotes ? [row.note ?? ''] : []),
  ]);
  return { header, numeric, rows };
}

/** Fixed-width text for the terminal. */
export function renderConsole(result: WorkloadResult, adapters: readonly AdapterInfo[]): string {
  const t = tableOf(result, adapters);
  const widths = t.header.map((h, i) => Math.max(h.length, ...t.rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (t.numeric[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ').trimEnd();
  return [
    '',
    `== ${result.title} (${result.seconds.toFixed(1)} s)`,
    line(t.header),
    widths.map((w) => '-'.repeat(w)).join('  '),
    ...t.rows.map(line),
    ...result.notes.map((n) => `note: ${n}`),
    '',
  ].join('\n');
}

/** A GitHub-flavoured Markdown table. */
export function renderMarkdownTable(result: WorkloadResult, adapters: readonly AdapterInfo[]): string {
  const t = tableOf(result, adapters);
  const esc = (s: string) => s.replace(/\|/g, '\\|');
  return [
    `| ${t.header.map(esc).join(' | ')} |`,
    `|${t.numeric.map((n) => (n ? ' ---: ' : ' --- ')).join('|')}|`,
    ...t.rows.map((r) => `| ${r.map(esc).join(' | ')} |`),
  ].join('\n');
}
