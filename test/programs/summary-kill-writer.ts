/**
 * The writer of the summary-job kill test: a runtime whose recall summarizes sessions with a
 * model that never answers a summary request. It chats until a turn finds its session due for
 * a summary (the job is queued in that turn's commit and its model call starts), prints
 * `ready`, and waits; the test SIGKILLs it there.
 *
 * Usage: tsx summary-kill-writer.ts <data dir>
 */
import type { LlmResponse } from '../../src/llm/llm-service.ts';
import type { Message } from '../../src/message.ts';
import { startRuntime } from '../../src/runtime.ts';

const [dir] = process.argv.slice(2) as [string];
let asked: () => void = () => {};
const summaryAsked = new Promise<void>((resolve) => (asked = resolve));
const llm = {
  async chat(messages: readonly Message[], options?: { tools?: unknown }): Promise<LlmResponse> {
    if (options?.tools === undefined && messages[0]?.role === 'system') {
      asked();
      return new Promise<LlmResponse>(() => {}); // never
    }
    return { content: options?.tools === undefined ? 'A title' : 'ok' };
  },
};
const runtime = await startRuntime({ dataDir: dir, lmdb: { noSync: true }, recall: { llm, pool: false, summary: { keepLast: 1, maxTokens: 40 } } });
for (let i = 1; i <= 3; i++) {
  await runtime.recall.chat({ userId: 'u', sessionId: 's', message: `turn ${i}: ${'the quick brown fox jumps over the lazy dog '.repeat(6)}` });
}
await summaryAsked;
process.stdout.write('ready\n');
await new Promise(() => {});
