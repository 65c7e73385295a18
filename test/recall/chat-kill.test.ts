import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startRuntime } from '../../src/runtime.ts';

// SIGKILL a process in the middle of chat turns, several times over one data directory. A turn
// writes its session rows and its daily rows in separate transactions, so kills leave session
// rows the daily view lacks; the next turn on each session must mirror them, each exactly once.
// (noSync in the writer: a process kill loses nothing LMDB committed; this is about the gap
// between two commits, not about fsync.)

const ROUNDS = 6;
const SESSIONS = 8;
const writer = join(import.meta.dirname, '../programs/chat-turns-writer.ts');
const dir = mkdtempSync(join(tmpdir(), 'mnemo-chat-kill-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function runAndKill(round: number, killAfterMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', writer, dir, String(round), String(SESSIONS)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stdout.setEncoding('utf8').once('data', () => setTimeout(() => child.kill('SIGKILL'), killAfterMs));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
    child.on('exit', (code, signal) => (signal === 'SIGKILL' ? resolve() : reject(new Error(`writer exited by itself (${code}): ${err}`))));
  });
}

describe(`SIGKILL in the middle of chat turns, ${ROUNDS} rounds`, () => {
  it(
    'the next turn of each session puts every session row in the daily view exactly once',
    async () => {
      for (let round = 0; round < ROUNDS; round++) await runAndKill(round, 150 + Math.floor(Math.random() * 300));
      const runtime = await startRuntime({ dataDir: dir, lmdb: { noSync: true } });
      try {
        const recall = runtime.recall;
        for (let s = 0; s < SESSIONS; s++) await recall.chat({ userId: 'u', sessionId: `s${s}`, message: `after s${s}` });
        const daily = await recall.searchDaily({ userId: 'u', keyword: '', limit: 200 });
        const days = [...new Set(daily.map((r) => r.day))];
        const all = (await Promise.all(days.map((d) => recall.dailyMessages('u', d)))).flat();
        for (let s = 0; s < SESSIONS; s++) {
          const session = (await recall.getSessionMessages('u', `s${s}`)).map((r) => `${r.role}:${r.content}:${r.error?.code ?? ''}`);
          const mirrored = all.filter((r) => r.sessionId === `s${s}`).map((r) => `${r.role}:${r.content}:${r.error?.code ?? ''}`);
          expect(session.length).toBeGreaterThan(2);
          expect([...mirrored].sort(), `session s${s}`).toEqual([...session].sort());
        }
      } finally {
        await runtime.stop();
      }
    },
    120_000,
  );
});
