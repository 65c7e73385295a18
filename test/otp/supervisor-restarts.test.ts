import { describe, expect, it } from 'vitest';
import {
  cast,
  exit,
  stop,
  isAlive,
  monitor,
  startSupervisor,
  whichChildren,
  type Clock,
  type ExitReason,
  type Pid,
  type RestartType,
} from '../../src/otp/index.ts';
import { fakeClock, waitDead, waitFor, worker } from '../support/otp-fixtures.ts';

async function childPid(sup: Pid, id: string): Promise<Pid | 'restarting' | undefined> {
  return (await whichChildren(sup)).find((c) => c.id === id)?.pid;
}

function exitOf(pid: Pid): Promise<ExitReason> {
  return new Promise((resolve) => monitor(pid, (d) => resolve(d.reason)));
}

/** A supervisor with one worker `w`; returns the supervisor and the worker's first pid. */
async function single(log: string[], restart: RestartType, clock: Clock = fakeClock(), intensity = 10) {
  const sup = await startSupervisor({ intensity, period: 5, children: [{ id: 'w', start: worker(log, 'w'), restart }] }, { clock });
  return { sup, first: (await childPid(sup, 'w')) as Pid };
}

describe('restart types', () => {
  it('a permanent child is restarted even after a normal exit', async () => {
    const log: string[] = [];
    const { sup, first } = await single(log, 'permanent');
    cast(first, { type: 'stop', reason: 'normal' });
    await waitFor(() => log.filter((l) => l === 'start w').length === 2, 'the restart');
    expect(await childPid(sup, 'w')).not.toBe(first);
    void stop(sup, 'shutdown');
    await waitDead(sup);
  });

  for (const reason of ['normal', 'shutdown', { shutdown: 'done' }] as const) {
    it(`a transient child is not restarted after ${JSON.stringify(reason)}; its spec is kept`, async () => {
      const log: string[] = [];
      const { sup, first } = await single(log, 'transient');
      cast(first, { type: 'stop', reason });
      await waitDead(first);
      expect(await whichChildren(sup)).toEqual([{ id: 'w', pid: undefined, type: 'worker' }]);
      expect(log.filter((l) => l === 'start w')).toHaveLength(1);
      void stop(sup, 'shutdown');
      await waitDead(sup);
    });
  }

  it('a transient child is restarted after a crash', async () => {
    const log: string[] = [];
    const { sup, first } = await single(log, 'transient');
    cast(first, { type: 'crash' });
    await waitFor(() => log.filter((l) => l === 'start w').length === 2, 'the restart');
    expect(await childPid(sup, 'w')).not.toBe(first);
    void stop(sup, 'shutdown');
    await waitDead(sup);
  });

  it('a temporary child is never restarted, and its spec is dropped', async () => {
    const log: string[] = [];
    const { sup, first } = await single(log, 'temporary');
    cast(first, { type: 'crash' });
    await waitDead(first);
    expect(await whichChildren(sup)).toEqual([]);
    expect(log).toEqual(['start w', 'stop w crashed']);
    void stop(sup, 'shutdown');
    await waitDead(sup);
  });
});

