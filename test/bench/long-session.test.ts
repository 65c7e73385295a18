import { describe, expect, it } from 'vitest';
import { runLongSession } from '../../bench/long-session.ts';

// bench/long-session.ts on a shorter run: a session through the real server with a scripted
// model. Token counts are deterministic, so the bound is asserted exactly (no timing).

describe('a long session through the server (bench/long-session.ts)', () => {
  it('keeps the model’s input bounded (the last turn ≤ 1.2 × turn 50) and the turn-3 fact in it through the summary', async () => {
    const r = await runLongSession({ turns: 200, summary: true, noSync: true });
    expect(r.last.total).toBeLessThanOrEqual(1.2 * r.at50.total);
    expect(r.peak.total).toBeLessThanOrEqual(1.2 * r.at50.total);
    expect(r.factAtLast).toEqual({ inContext: true, inSummary: true });
    expect(r.summaries).toBeGreaterThan(5);
    expect(r.summaries).toBe(r.summaryRequests);
  }, 180_000);

  it('without summaries the input is as bounded but the fact is gone (the Demo’s window of 3 rounds)', async () => {
    const r = await runLongSession({ turns: 60, summary: false, noSync: true });
    expect(r.last.total).toBeLessThanOrEqual(1.2 * r.at50.total);
    expect(r.factAtLast).toEqual({ inContext: false, inSummary: false });
    expect(r.summaryRequests).toBe(0);
  }, 120_000);
});
