import type { AdapterId, AdapterInfo } from '../types.ts';
import type { ChartSpec, WorkloadResult } from '../result-types.ts';

/**
 * Hand-written SVG charts, no library: grouped bars (one group per x, one bar per store) and
 * lines (one per store over x), on log axes where the values span decades. Colours are the
 * Okabe-Ito palette (readable by colour-blind readers); stores without durability are drawn
 * hatched (bars) or dashed (lines).
 */
const COLORS: Record<AdapterId, string> = {
  'raw-lmdb': '#666666',
  'mnemo-lmdb': '#0072B2',
  'mnemo-store': '#9ecae1',
  'mnemo-memory': '#56B4E9',
  jsonl: '#E69F00',
  sqlite: '#009E73',
  'langgraph-memory': '#CC79A7',
  'langgraph-sqlite': '#D55E00',
  'mnemo-postgres': '#003f6b',
  'sqlite-fts5': '#F0E442',
  minisearch: '#000000',
};

const W = 960;
const H = 520;
const M = { top: 96, right: 64, bottom: 64, left: 84 };
/** Legend entries per row. */
const LEGEND_COLUMNS = 3;
const PW = W - M.left - M.right;
const PH = H - M.top - M.bottom;

export function renderChart(spec: ChartSpec, result: WorkloadResult, adapters: readonly AdapterInfo[]): string {
  return spec.kind === 'bars' ? bars(spec, result, adapters) : lines(spec, result, adapters);
}

interface Scale {
  (v: number): number;
  ticks: { v: number; label: string }[];
}

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

export function shortNumber(v: number): string {
  const abs = Math.abs(v);
  const trim = (x: number) => String(Number(x.toPrecision(3)));
  if (abs >= 1e9) return `${trim(v / 1e9)}G`;
  if (abs >= 1e6) return `${trim(v / 1e6)}M`;
  if (abs >= 1e3) return `${trim(v / 1e3)}k`;
  if (abs === 0) return '0';
  return trim(v);
}

