/**
 * A child process of the suite: measures one thing on one store and prints one JSON line
 * (`ChildAnswer`) on stdout. Started by spawn-child.ts with `--expose-gc` and the tsx loader.
 *
 * - restart: time from process start, and from opening, to the first tail read of a store
 *   that already holds data (the parent filled it and closed it).
 * - rss: resident memory after touching N conversations (two appends and a tail read each).
 * - live: what N live Mnemo conversations cost (live-conversations.ts).
 */
import type { ChildAnswer, ChildTask } from './child-task.ts';

const task = JSON.parse(process.argv[2] ?? '{}') as ChildTask;

async function main(): Promise<ChildAnswer> {
  if (task.kind === 'live') {
    const { measureLiveConversations } = await import('./live-conversations.ts');
    return measureLiveConversations(task.conversations, task.dir, task.census);
  }
  const t0 = performance.now();
  const { loadAdapter } = await import('../adapters/load-adapter.ts');
  const factory = await loadAdapter(task.adapter);
  const imported = performance.now();
  if (task.kind === 'restart') {
    const adapter = await factory.open(task.dir);
    const opened = performance.now();
    const rows = await adapter.tail(task.conversation, task.window);
    const read = performance.now();
    await adapter.close();
    return {
      kind: 'restart',
      importMs: imported - t0,
      openMs: opened - imported,
      firstReadMs: read - imported,
      sinceProcessStartMs: read,
      messagesRead: rows.length,
    };
  }
  const { collectGarbage } = await import('../event-loop.ts');
  const { conversationName, messageAt } = await import('../records.ts');
  const adapter = await factory.open(task.dir);
  // Warm the code paths on one conversation, so the baseline holds the code, not the data.
  await adapter.append('warm', messageAt(0, 0));
  await adapter.tail('warm', 6);
  collectGarbage();
  const base = process.memoryUsage();
  let next = 0;
  let touched = 0;
  const deadline = performance.now() + task.capSeconds * 1000;
  await Promise.all(
    Array.from({ length: Math.min(task.concurrency, task.touched) }, async () => {
      for (let c = next++; c < task.touched && performance.now() < deadline; c = next++) {
        const id = conversationName('rss', c);
        await adapter.append(id, messageAt(c, 0));
        await adapter.append(id, messageAt(c, 1));
        await adapter.tail(id, 6);
        touched++;
      }
    }),
  );
  collectGarbage();
  const after = process.memoryUsage();
  await adapter.close();
  return {
    kind: 'rss',
    touched,
    baselineRss: base.rss,
    rss: after.rss,
    baselineHeap: base.heapUsed,
    heapUsed: after.heapUsed,
    external: after.external,
  };
}

main().then(
  (answer) => {
    process.stdout.write(`${JSON.stringify(answer)}\n`);
    process.exit(0);
  },
  (error: unknown) => {
    process.stderr.write(`child failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
