/**
 * MnemoSaver on PostgreSQL across real processes (`node --import tsx` children): a child
 * writes turns and is SIGKILLed, another resumes the thread and finds every acknowledged turn;
 * children taking turns one after another leave one linear chain that this process reads.
 * (Savers racing on one thread from separate pools: langgraph-postgres.test.ts.)
 */
import { describe, expect, it } from 'vitest';
import { MnemoSaver } from '../../src/langgraph/index.ts';
import { runTurns } from '../support/langgraph-turns-process.ts';
import { usePostgres } from '../support/postgres-server.ts';

const db = usePostgres();

describe('MnemoSaver on PostgreSQL across processes', { timeout: 120_000 }, () => {
  it('every turn acknowledged before a SIGKILL is there when another process resumes', async () => {
    const where = { url: db.url, schema: db.schema('lgkill') };
    const killed = await runTurns(where, 0, -1, 5);
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    const acknowledged = killed.acks.length;
    expect(acknowledged).toBeGreaterThanOrEqual(5);

    const resumed = await runTurns(where, 100, 1);
    expect(resumed.code, resumed.stderr).toBe(0);
    const state = resumed.state ?? [];
    const asked = state.filter((m) => m.type === 'human').map((m) => m.text);
    for (let turn = 0; turn < acknowledged; turn++) expect(asked.filter((q) => q.startsWith(`Question ${turn}:`))).toHaveLength(1);
    expect(state[state.length - 2]?.text).toBe('Question 100: ');
    expect(state.map((m) => m.type)).toEqual(state.map((_, i) => (i % 2 === 0 ? 'human' : 'ai')));
  });

  it('a saver in this process reads what child processes wrote, as one linear chain', async () => {
    const where = { url: db.url, schema: db.schema('lgproc') };
    const first = await runTurns(where, 0, 3);
    expect(first.code, first.stderr).toBe(0);
    const second = await runTurns(where, 3, 2);
    expect(second.code, second.stderr).toBe(0);
    expect(second.acks.map((a) => a.messages)).toEqual([8, 10]);
    const saver = new MnemoSaver({ postgres: db.url, schema: where.schema });
    db.cleanup(() => saver.close());
    const ids: string[] = [];
    const parents: (string | undefined)[] = [];
    for await (const t of saver.list({ configurable: { thread_id: 'thread-1', checkpoint_ns: '' } })) {
      ids.push(t.config.configurable?.['checkpoint_id'] as string);
      parents.push(t.parentConfig?.configurable?.['checkpoint_id'] as string | undefined);
    }
    // Newest first: each checkpoint's parent is the next one listed; the oldest is the root.
    for (let i = 0; i < ids.length - 1; i++) expect(parents[i]).toBe(ids[i + 1]);
    expect(parents.at(-1)).toBeUndefined();
    expect(second.state?.map((m) => m.id).slice(0, 6)).toEqual(first.state?.map((m) => m.id));
  });
});
