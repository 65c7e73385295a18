/**
 * bench/session-growth.ts: a chat turn's CPU as sessions grow. 100 sessions of one user take
 * turns at once (`runtime.recall.chat`, the offline model, defaults otherwise: rolling summaries
 * on), 20 turns each per round, the same sessions every round; each round prints turns/s and the
 * CPU of a turn (`process.cpuUsage`, every thread). The last round ÷ the second is the growth:
 * near 1 when nothing a turn does grows with its session (the first round pays the warm-up).
 *
 *   npx tsx bench/session-growth.ts            5 rounds
 *   npx tsx bench/session-growth.ts --rounds 8
 */
import { fallbackLlm } from '../src/llm/index.ts';
import { startRuntime } from '../src/runtime.ts';
import { withTempDir } from './suite/temp-dir.ts';

const at = process.argv.indexOf('--rounds');
const ROUNDS = at > 0 ? Number(process.argv[at + 1]) : 5;
const SESSIONS = 100;
const TURNS = 20;

await withTempDir('session-growth', async (dir) => {
  const runtime = await startRuntime({ dataDir: dir, recall: { llm: fallbackLlm({ language: 'en' }), language: 'en' } });
  try {
    let n = 0;
    const cpu: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const t0 = performance.now();
      const c0 = process.cpuUsage();
      await Promise.all(
        Array.from({ length: SESSIONS }, async (_, s) => {
          for (let k = 0; k < TURNS; k++) {
            await runtime.recall.chat({ userId: 'u', sessionId: `s${s}`, message: `turn ${n++}: a few words about the trip to the mountains and the lake` });
          }
        }),
      );
      const used = process.cpuUsage(c0);
      cpu.push((used.user + used.system) / 1000 / (SESSIONS * TURNS));
      const perSecond = (SESSIONS * TURNS) / ((performance.now() - t0) / 1000);
      console.log(`round ${r + 1}: sessions of ${(r + 1) * TURNS} turns, ${perSecond.toFixed(0)} turns/s, ${cpu[r]!.toFixed(2)} ms CPU a turn`);
    }
    console.log(`growth (CPU a turn, last round ÷ second): ${(cpu.at(-1)! / cpu[1]!).toFixed(2)}x`);
  } finally {
    await runtime.stop();
  }
});
