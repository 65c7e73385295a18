import { afterEach, describe, expect, it } from 'vitest';
import {
  cast,
  countChildren,
  deleteChild,
  exit,
  stop,
  isAlive,
  restartChild,
  startChild,
  startSupervisor,
  SupervisorError,
  terminateChild,
  whichChildren,
  type Pid,
} from '../../src/otp/index.ts';
import { fakeClock, waitDead, waitFor, worker } from '../support/otp-fixtures.ts';

const running: Pid[] = [];
afterEach(async () => {
  for (const sup of running.splice(0)) {
    void stop(sup, 'shutdown');
    await waitDead(sup);
  }
});

async function sup(log: string[], ids: string[] = ['a']): Promise<Pid> {
  const pid = await startSupervisor({ intensity: 100, children: ids.map((id) => ({ id, start: worker(log, id) })) });
  running.push(pid);
  return pid;
}

async function supervisorError(promise: Promise<unknown>): Promise<SupervisorError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SupervisorError);
  return error as SupervisorError;
}

describe('startChild', () => {
  it('starts and adds a child after the existing ones', async () => {
    const log: string[] = [];
    const s = await sup(log, ['a']);
    const pid = await startChild(s, { id: 'b', start: worker(log, 'b') });
    expect(isAlive(pid as Pid)).toBe(true);
    expect((await whichChildren(s)).map((c) => c.id)).toEqual(['b', 'a']);
  });

  it('rejects an id that is running with already_started and the pid', async () => {
    const log: string[] = [];
    const s = await sup(log);
    const [a] = await whichChildren(s);
    const error = await supervisorError(startChild(s, { id: 'a', start: worker(log, 'a') }));
    expect(error.code).toBe('already_started');
    expect(error.details.pid).toBe(a?.pid);
  });

  it('rejects an id whose spec is kept but not running with already_present', async () => {
    const log: string[] = [];
    const s = await sup(log);
    await terminateChild(s, 'a');
    expect((await supervisorError(startChild(s, { id: 'a', start: worker(log, 'a') }))).code).toBe('already_present');
  });

  it('rejects a malformed spec with invalid_child_spec', async () => {
    const s = await sup([]);
    const error = await supervisorError(startChild(s, { id: 'x', start: () => 'ignore', restart: 'sometimes' as never }));
    expect(error).toMatchObject({ code: 'invalid_child_spec', details: { field: 'restart' } });
    expect((await supervisorError(startChild(s, { id: '', start: () => 'ignore' }))).code).toBe('invalid_child_spec');
    expect((await supervisorError(startChild(s, { id: 'y', start: () => 'ignore', shutdown: -1 }))).code).toBe('invalid_child_spec');
  });

  it('a failing start rejects with failed_to_start_child and keeps no spec', async () => {
    const log: string[] = [];
    const s = await sup(log);
    const error = await supervisorError(startChild(s, { id: 'bad', start: worker(log, 'bad', { failStart: () => true }) }));
    expect(error).toMatchObject({ code: 'failed_to_start_child', details: { childId: 'bad' } });
    expect((await whichChildren(s)).map((c) => c.id)).toEqual(['a']);
  });

  it("a start that returns 'ignore' keeps the spec without a process (a temporary one is not kept)", async () => {
    const s = await sup([]);
    await expect(startChild(s, { id: 'lazy', start: () => 'ignore' })).resolves.toBeUndefined();
    await expect(startChild(s, { id: 'gone', start: () => 'ignore', restart: 'temporary' })).resolves.toBeUndefined();
    expect(await whichChildren(s)).toEqual([
      { id: 'lazy', pid: undefined, type: 'worker' },
      { id: 'a', pid: expect.anything(), type: 'worker' },
    ]);
  });
});

