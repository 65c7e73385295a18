/**
 * A LangGraph conversation checkpointed by MnemoSaver survives its process: real child
 * processes (`node --import tsx`) write turns and exit or are killed; another process resumes the thread.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runTurns } from '../support/langgraph-turns-process.ts';

let dataDir: string;
beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'mnemo-lg-restart-'));
});
afterEach(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

describe('MnemoSaver across processes', { timeout: 90_000 }, () => {
  it('a second process resumes the thread and sees every message the first one wrote', async () => {
    const first = await runTurns({ dataDir }, 0, 4);
    expect(first.code, first.stderr).toBe(0);
    expect(first.acks.map((a) => a.messages)).toEqual([2, 4, 6, 8]);

    const second = await runTurns({ dataDir }, 4, 2);
    expect(second.code, second.stderr).toBe(0);
    expect(second.acks.map((a) => a.messages)).toEqual([10, 12]);
    const state = second.state ?? [];
    expect(state.map((m) => m.text)).toEqual([
      'Question 0: wh', 'Turn 1: you sa', 'Question 1: wh', 'Turn 2: you sa', 'Question 2: wh', 'Turn 3: you sa',
      'Question 3: wh', 'Turn 4: you sa', 'Question 4: wh', 'Turn 5: you sa', 'Question 5: wh', 'Turn 6: you sa',
    ]);
    expect(new Set(state.map((m) => m.id)).size).toBe(12);
    expect(first.state?.map((m) => m.id)).toEqual(state.slice(0, 8).map((m) => m.id));
  });

  it('every turn acknowledged before a SIGKILL is there when another process resumes', async () => {
    const killed = await runTurns({ dataDir }, 0, -1, 5);
    expect(killed.signal).toBe('SIGKILL');
    const acknowledged = killed.acks.length;
    expect(acknowledged).toBeGreaterThanOrEqual(5);

    const resumed = await runTurns({ dataDir }, 100, 1);
    expect(resumed.code, resumed.stderr).toBe(0);
    const state = resumed.state ?? [];
    const asked = state.filter((m) => m.type === 'human').map((m) => m.text);
    for (let turn = 0; turn < acknowledged; turn++) expect(asked.filter((q) => q.startsWith(`Question ${turn}:`))).toHaveLength(1);
    expect(state[state.length - 2]?.text).toBe('Question 100: ');
    // Whatever the kill cut off mid-turn, the thread is whole: question/answer pairs in order.
    expect(state.map((m) => m.type)).toEqual(state.map((_, i) => (i % 2 === 0 ? 'human' : 'ai')));
  });
});