/** A y (or x) scale over [lo, hi] mapped to [from, to]. */
function scale(values: number[], log: boolean, from: number, to: number): Scale {
  const finite = values.filter((v) => Number.isFinite(v) && (!log || v > 0));
  let lo = finite.length ? Math.min(...finite) : 1;
  let hi = finite.length ? Math.max(...finite) : 10;
  if (log) {
    const a = Math.floor(Math.log10(lo));
    const b = Math.max(a + 1, Math.ceil(Math.log10(hi)));
    const f = (v: number) => from + ((Math.log10(Math.max(v, 10 ** a)) - a) / (b - a)) * (to - from);
    const ticks = [];
    for (let e = a; e <= b; e++) ticks.push({ v: 10 ** e, label: shortNumber(10 ** e) });
    return Object.assign(f, { ticks });
  }
  lo = Math.min(0, lo);
  if (hi === lo) hi = lo + 1;
  const stepRaw = (hi - lo) / 5;
  const mag = 10 ** Math.floor(Math.log10(stepRaw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= stepRaw) ?? stepRaw;
  hi = Math.ceil(hi / step) * step;
  const f = (v: number) => from + ((v - lo) / (hi - lo)) * (to - from);
  const ticks = [];
  for (let v = lo; v <= hi + step / 2; v += step) ticks.push({ v, label: shortNumber(v) });
  return Object.assign(f, { ticks });
}

function frame(spec: ChartSpec, body: string, yScale: Scale, legend: string, xTitle: string): string {
  const grid = yScale.ticks
    .map((t) => {
      const y = yScale(t.v).toFixed(1);
      return `<line x1="${M.left}" x2="${M.left + PW}" y1="${y}" y2="${y}" class="grid"/><text x="${M.left - 8}" y="${y}" class="tick" text-anchor="end" dominant-baseline="middle">${esc(t.label)}</text>`;
    })
    .join('\n');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif">
<style>
  .title { font-size: 18px; font-weight: 600; fill: #222; }
  .axis { font-size: 13px; fill: #333; }
  .tick { font-size: 12px; fill: #444; }
  .grid { stroke: #e3e3e3; stroke-width: 1; }
  .legend { font-size: 12px; fill: #222; }
  .value { font-size: 10px; fill: #333; }
</style>
<defs>
  <pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">
    <rect width="6" height="6" fill="white" fill-opacity="0.0"/><line x1="0" y1="0" x2="0" y2="6" stroke="white" stroke-width="2.5" stroke-opacity="0.7"/>
  </pattern>
</defs>
<rect width="${W}" height="${H}" fill="white"/>
<text x="${W / 2}" y="26" class="title" text-anchor="middle">${esc(spec.title)}</text>
${grid}
<line x1="${M.left}" x2="${M.left}" y1="${M.top}" y2="${M.top + PH}" stroke="#888"/>
<line x1="${M.left}" x2="${M.left + PW}" y1="${M.top + PH}" y2="${M.top + PH}" stroke="#888"/>
<text transform="translate(20 ${M.top + PH / 2}) rotate(-90)" class="axis" text-anchor="middle">${esc(spec.yLabel)}</text>
<text x="${M.left + PW / 2}" y="${H - 14}" class="axis" text-anchor="middle">${esc(xTitle)}</text>
${body}
${legend}
</svg>
`;
}

function legendOf(adapters: readonly AdapterInfo[], line: boolean): string {
  const per = LEGEND_COLUMNS;
  const colW = PW / per;
  return adapters
    .map((a, i) => {
      const x = M.left + (i % per) * colW;
      const y = 42 + Math.floor(i / per) * 17;
      const color = COLORS[a.id];
      const mark = line
        ? `<line x1="${x}" x2="${x + 18}" y1="${y}" y2="${y}" stroke="${color}" stroke-width="2.5"${a.durable ? '' : ' stroke-dasharray="5 3"'}/>`
        : `<rect x="${x}" y="${y - 6}" width="14" height="12" fill="${color}"/>${a.durable ? '' : `<rect x="${x}" y="${y - 6}" width="14" height="12" fill="url(#hatch)"/>`}`;
      return `${mark}<text x="${x + 22}" y="${y}" class="legend" dominant-baseline="middle">${esc(a.label)}${a.durable ? '' : ' (no disk)'}</text>`;
    })
    .join('\n');
}

function usedAdapters(result: WorkloadResult, adapters: readonly AdapterInfo[], metric: string): AdapterInfo[] {
  return adapters.filter((a) => result.rows.some((r) => r.adapter === a.id && isNum(r.metrics[metric])));
}

const isNum = (v: number | null | undefined): v is number => typeof v === 'number' && Number.isFinite(v);

function bars(spec: ChartSpec, result: WorkloadResult, all: readonly AdapterInfo[]): string {
  const adapters = usedAdapters(result, all, spec.metric);
  const xs = [...new Set(result.rows.map((r) => r.x))].sort((a, b) => a - b);
  const values = result.rows.map((r) => r.metrics[spec.metric]).filter(isNum);
  const y = scale(values, spec.logY, M.top + PH, M.top);
  const groupW = PW / Math.max(1, xs.length);
  const barW = Math.min(40, (groupW * 0.8) / Math.max(1, adapters.length));
  const base = M.top + PH;
  const body: string[] = [];
  xs.forEach((x, gi) => {
    const gx = M.left + gi * groupW + (groupW - barW * adapters.length) / 2;
    adapters.forEach((a, ai) => {
      const v = result.rows.find((r) => r.adapter === a.id && r.x === x)?.metrics[spec.metric];
      if (!isNum(v)) return;
      const top = y(v);
      const bx = gx + ai * barW;
      const h = Math.max(1, base - top);
      body.push(`<rect x="${bx.toFixed(1)}" y="${(base - h).toFixed(1)}" width="${(barW - 2).toFixed(1)}" height="${h.toFixed(1)}" fill="${COLORS[a.id]}"><title>${esc(`${a.label} @ ${x}: ${v}`)}</title></rect>`);
      if (!a.durable) body.push(`<rect x="${bx.toFixed(1)}" y="${(base - h).toFixed(1)}" width="${(barW - 2).toFixed(1)}" height="${h.toFixed(1)}" fill="url(#hatch)"/>`);
      const cx = bx + (barW - 2) / 2;
      body.push(`<text transform="translate(${cx.toFixed(1)} ${(base - h - 4).toFixed(1)}) rotate(-60)" class="value">${esc(shortNumber(v))}</text>`);
    });
    body.push(`<text x="${(M.left + gi * groupW + groupW / 2).toFixed(1)}" y="${base + 22}" class="axis" text-anchor="middle">${esc(x.toLocaleString('en-US'))}</text>`);
  });
  return frame(spec, body.join('\n'), y, legendOf(adapters, false), result.xLabel);
}

function lines(spec: ChartSpec, result: WorkloadResult, all: readonly AdapterInfo[]): string {
  const adapters = usedAdapters(result, all, spec.metric);
  const xs = [...new Set(result.rows.map((r) => r.x))].sort((a, b) => a - b);
  const values = result.rows.map((r) => r.metrics[spec.metric]).filter(isNum);
  const y = scale(values, spec.logY, M.top + PH, M.top);
  const logX = spec.logX ?? (xs.length > 1 && xs[xs.length - 1]! / xs[0]! >= 100);
  const x = logX
    ? scale(xs, true, M.left + 30, M.left + PW - 30)
    : Object.assign((v: number) => M.left + 30 + (xs.indexOf(v) / Math.max(1, xs.length - 1)) * (PW - 60), { ticks: [] });
  const body: string[] = [];
  for (const v of xs) {
    body.push(`<line x1="${x(v).toFixed(1)}" x2="${x(v).toFixed(1)}" y1="${M.top + PH}" y2="${M.top + PH + 5}" stroke="#888"/>`);
    body.push(`<text x="${x(v).toFixed(1)}" y="${M.top + PH + 22}" class="axis" text-anchor="middle">${esc(shortNumber(v))}</text>`);
  }
  const endLabels: number[] = [];
  for (const a of adapters) {
    const pts = xs
      .map((xv) => ({ xv, v: result.rows.find((r) => r.adapter === a.id && r.x === xv)?.metrics[spec.metric] }))
      .filter((p): p is { xv: number; v: number } => isNum(p.v));
    const color = COLORS[a.id];
    const d = pts.map((p, i) => `${i === 0 ? 'M' : 'L'}${x(p.xv).toFixed(1)},${y(p.v).toFixed(1)}`).join(' ');
    body.push(`<path d="${d}" fill="none" stroke="${color}" stroke-width="2.5"${a.durable ? '' : ' stroke-dasharray="6 4"'}/>`);
    for (const p of pts) {
      body.push(`<circle cx="${x(p.xv).toFixed(1)}" cy="${y(p.v).toFixed(1)}" r="4" fill="${color}"><title>${esc(`${a.label} @ ${p.xv}: ${p.v}`)}</title></circle>`);
    }
    const lastPt = pts[pts.length - 1];
    // An end label only where it does not overlap another (values stay in the tooltips).
    if (lastPt !== undefined && endLabels.every((yy) => Math.abs(yy - y(lastPt.v)) >= 12)) {
      endLabels.push(y(lastPt.v));
      body.push(`<text x="${(x(lastPt.xv) + 7).toFixed(1)}" y="${y(lastPt.v).toFixed(1)}" class="value" dominant-baseline="middle" fill="${color}">${esc(shortNumber(lastPt.v))}</text>`);
    }
  }
  return frame(spec, body.join('\n'), y, legendOf(adapters, true), result.xLabel + (logX ? ' (log)' : ''));
}
