import { measureTurnCost, TURN_COST_SIZES } from '../../turn-cost.ts';
import type { Workload } from '../workload.ts';

/**
 * Agent turn cost against history length (bench/turn-cost.ts): one turn of each case at 100
 * and at 100,000 messages of history, the sizes taking turns sample after sample. One row per
 * history size; a case's growth is its p50 at the large size over the small one (target ~1:
 * a bounded window reads the same rows whatever the history).
 */
const KEYS = ['agentWindow', 'wholeHistory', 'kernelFilter', 'tokenWindow'] as const;
const LABELS = ['agent window 50', 'whole history', 'kernel filter', 'token window 4000'] as const;

export const turnCostWorkload: Workload = {
  id: 'turn-cost',
  title: 'Agent turn cost against history length',
  async run(ctx) {
    const started = performance.now();
    const { samples, wholeSamples } = ctx.sizes.turnCost;
    const step = ctx.progress.step('turn cost @ 100 vs 100,000 msgs', KEYS.length);
    const cases = await measureTurnCost(samples, wholeSamples, (line) => {
      if (line.includes(': p50 ')) step.tick();
    });
    step.done();
    const [small, large] = TURN_COST_SIZES;
    const at = (which: 'small' | 'large') => Object.fromEntries(cases.map((c, i) => [`${KEYS[i]}P50Ms`, c[which].p50Ms]));
    const growth = Object.fromEntries(cases.map((c, i) => [`${KEYS[i]}Growth`, c.ratio]));
    return {
      id: 'turn-cost',
      title: this.title,
      description: `Latency of one offline turn (fallback LLM, the runtime's LMDB memory) at ${small} and ${large.toLocaleString('en-US')} messages of history, p50: agent with { window: 50 }; the same window over the whole history (the plain ChatMemory path, for contrast); the kernel's memory filter { window: 50 }; an agent over a 4000-token window. Growth = p50 at the large size ÷ p50 at the small one (on the large row). Lower is better.`,
      xLabel: 'history (messages)',
      params: { samples, wholeSamples, sizes: [...TURN_COST_SIZES] },
      columns: [
        ...KEYS.map((k, i) => ({ key: `${k}P50Ms`, label: `${LABELS[i]} p50 ms`, digits: 2 })),
        ...KEYS.map((k, i) => ({ key: `${k}Growth`, label: `${LABELS[i]} growth`, digits: 2 })),
      ],
      ratios: [],
      rows: [
        { adapter: 'mnemo-lmdb', x: small, metrics: { ...at('small') } },
        { adapter: 'mnemo-lmdb', x: large, metrics: { ...at('large'), ...growth } },
      ],
      charts: [],
      notes: cases.map((c) => `${c.name}: ${c.small.p50Ms.toFixed(2)} → ${c.large.p50Ms.toFixed(2)} ms (${c.ratio.toFixed(2)}x)`),
      seconds: (performance.now() - started) / 1000,
    };
  },
};
