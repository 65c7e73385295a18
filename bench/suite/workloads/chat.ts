import { jsonlDemoChat } from '../chat/jsonl-demo-chat.ts';
import { mnemoChat } from '../chat/mnemo-chat.ts';
import type { ChatTurns } from '../chat/chat-service.ts';
import { messageAt } from '../records.ts';
import { nextTurn } from '../event-loop.ts';
import { Samples, type LatencySummary } from '../stats.ts';
import { withTempDir } from '../temp-dir.ts';
import { rateColumns, type ResultRow } from '../result-types.ts';
import type { Workload } from '../workload.ts';

/**
 * Full chat-service turns per second with the offline fallback reply: Mnemo's recall `chat`
 * against the demo's turn over its JSONL layout (see jsonl-demo-chat.ts). N sessions run at
 * once (spread over up to 10 users, so sessions of a user share its daily file and index), each
 * doing its turns one after another. Every write of a turn is durable before the turn resolves.
 */
const IMPLEMENTATIONS: readonly { id: 'mnemo-lmdb' | 'jsonl'; open: (dir: string) => Promise<ChatTurns> }[] = [
  { id: 'mnemo-lmdb', open: mnemoChat },
  { id: 'jsonl', open: async (dir) => jsonlDemoChat(dir) },
];

export const chatWorkload: Workload = {
  id: 'chat',
  title: 'Chat-service turns per second (offline fallback reply)',
  async run(ctx) {
    const started = performance.now();
    const { levels, capSeconds, repeats } = ctx.sizes.chat;
    const selected = new Set(ctx.adapters.map((a) => a.info.id));
    const rows: ResultRow[] = [];
    for (const level of levels) {
      const total = level.sessions * level.turnsPerSession;
      const runs = new Map<ChatTurns['id'], { summary: LatencySummary; seconds: number }[]>();
      for (let r = 0; r < repeats; r++) {
        for (const impl of IMPLEMENTATIONS.filter((i) => selected.has(i.id))) {
          const round = repeats > 1 ? ` (run ${r + 1}/${repeats})` : '';
          const step = ctx.progress.step(`chat ${impl.id} @ ${level.sessions} sessions${round}`, total);
          const m = await withTempDir(`chat-${impl.id}`, (dir) => measure(impl.open, dir, level, capSeconds, () => step.tick()));
          step.done();
          runs.set(impl.id, [...(runs.get(impl.id) ?? []), m]);
        }
      }
      for (const [id, all] of runs) {
        const rate = (m: { summary: LatencySummary; seconds: number }) => m.summary.count / m.seconds;
        const sorted = [...all].sort((a, b) => rate(a) - rate(b));
        const m = sorted[Math.floor((sorted.length - 1) / 2)]!;
        rows.push({
          adapter: id,
          x: level.sessions,
          metrics: {
            turnsPerSec: rate(m),
            minTurnsPerSec: rate(sorted[0]!),
            maxTurnsPerSec: rate(sorted[sorted.length - 1]!),
            p50Ms: m.summary.p50Ms,
            p99Ms: m.summary.p99Ms,
            turns: m.summary.count,
          },
          ...(m.summary.count < total ? { note: `capped at ${capSeconds} s after ${m.summary.count} of ${total} turns` } : {}),
        });
      }
    }
    return {
      id: 'chat',
      title: this.title,
      description:
        'Complete chat turns per second (store the user row in session and daily views, read the context, reply offline, store the reply, log the turn, update the session index), with N sessions chatting at once. Higher is better.',
      xLabel: 'concurrent sessions',
      params: { sessions: levels.map((l) => l.sessions), turnsPerSession: levels.map((l) => l.turnsPerSession), capSeconds, repeats },
      columns: rateColumns('turnsPerSec', 'turns/s', repeats),
      ratios: [{ metric: 'turnsPerSec', baseline: 'mnemo-lmdb', label: '÷ Mnemo' }],
      rows,
      charts: [{ file: 'chat-turns.svg', kind: 'bars', title: 'Chat turns/s (offline reply) by concurrent sessions', metric: 'turnsPerSec', yLabel: 'turns/s (log)', logY: true }],
      notes: repeats > 1 ? [`Each row is the median of ${repeats} interleaved runs (min and max shown).`] : [],
      seconds: (performance.now() - started) / 1000,
    };
  },
};

async function measure(
  open: (dir: string) => Promise<ChatTurns>,
  dir: string,
  level: { sessions: number; turnsPerSession: number },
  capSeconds: number,
  tick: () => void,
): Promise<{ summary: LatencySummary; seconds: number }> {
  const chat = await open(dir);
  try {
    for (let i = 0; i < 5; i++) await chat.turn('warm', 'warm', messageAt(0, i * 2).content);
    await nextTurn();
    const samples = new Samples();
    const deadline = performance.now() + capSeconds * 1000;
    const t0 = performance.now();
    let last = t0;
    await Promise.all(
      Array.from({ length: level.sessions }, async (_, s) => {
        for (let t = 0; t < level.turnsPerSession && performance.now() < deadline; t++) {
          const begin = performance.now();
          await chat.turn(`u${s % 10}`, `s${s}`, messageAt(s, t * 2).content);
          last = performance.now();
          samples.add(last - begin);
          tick();
        }
      }),
    );
    return { summary: samples.summary(), seconds: (last - t0) / 1000 };
  } finally {
    await chat.close();
  }
}
