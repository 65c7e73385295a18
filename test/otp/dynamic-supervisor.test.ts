import { describe, expect, it } from 'vitest';
import {
  call,
  cast,
  countChildren,
  deleteChild,
  exit,
  stop,
  genServer,
  isAlive,
  monitor,
  restartChild,
  spawn,
  startChild,
  startDynamicSupervisor,
  SupervisorError,
  terminateChild,
  whereis,
  whichChildren,
  type ExitReason,
  type Pid,
  type ServerSelf,
} from '../../src/otp/index.ts';
import { waitDead, waitFor } from '../support/otp-fixtures.ts';

/** A conversation-like worker registered under its id; cast `crash` or `{type:'stop'}`. */
function conversation(log: string[]) {
  return (id: string) =>
    spawn(
      genServer<{ self: ServerSelf }, string>({
        init: (convId, self) => {
          log.push(`start ${convId}`);
          return { self };
        },
        handleCall: () => id,
        handleCast: (m, state) => {
          if (m.type === 'crash') throw new Error('boom');
          if (m.type === 'stop') state.self.stop('normal');
        },
        terminate: () => void log.push(`stop ${id}`),
      }),
      { name: `conv:${id}`, input: id, trapExit: true },
    );
}

async function supervisorError(promise: Promise<unknown>): Promise<SupervisorError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SupervisorError);
  return error as SupervisorError;
}

function exitOf(pid: Pid): Promise<ExitReason> {
  return new Promise((resolve) => monitor(pid, (d) => resolve(d.reason)));
}

describe('dynamic supervisor (simple_one_for_one)', () => {
  it('starts with no children and passes startChild arguments to the template', async () => {
    const log: string[] = [];
    const sup = await startDynamicSupervisor({ child: { start: conversation(log), restart: 'transient' } });
    expect(await whichChildren(sup)).toEqual([]);
    const pid = await startChild(sup, 'c1');
    await expect(call('conv:c1', { type: 'who' })).resolves.toBe('c1');
    expect(await whichChildren(sup)).toEqual([{ id: undefined, pid, type: 'worker' }]);
    void stop(sup, 'shutdown');
    await waitDead(sup);
  });

  it('restarts a crashed transient child with the same arguments, under the same name', async () => {
    const log: string[] = [];
    const sup = await startDynamicSupervisor({ intensity: 5, child: { start: conversation(log), restart: 'transient' } });
    const first = (await startChild(sup, 'c2')) as Pid;
    cast(first, { type: 'crash' });
    await waitFor(() => log.filter((l) => l === 'start c2').length === 2, 'the restart');
    const second = whereis('conv:c2');
    expect(second).toBeDefined();
    expect(second).not.toBe(first);
    expect(await whichChildren(sup)).toEqual([{ id: undefined, pid: second, type: 'worker' }]);
    void stop(sup, 'shutdown');
    await waitDead(sup);
  });

  it('a transient child that exits normally is not restarted and is forgotten', async () => {
    const log: string[] = [];
    const sup = await startDynamicSupervisor({ child: { start: conversation(log), restart: 'transient' } });
    const pid = (await startChild(sup, 'c3')) as Pid;
    cast(pid, { type: 'stop' });
    await waitDead(pid);
    expect(await whichChildren(sup)).toEqual([]);
    expect(log).toEqual(['start c3', 'stop c3']);
    void stop(sup, 'shutdown');
    await waitDead(sup);
  });

  it('terminateChild takes a pid; an id is refused with simple_one_for_one; a pid that already exited is ok (idempotent)', async () => {
    const log: string[] = [];
    const sup = await startDynamicSupervisor({ child: { start: conversation(log) } });
    const pid = (await startChild(sup, 'c4')) as Pid;
    expect((await supervisorError(terminateChild(sup, 'c4'))).code).toBe('simple_one_for_one');
    await terminateChild(sup, pid);
    expect(isAlive(pid)).toBe(false);
    expect(await whichChildren(sup)).toEqual([]);
    // supervisor_SUITE: OTP's find_child treats a dynamic child's pid that is no longer alive as found.
    await expect(terminateChild(sup, pid)).resolves.toBeUndefined();
    void stop(sup, 'shutdown');
    await waitDead(sup);
  });

  it('restartChild and deleteChild are refused with simple_one_for_one', async () => {
    const sup = await startDynamicSupervisor({ child: { start: conversation([]) } });
    expect((await supervisorError(restartChild(sup, 'x'))).code).toBe('simple_one_for_one');
    expect((await supervisorError(deleteChild(sup, 'x'))).code).toBe('simple_one_for_one');
    void stop(sup, 'shutdown');
    await waitDead(sup);
  });

  it('refuses children beyond maxChildren with max_children', async () => {
    const sup = await startDynamicSupervisor({ maxChildren: 2, child: { start: conversation([]) } });
    await startChild(sup, 'm1');
    await startChild(sup, 'm2');
    expect((await supervisorError(startChild(sup, 'm3'))).code).toBe('max_children');
    expect(await countChildren(sup)).toEqual({ specs: 1, active: 2, supervisors: 0, workers: 2 });
    void stop(sup, 'shutdown');
    await waitDead(sup);
  });

  it('a start that fails (name taken) rejects with failed_to_start_child and the registry error as reason', async () => {
    const sup = await startDynamicSupervisor({ child: { start: conversation([]) } });
    const pid = await startChild(sup, 'dup');
    const error = await supervisorError(startChild(sup, 'dup'));
    expect(error.code).toBe('failed_to_start_child');
    expect(error.reason).toMatchObject({ code: 'already_registered', pid });
    void stop(sup, 'shutdown');
    await waitDead(sup);
  });

  it('stops its children in parallel at shutdown', async () => {
    const log: string[] = [];
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const slowStop = (id: string) =>
      spawn(
        genServer<object>({
          init: () => ({}),
          terminate: async () => {
            log.push(`begin ${id}`);
            if (log.filter((l) => l.startsWith('begin')).length === 3) open();
            await gate; // only opens once every child has begun stopping
            log.push(`end ${id}`);
          },
        }),
        { trapExit: true },
      );
    const sup = await startDynamicSupervisor({ child: { start: slowStop, shutdown: 2000 } });
    for (const id of ['p1', 'p2', 'p3']) await startChild(sup, id);
    const supExit = exitOf(sup);
    void stop(sup, 'shutdown');
    expect(await supExit).toBe('shutdown');
    expect(log.slice(0, 3).sort()).toEqual(['begin p1', 'begin p2', 'begin p3']);
    expect(log.filter((l) => l.startsWith('end'))).toHaveLength(3);
  });
});
