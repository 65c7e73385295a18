/** Latency samples (ms) and their summary. */
export interface LatencySummary {
  count: number;
  meanMs: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  maxMs: number;
}

export class Samples {
  private values = new Float64Array(1024);
  private n = 0;

  add(ms: number): void {
    if (this.n === this.values.length) {
      const grown = new Float64Array(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.n++] = ms;
  }

  get count(): number {
    return this.n;
  }

  summary(): LatencySummary {
    const v = this.values.slice(0, this.n).sort();
    if (v.length === 0) return { count: 0, meanMs: NaN, p50Ms: NaN, p95Ms: NaN, p99Ms: NaN, maxMs: NaN };
    let sum = 0;
    for (const x of v) sum += x;
    return {
      count: v.length,
      meanMs: sum / v.length,
      p50Ms: quantile(v, 0.5),
      p95Ms: quantile(v, 0.95),
      p99Ms: quantile(v, 0.99),
      maxMs: v[v.length - 1]!,
    };
  }
}

/** Nearest-rank quantile of sorted values. */
function quantile(sorted: Float64Array, q: number): number {
  const rank = Math.max(1, Math.ceil(q * sorted.length));
  return sorted[rank - 1]!;
}

export function median(values: readonly number[]): number {
  const v = [...values].sort((a, b) => a - b);
  if (v.length === 0) return NaN;
  const mid = Math.floor(v.length / 2);
  return v.length % 2 === 1 ? v[mid]! : (v[mid - 1]! + v[mid]!) / 2;
}