describe('restart intensity', () => {
  it('exactly `intensity` restarts within the period are tolerated; one more shuts the supervisor down', async () => {
    const log: string[] = [];
    const clock = fakeClock();
    const { sup } = await single(log, 'permanent', clock, 3);
    for (let i = 1; i <= 3; i++) {
      cast((await childPid(sup, 'w')) as Pid, { type: 'crash' });
      await waitFor(() => log.filter((l) => l === 'start w').length === i + 1, `restart ${i}`);
      clock.advance(1000);
    }
    expect(isAlive(sup)).toBe(true);
    const supExit = exitOf(sup);
    cast((await childPid(sup, 'w')) as Pid, { type: 'crash' });
    expect(await supExit).toBe('shutdown');
    expect(log.filter((l) => l === 'start w')).toHaveLength(4);
  });

  it('with the defaults (1 per 5 s) the second crash in the window escalates', async () => {
    const log: string[] = [];
    const clock = fakeClock();
    const sup = await startSupervisor({ children: [{ id: 'w', start: worker(log, 'w') }] }, { clock });
    cast((await childPid(sup, 'w')) as Pid, { type: 'crash' });
    await waitFor(() => log.filter((l) => l === 'start w').length === 2, 'the first restart');
    clock.advance(4000);
    const supExit = exitOf(sup);
    cast((await childPid(sup, 'w')) as Pid, { type: 'crash' });
    expect(await supExit).toBe('shutdown');
  });

  it('restarts older than the period no longer count', async () => {
    const log: string[] = [];
    const clock = fakeClock();
    const { sup } = await single(log, 'permanent', clock, 1);
    for (let i = 1; i <= 4; i++) {
      cast((await childPid(sup, 'w')) as Pid, { type: 'crash' });
      await waitFor(() => log.filter((l) => l === 'start w').length === i + 1, `restart ${i}`);
      clock.advance(6000);
    }
    expect(isAlive(sup)).toBe(true);
    void stop(sup, 'shutdown');
    await waitDead(sup);
  });

  it('the window is in whole seconds and includes its edge (OTP: R >= Now - Period)', async () => {
    const log: string[] = [];
    const clock = fakeClock(0);
    const { sup } = await single(log, 'permanent', clock, 1);
    cast((await childPid(sup, 'w')) as Pid, { type: 'crash' }); // counted at second 0
    await waitFor(() => log.filter((l) => l === 'start w').length === 2, 'the first restart');
    clock.advance(5999); // second 5: 0 >= 5 - 5, still inside the window
    const supExit = exitOf(sup);
    cast((await childPid(sup, 'w')) as Pid, { type: 'crash' });
    expect(await supExit).toBe('shutdown');
  });

  it('a start that fails during a restart is retried, each retry counting against intensity', async () => {
    const log: string[] = [];
    let failing = false;
    const clock = fakeClock();
    const sup = await startSupervisor(
      { intensity: 3, period: 5, children: [{ id: 'w', start: worker(log, 'w', { failStart: () => failing }) }] },
      { clock },
    );
    failing = true;
    const supExit = exitOf(sup);
    cast((await childPid(sup, 'w')) as Pid, { type: 'crash' });
    expect(await supExit).toBe('shutdown');
    // restart 1 (fails), retry 2 (fails), retry 3 (fails), retry 4 exceeds intensity 3.
    expect(log.filter((l) => l === 'start_failed w')).toHaveLength(3);
  });

  it('a shutdown request is handled between retries of a start that keeps failing', async () => {
    const log: string[] = [];
    let failing = false;
    let t = 0;
    // Restarts 10 s apart never exhaust intensity, so only the shutdown can end the retries.
    const sup = await startSupervisor(
      { children: [{ id: 'w', start: worker(log, 'w', { failStart: () => failing }) }] },
      { clock: { now: () => (t += 10_000) } },
    );
    failing = true;
    cast((await childPid(sup, 'w')) as Pid, { type: 'crash' });
    await waitFor(() => log.filter((l) => l === 'start_failed w').length >= 3, 'a few retries');
    const supExit = exitOf(sup);
    void stop(sup, 'shutdown');
    expect(await supExit).toBe('shutdown');
  });

  it('a retried start that succeeds brings the child back', async () => {
    const log: string[] = [];
    let failures = 2;
    const sup = await startSupervisor(
      { intensity: 5, period: 5, children: [{ id: 'w', start: worker(log, 'w', { failStart: () => log.includes('stop w crashed') && failures-- > 0 }) }] },
      { clock: fakeClock() },
    );
    const first = (await childPid(sup, 'w')) as Pid;
    cast(first, { type: 'crash' });
    await waitFor(() => log.filter((l) => l === 'start w').length === 2, 'the successful retry');
    expect(log.filter((l) => l === 'start_failed w')).toHaveLength(2);
    const pid = await childPid(sup, 'w');
    expect(pid).not.toBe(first);
    expect(isAlive(pid as Pid)).toBe(true);
    void stop(sup, 'shutdown');
    await waitDead(sup);
  });
});

describe('escalation', () => {
  it('a child supervisor that gives up is restarted by its parent', async () => {
    const log: string[] = [];
    const clock = fakeClock();
    const root = await startSupervisor(
      {
        intensity: 1,
        children: [
          {
            id: 'inner',
            type: 'supervisor',
            start: () => startSupervisor({ intensity: 0, children: [{ id: 'w', start: worker(log, 'w') }] }, { clock }),
          },
        ],
      },
      { clock },
    );
    const inner = (await childPid(root, 'inner')) as Pid;
    const innerExit = exitOf(inner);
    cast((await childPid(inner, 'w')) as Pid, { type: 'crash' });
    expect(await innerExit).toBe('shutdown');
    await waitFor(() => log.filter((l) => l === 'start w').length === 2, 'the new inner tree');
    const newInner = (await childPid(root, 'inner')) as Pid;
    expect(newInner).not.toBe(inner);
    expect(isAlive(newInner)).toBe(true);
    void stop(root, 'shutdown');
    await waitDead(root);
  });

  it('escalation goes all the way up when every level is out of restarts', async () => {
    const log: string[] = [];
    const clock = fakeClock();
    const root = await startSupervisor(
      {
        intensity: 0,
        children: [
          { id: 'sibling', start: worker(log, 'sibling') },
          {
            id: 'inner',
            type: 'supervisor',
            start: () => startSupervisor({ intensity: 0, children: [{ id: 'w', start: worker(log, 'w') }] }, { clock }),
          },
        ],
      },
      { clock },
    );
    const inner = (await childPid(root, 'inner')) as Pid;
    const rootExit = exitOf(root);
    cast((await childPid(inner, 'w')) as Pid, { type: 'crash' });
    expect(await rootExit).toBe('shutdown');
    expect(log).toEqual(['start sibling', 'start w', 'stop w crashed', 'stop sibling shutdown']);
  });
});
