import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { startRuntime } from '../../src/runtime.ts';
import { runAndKill } from '../support/kill-child.ts';
import { says } from '../support/scripted-llm.ts';

// The summary of a session is a durable job, queued in the commit of the turn that found the
// session due: a process SIGKILLed while the summarizing model is still thinking loses nothing.
// The next start summarizes the session without another turn.

const writer = join(import.meta.dirname, '../programs/summary-kill-writer.ts');
const dir = mkdtempSync(join(tmpdir(), 'mnemo-summary-kill-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('a summary job cut short by a kill runs at the next start, with no new turn', async () => {
  await runAndKill(writer, [dir], 0);
  const llm = { chat: async () => says('the summary after the restart') };
  const runtime = await startRuntime({ dataDir: dir, lmdb: { noSync: true }, recall: { llm, pool: false, summary: { keepLast: 1, maxTokens: 40 } } });
  try {
    await runtime.recall.summaryIdle();
    const summaries = await runtime.recall.summaries('u', 's');
    expect(summaries.map((s) => [s.text, s.method, s.from])).toEqual([['the summary after the restart', 'llm', 1]]);
    expect((await runtime.recall.sessionMessages('u', 's')).length).toBe(6);
  } finally {
    await runtime.stop();
  }
}, 60_000);
