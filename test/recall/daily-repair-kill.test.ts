import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { startRuntime } from '../../src/runtime.ts';

// A process SIGKILLed between a turn's session row and its daily row, then a start that runs
// NO turn: the start itself must mirror the rows the kill left out of the daily view (a
// session with no next turn would otherwise lag for good; chat-kill.test.ts covers the
// catch-up by a next turn). The writer kills itself exactly in that gap, once after a user
// row, once after a reply row, on two sessions.

const writer = join(import.meta.dirname, '../programs/gap-kill-writer.ts');
const dir = mkdtempSync(join(tmpdir(), 'mnemo-daily-repair-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function runUntilKilled(sessionId: string, role: 'user' | 'assistant', turns: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', writer, dir, sessionId, role, String(turns)], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
    child.on('exit', (code, signal) => (signal === 'SIGKILL' ? resolve() : reject(new Error(`writer exited by itself (${code}): ${err}`))));
  });
}

type Recall = Awaited<ReturnType<typeof startRuntime>>['recall'];
const line = (r: { role: string; content: string; error?: { code: string } }) => `${r.role}:${r.content}:${r.error?.code ?? ''}`;

/** The session's rows, and the daily rows that name it, as sorted `role:content:error` lines. */
async function sessionAndDaily(recall: Recall, sessionId: string): Promise<{ session: string[]; mirrored: string[] }> {
  const daily = await recall.searchDaily({ userId: 'u', keyword: '', limit: 200 });
  const days = [...new Set(daily.map((r) => r.day))];
  const all = (await Promise.all(days.map((d) => recall.dailyMessages('u', d)))).flat();
  return {
    session: (await recall.getSessionMessages('u', sessionId)).map(line).sort(),
    mirrored: all.filter((r) => r.sessionId === sessionId).map(line).sort(),
  };
}

it('a start with no turn mirrors every session row a kill left out of the daily view, once', async () => {
  await runUntilKilled('after-user', 'user', 2);
  await runUntilKilled('after-reply', 'assistant', 1);
  const runtime = await startRuntime({ dataDir: dir, lmdb: { noSync: true } });
  const seen: Record<string, { session: string[]; mirrored: string[] }> = {};
  try {
    for (const [sessionId, rows] of [['after-user', 5], ['after-reply', 4]] as const) {
      seen[sessionId] = await sessionAndDaily(runtime.recall, sessionId);
      expect(seen[sessionId]!.session, sessionId).toHaveLength(rows);
      expect(seen[sessionId]!.mirrored, sessionId).toEqual(seen[sessionId]!.session);
    }
  } finally {
    await runtime.stop();
  }
  // Repaired once: the next start finds the same rows, none twice.
  const again = await startRuntime({ dataDir: dir, lmdb: { noSync: true } });
  try {
    for (const sessionId of ['after-user', 'after-reply']) expect(await sessionAndDaily(again.recall, sessionId)).toEqual(seen[sessionId]);
  } finally {
    await again.stop();
  }
});
