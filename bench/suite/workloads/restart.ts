import { runChild } from '../child/spawn-child.ts';
import type { RestartAnswer } from '../child/child-task.ts';
import { conversationName, messagesOf } from '../records.ts';
import { nextTurn } from '../event-loop.ts';
import { median } from '../stats.ts';
import { withTempDir } from '../temp-dir.ts';
import type { ResultRow } from '../result-types.ts';
import type { AdapterFactory } from '../types.ts';
import type { Workload } from '../workload.ts';

/**
 * Restart to first read, against the data size: a store is filled (N messages in conversations
 * of 100) and closed; then a fresh Node process opens it and reads the last 50 messages of one
 * conversation. Measured in the child: open + first read, and process start to first read
 * (node and tsx startup, imports, open, read). Median of `repeats` children. The OS page cache
 * is warm (the parent just wrote the data): this is a process restart, not a cold boot.
 * Only durable stores (an in-memory store has nothing to restart from).
 */
export const restartWorkload: Workload = {
  id: 'restart',
  title: 'Restart to first read vs data size',
  async run(ctx) {
    const started = performance.now();
    const { totals, perConversation, repeats } = ctx.sizes.restart;
    const rows: ResultRow[] = [];
    for (const total of totals) {
      for (const factory of ctx.adapters.filter((a) => a.info.durable)) {
        const conversations = Math.max(1, Math.floor(total / perConversation));
        const step = ctx.progress.step(`restart ${factory.info.label} @ ${total.toLocaleString('en-US')} msgs`, conversations + repeats);
        const answers = await withTempDir(factory.info.id, async (dir) => {
          await fillStore(factory, dir, conversations, perConversation, () => step.tick());
          const out: RestartAnswer[] = [];
          for (let r = 0; r < repeats; r++) {
            out.push(
              await runChild<RestartAnswer>({
                kind: 'restart',
                adapter: factory.info.id,
                dir,
                conversation: conversationName('conv', Math.floor(conversations / 2)),
                window: 50,
              }),
            );
            step.tick();
          }
          return out;
        });
        step.done();
        const read = answers.every((a) => a.messagesRead === Math.min(50, perConversation));
        rows.push({
          adapter: factory.info.id,
          x: total,
          metrics: {
            firstReadMs: median(answers.map((a) => a.firstReadMs)),
            openMs: median(answers.map((a) => a.openMs)),
            importMs: median(answers.map((a) => a.importMs)),
            sinceProcessStartMs: median(answers.map((a) => a.sinceProcessStartMs)),
          },
          ...(read ? {} : { note: 'first read returned the wrong count' }),
        });
      }
    }
    return {
      id: 'restart',
      title: this.title,
      description:
        'After a restart, how long until the first read of a conversation returns, by how much data the store holds. "open + first read" counts from the store module being loaded; "from process start" adds Node and tsx startup and the imports. Lower is better; flat means restart cost does not grow with data.',
      xLabel: 'messages stored',
      params: { totals, perConversation, repeats },
      columns: [
        { key: 'firstReadMs', label: 'open + first read ms', digits: 2 },
        { key: 'openMs', label: 'open ms', digits: 2 },
        { key: 'importMs', label: 'import ms', digits: 0 },
        { key: 'sinceProcessStartMs', label: 'from process start ms', digits: 0 },
      ],
      ratios: [{ metric: 'firstReadMs', baseline: 'mnemo-lmdb', label: 'open+read time ÷ Mnemo' }],
      rows,
      charts: [
        { file: 'restart-first-read.svg', kind: 'lines', title: 'Open + first read after restart vs data size', metric: 'firstReadMs', yLabel: 'ms (log)', logY: true, logX: true },
      ],
      notes: ['Median of the child processes; page cache warm. Ratios: time ÷ Mnemo (above 1× is slower than Mnemo).'],
      seconds: (performance.now() - started) / 1000,
    };
  },
};

/** Fills `conversations` conversations of `perConversation` messages with the bulk path, then closes the store. */
export async function fillStore(
  factory: AdapterFactory,
  dir: string,
  conversations: number,
  perConversation: number,
  tick: () => void,
): Promise<void> {
  const adapter = await factory.open(dir);
  try {
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(50, conversations) }, async () => {
        for (let c = next++; c < conversations; c = next++) {
          await adapter.load(conversationName('conv', c), messagesOf(c, 0, perConversation));
          tick();
          if (c % 500 === 0) await nextTurn();
        }
      }),
    );
  } finally {
    await adapter.close();
  }
}
