import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { offlineTitle } from '../../src/recall/rows/session-title.ts';
import { startRuntime } from '../../src/runtime.ts';
import { startChatStub, type ChatStub } from '../support/chat-completions-stub.ts';

// A session is listed at the end of its first turn. A process SIGKILLed inside that turn, after
// the turn stored rows, must not leave the session out of the list for good: the next start
// lists it, titled from its first message. Kills land at two points, held there by the model
// server: waiting for the reply (only the user row is stored), and waiting for the title (the
// reply, daily and log rows are stored).

const writer = join(import.meta.dirname, '../programs/first-turn-writer.ts');
const dir = mkdtempSync(join(tmpdir(), 'mnemo-first-turn-'));
let stub: ChatStub;

beforeAll(async () => {
  stub = await startChatStub({ toolCall: () => null });
});
afterAll(async () => {
  await stub.close();
  rmSync(dir, { recursive: true, force: true });
});

async function startWriter(sessionId: string, message: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', writer, dir, stub.baseURL, sessionId, message], { stdio: ['ignore', 'pipe', 'inherit'] });
  await once(child.stdout!.setEncoding('utf8'), 'data');
  return child;
}

async function kill(child: ChildProcess): Promise<void> {
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}

it('lists a session whose first turn was killed, with the offline title of its first message', async () => {
  // Killed while the model holds the reply: the user row is stored, nothing else.
  stub.hold();
  const first = await startWriter('before-reply', 'killed before the reply came');
  await stub.waitForRequest(1);
  await kill(first);
  stub.release();

  // Killed while the model holds the title: reply, daily and log rows are stored.
  const second = await startWriter('at-title', 'killed while the title was asked for');
  await stub.waitForRequest(2);
  stub.hold();
  await stub.waitForRequest(3);
  await kill(second);
  stub.release();

  const runtime = await startRuntime({ dataDir: dir });
  try {
    const list = await runtime.recall.listSessions('u');
    expect(list.map((c) => [c.sessionId, c.title]).sort()).toEqual([
      ['at-title', offlineTitle('killed while the title was asked for')],
      ['before-reply', offlineTitle('killed before the reply came')],
    ]);
    const rows = await runtime.recall.getSessionMessages('u', 'at-title');
    expect(list.find((c) => c.sessionId === 'at-title')?.updatedAt).toBe(rows.at(-1)?.ts);
    // A turn now keeps the title, and the repair is not repeated on the next start.
    await runtime.recall.chat({ userId: 'u', sessionId: 'before-reply', message: 'back again' });
    expect((await runtime.recall.listSessions('u')).find((c) => c.sessionId === 'before-reply')?.title).toBe(
      offlineTitle('killed before the reply came'),
    );
  } finally {
    await runtime.stop();
  }
  const again = await startRuntime({ dataDir: dir });
  try {
    expect((await again.recall.listSessions('u')).map((c) => c.sessionId).sort()).toEqual(['at-title', 'before-reply']);
  } finally {
    await again.stop();
  }
});