describe('terminateChild, restartChild, deleteChild', () => {
  it('terminateChild stops a child and keeps its spec; restartChild starts it again', async () => {
    const log: string[] = [];
    const s = await sup(log);
    await terminateChild(s, 'a');
    expect(log).toEqual(['start a', 'stop a shutdown']);
    expect(await whichChildren(s)).toEqual([{ id: 'a', pid: undefined, type: 'worker' }]);
    const pid = await restartChild(s, 'a');
    expect(isAlive(pid as Pid)).toBe(true);
  });

  it('terminateChild of a temporary child drops its spec', async () => {
    const log: string[] = [];
    const s = await sup(log);
    await startChild(s, { id: 't', start: worker(log, 't'), restart: 'temporary' });
    await terminateChild(s, 't');
    expect((await whichChildren(s)).map((c) => c.id)).toEqual(['a']);
  });

  it('terminateChild also takes the child pid', async () => {
    const log: string[] = [];
    const s = await sup(log);
    const [a] = await whichChildren(s);
    await terminateChild(s, a?.pid as Pid);
    expect(await whichChildren(s)).toEqual([{ id: 'a', pid: undefined, type: 'worker' }]);
  });

  it('deleteChild removes a stopped child', async () => {
    const s = await sup([]);
    await terminateChild(s, 'a');
    await deleteChild(s, 'a');
    expect(await whichChildren(s)).toEqual([]);
  });

  it('restartChild and deleteChild on a running child reject with running', async () => {
    const s = await sup([]);
    expect((await supervisorError(restartChild(s, 'a'))).code).toBe('running');
    expect((await supervisorError(deleteChild(s, 'a'))).code).toBe('running');
  });

  it('an unknown id rejects with not_found', async () => {
    const s = await sup([]);
    expect((await supervisorError(terminateChild(s, 'zz'))).code).toBe('not_found');
    expect((await supervisorError(restartChild(s, 'zz'))).code).toBe('not_found');
    expect((await supervisorError(deleteChild(s, 'zz'))).code).toBe('not_found');
  });

  it('restartChild and deleteChild on a child being restarted reject with restarting', async () => {
    const log: string[] = [];
    let failing = false;
    let t = 0;
    // Every restart is 10 s after the previous one, so retries never exhaust intensity.
    const s = await startSupervisor(
      { children: [{ id: 'w', start: worker(log, 'w', { failStart: () => failing }) }] },
      { clock: { now: () => (t += 10_000) } },
    );
    running.push(s);
    failing = true;
    cast((await whichChildren(s))[0]?.pid as Pid, { type: 'crash' });
    await waitFor(() => log.includes('start_failed w'), 'the first failed restart');
    expect(await whichChildren(s)).toEqual([{ id: 'w', pid: 'restarting', type: 'worker' }]);
    expect((await supervisorError(restartChild(s, 'w'))).code).toBe('restarting');
    expect((await supervisorError(deleteChild(s, 'w'))).code).toBe('restarting');
    failing = false;
    await waitFor(() => log.filter((l) => l === 'start w').length === 2, 'the retry to succeed');
  });
});

describe('whichChildren and countChildren', () => {
  it('whichChildren lists the most recently started child first, like OTP', async () => {
    const s = await sup([], ['a', 'b', 'c']);
    expect((await whichChildren(s)).map((c) => c.id)).toEqual(['c', 'b', 'a']);
  });

  it('countChildren counts specs, running children, supervisors and workers', async () => {
    const log: string[] = [];
    const s = await sup(log, ['a', 'b']);
    await startChild(s, {
      id: 'inner',
      type: 'supervisor',
      start: () => startSupervisor({ children: [] }, { clock: fakeClock() }),
    });
    await terminateChild(s, 'b');
    expect(await countChildren(s)).toEqual({ specs: 3, active: 2, supervisors: 1, workers: 2 });
  });
});

describe('supervisor flags', () => {
  it('malformed flags are rejected with invalid_supervisor_flags before anything starts', async () => {
    const log: string[] = [];
    const children = [{ id: 'a', start: worker(log, 'a') }];
    expect((await supervisorError(startSupervisor({ strategy: 'all_for_none' as never, children }))).code).toBe('invalid_supervisor_flags');
    expect((await supervisorError(startSupervisor({ intensity: -1, children }))).code).toBe('invalid_supervisor_flags');
    expect((await supervisorError(startSupervisor({ period: 0, children }))).code).toBe('invalid_supervisor_flags');
    expect(log).toEqual([]);
  });

  it('duplicate child ids are rejected with invalid_child_spec', async () => {
    const log: string[] = [];
    const error = await supervisorError(
      startSupervisor({ children: [{ id: 'a', start: worker(log, 'a') }, { id: 'a', start: worker(log, 'a') }] }),
    );
    expect(error).toMatchObject({ code: 'invalid_child_spec', details: { childId: 'a' } });
    expect(log).toEqual([]);
  });
});
