import { describe, expect, it } from 'vitest';
import { cast, exit, startSupervisor, stop, whichChildren, type ChildSpec, type Pid, type Strategy } from '../../src/otp/index.ts';
import { waitDead, waitFor, worker } from '../support/otp-fixtures.ts';

async function tree(strategy: Strategy, log: string[], specs: (log: string[]) => ChildSpec[]) {
  const sup = await startSupervisor({ strategy, intensity: 10, children: specs(log) });
  log.length = 0;
  return sup;
}

async function pidsOf(sup: Pid): Promise<Record<string, Pid | 'restarting' | undefined>> {
  return Object.fromEntries((await whichChildren(sup)).map((c) => [c.id, c.pid]));
}

const abc = (log: string[]): ChildSpec[] => [
  { id: 'a', start: worker(log, 'a') },
  { id: 'b', start: worker(log, 'b') },
  { id: 'c', start: worker(log, 'c') },
];

describe('restart strategies', () => {
  it('one_for_one restarts only the child that crashed', async () => {
    const log: string[] = [];
    const sup = await tree('one_for_one', log, abc);
    const before = await pidsOf(sup);
    cast(before['b'] as Pid, { type: 'crash' });
    await waitFor(() => log.includes('start b'), 'b to restart');
    const after = await pidsOf(sup);
    expect(log).toEqual(['stop b crashed', 'start b']);
    expect(after['a']).toBe(before['a']);
    expect(after['b']).not.toBe(before['b']);
    expect(after['c']).toBe(before['c']);
    void stop(sup, 'shutdown');
    await waitDead(sup);
  });

  it('one_for_all stops the others right to left, then starts all left to right', async () => {
    const log: string[] = [];
    const sup = await tree('one_for_all', log, abc);
    const before = await pidsOf(sup);
    cast(before['b'] as Pid, { type: 'crash' });
    await waitFor(() => log.includes('start c'), 'the group restart');
    expect(log).toEqual(['stop b crashed', 'stop c shutdown', 'stop a shutdown', 'start a', 'start b', 'start c']);
    const after = await pidsOf(sup);
    for (const id of ['a', 'b', 'c']) expect(after[id]).not.toBe(before[id]);
    void stop(sup, 'shutdown');
    await waitDead(sup);
  });

  it('rest_for_one restarts the crashed child and those started after it', async () => {
    const log: string[] = [];
    const sup = await tree('rest_for_one', log, abc);
    const before = await pidsOf(sup);
    cast(before['b'] as Pid, { type: 'crash' });
    await waitFor(() => log.includes('start c'), 'the rest to restart');
    expect(log).toEqual(['stop b crashed', 'stop c shutdown', 'start b', 'start c']);
    const after = await pidsOf(sup);
    expect(after['a']).toBe(before['a']);
    expect(after['b']).not.toBe(before['b']);
    expect(after['c']).not.toBe(before['c']);
    void stop(sup, 'shutdown');
    await waitDead(sup);
  });

  it('rest_for_one on the last child restarts only that child', async () => {
    const log: string[] = [];
    const sup = await tree('rest_for_one', log, abc);
    const before = await pidsOf(sup);
    cast(before['c'] as Pid, { type: 'crash' });
    await waitFor(() => log.includes('start c'), 'c to restart');
    expect(log).toEqual(['stop c crashed', 'start c']);
    void stop(sup, 'shutdown');
    await waitDead(sup);
  });

  it('one_for_all stops a temporary sibling and does not restart it; its spec is dropped', async () => {
    const log: string[] = [];
    const sup = await tree('one_for_all', log, (l) => [
      { id: 'a', start: worker(l, 'a') },
      { id: 't', start: worker(l, 't'), restart: 'temporary' },
      { id: 'c', start: worker(l, 'c') },
    ]);
    const before = await pidsOf(sup);
    cast(before['a'] as Pid, { type: 'crash' });
    await waitFor(() => log.includes('start c'), 'the group restart');
    expect(log).toEqual(['stop a crashed', 'stop c shutdown', 'stop t shutdown', 'start a', 'start c']);
    expect(Object.keys(await pidsOf(sup)).sort()).toEqual(['a', 'c']);
    void stop(sup, 'shutdown');
    await waitDead(sup);
  });

  it('rest_for_one does not restart a temporary child started after the crashed one', async () => {
    const log: string[] = [];
    const sup = await tree('rest_for_one', log, (l) => [
      { id: 'a', start: worker(l, 'a') },
      { id: 'b', start: worker(l, 'b') },
      { id: 't', start: worker(l, 't'), restart: 'temporary' },
    ]);
    const before = await pidsOf(sup);
    cast(before['b'] as Pid, { type: 'crash' });
    await waitFor(() => log.includes('start b'), 'b to restart');
    expect(log).toEqual(['stop b crashed', 'stop t shutdown', 'start b']);
    expect(Object.keys(await pidsOf(sup)).sort()).toEqual(['a', 'b']);
    void stop(sup, 'shutdown');
    await waitDead(sup);
  });
});
