/**
 * supervisor_SUITE: the supervisor behaviours added to match OTP exactly: idempotent
 * terminate_child on a dynamic supervisor, start timeouts, significant children and
 * auto_shutdown (OTP 24). Each test quotes the OTP rule it follows.
 */
import { describe, expect, it } from 'vitest';
import {
  cast,
  exit,
  genServer,
  isAlive,
  monitor,
  spawn,
  start,
  startChild,
  startDynamicSupervisor,
  startSupervisor,
  stop,
  terminateChild,
  whichChildren,
  type ChildSpec,
  type ExitReason,
  type Pid,
  type RestartType,
  type ServerSelf,
  type SupervisorError,
} from '../../src/otp/index.ts';
import { waitDead, waitFor } from '../support/otp-fixtures.ts';

function exitOf(pid: Pid): Promise<ExitReason> {
  return new Promise((resolve) => monitor(pid, (down) => resolve(down.reason)));
}

async function supervisorError(promise: Promise<unknown>): Promise<SupervisorError> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: SupervisorError) => error,
  );
}

/** A worker that stops itself on `{ type: 'stop' }` (normal) and crashes on `{ type: 'crash' }`. */
function stoppable(log: string[], id: string) {
  return () =>
    spawn(
      genServer<{ self: ServerSelf }>({
        init: (_input, self) => {
          log.push(`start ${id}`);
          return { self };
        },
        handleCast: (m, state) => {
          if (m.type === 'crash') throw new Error(`boom ${id}`);
          state.self.stop('normal');
        },
      }),
    );
}

function significant(log: string[], id: string, restart: RestartType): ChildSpec {
  return { id, start: stoppable(log, id), restart, significant: true };
}

async function pidOf(sup: Pid, id: string): Promise<Pid> {
  const child = (await whichChildren(sup)).find((c) => c.id === id);
  if (!(child?.pid !== undefined && child.pid !== 'restarting')) throw new Error(`no running child ${id}`);
  return child.pid;
}

const hangingInit = genServer<object>({ init: () => new Promise<object>(() => {}) });

describe('supervisor_SUITE: terminate_child', () => {
  it('terminateChild on a dynamic supervisor with a pid that already exited is ok', async () => {
    // supervisor.erl find_child/2 (simple_one_for_one): "case erlang:is_process_alive(Pid) of ... false -> {ok, ...}".
    const log: string[] = [];
    const sup = await startDynamicSupervisor({ child: { start: stoppable(log, 'c'), restart: 'temporary' } });
    const pid = (await startChild(sup)) as Pid;
    cast(pid, { type: 'stop' });
    await waitDead(pid);
    await expect(terminateChild(sup, pid)).resolves.toBeUndefined();
    await stop(sup, 'shutdown');
  });
});

describe('supervisor_SUITE: start timeouts', () => {
  it('a child whose init hangs past its start timeout fails the supervisor start with failed_to_start_child', async () => {
    // proc_lib:start: a start that times out is killed and returns {error, timeout}; supervisor: {shutdown, {failed_to_start_child, Id, timeout}}.
    const error = await supervisorError(
      startSupervisor({ children: [{ id: 'stuck', start: () => start(hangingInit, { timeoutMs: 20 }) }] }),
    );
    expect(error.code).toBe('failed_to_start_child');
    expect(error.details.childId).toBe('stuck');
    expect(error.reason).toMatchObject({ code: 'timeout' });
  });

  it('a child spec startTimeoutMs bounds any start function, and a process it hands back late is killed', async () => {
    let release!: (pid: Pid) => void;
    let late: Pid | undefined;
    const error = await supervisorError(
      startSupervisor({
        children: [{ id: 'slow', startTimeoutMs: 20, start: () => new Promise<Pid>((r) => (release = r)) }],
      }),
    );
    expect(error.code).toBe('failed_to_start_child');
    expect(error.reason).toMatchObject({ code: 'timeout' });
    late = spawn(genServer<object>({ init: () => ({}) }));
    release(late);
    await waitDead(late);
  });
});

describe('supervisor_SUITE: significant children and auto_shutdown', () => {
  it('refuses a significant permanent child and a significant child under autoShutdown never', async () => {
    // supervisor docs: "significant ... must not be true for permanent children"; with auto_shutdown never, significant children "will be rejected".
    const log: string[] = [];
    const permanent = await supervisorError(
      startSupervisor({ autoShutdown: 'any_significant', children: [{ ...significant(log, 'p', 'transient'), restart: 'permanent' }] }),
    );
    expect(permanent).toMatchObject({ code: 'invalid_child_spec', details: { field: 'significant' } });
    const never = await supervisorError(startSupervisor({ children: [significant(log, 't', 'transient')] }));
    expect(never).toMatchObject({ code: 'invalid_child_spec', details: { field: 'significant' } });
    expect(log).toEqual([]);
  });

  it('any_significant: a significant transient child that exits normally ends the supervisor with shutdown', async () => {
    // supervisor docs: any_significant: "automatically shut itself down ... when any significant child terminates".
    const log: string[] = [];
    const sup = await startSupervisor({
      autoShutdown: 'any_significant',
      children: [{ id: 'bystander', start: stoppable(log, 'bystander') }, significant(log, 'main', 'transient')],
    });
    const bystander = await pidOf(sup, 'bystander');
    const supExit = exitOf(sup);
    cast(await pidOf(sup, 'main'), { type: 'stop' });
    expect(await supExit).toBe('shutdown');
    expect(isAlive(bystander)).toBe(false);
  });

  it('any_significant: a significant transient child that crashes is restarted, not a shutdown', async () => {
    // supervisor docs: a transient child is significant only when it "terminates normally" (an abnormal exit is restarted).
    const log: string[] = [];
    const sup = await startSupervisor({ autoShutdown: 'any_significant', intensity: 3, children: [significant(log, 'main', 'transient')] });
    cast(await pidOf(sup, 'main'), { type: 'crash' });
    await waitFor(() => log.length === 2, 'the restart');
    expect(log).toEqual(['start main', 'start main']);
    expect(isAlive(sup)).toBe(true);
    await stop(sup, 'shutdown');
  });

  it('all_significant: the supervisor ends only when its last significant child has ended', async () => {
    // supervisor docs: all_significant: shut down "when all significant children have terminated".
    const log: string[] = [];
    const sup = await startSupervisor({
      autoShutdown: 'all_significant',
      children: [significant(log, 'a', 'temporary'), significant(log, 'b', 'temporary')],
    });
    const a = await pidOf(sup, 'a');
    const b = await pidOf(sup, 'b');
    cast(a, { type: 'stop' });
    await waitDead(a);
    expect((await whichChildren(sup)).map((c) => c.id)).toEqual(['b']);
    const supExit = exitOf(sup);
    cast(b, { type: 'stop' });
    expect(await supExit).toBe('shutdown');
  });

  it('terminateChild of a significant child does not end the supervisor', async () => {
    // supervisor docs: auto_shutdown is triggered by a significant child's own exit, not when "the supervisor itself" terminates it.
    const log: string[] = [];
    const sup = await startSupervisor({ autoShutdown: 'any_significant', children: [significant(log, 'main', 'transient')] });
    await terminateChild(sup, 'main');
    expect(isAlive(sup)).toBe(true);
    await stop(sup, 'shutdown');
  });

  it('all_significant on a dynamic supervisor: it ends when its last child ended by itself', async () => {
    const log: string[] = [];
    const sup = await startDynamicSupervisor({
      autoShutdown: 'all_significant',
      child: { start: stoppable(log, 'd'), restart: 'temporary', significant: true },
    });
    const first = (await startChild(sup)) as Pid;
    const second = (await startChild(sup)) as Pid;
    cast(first, { type: 'stop' });
    await waitDead(first);
    await expect(whichChildren(sup)).resolves.toHaveLength(1);
    const supExit = exitOf(sup);
    cast(second, { type: 'stop' });
    expect(await supExit).toBe('shutdown');
  });

  it('an exit signal to a supervisor from a process that is not its parent does not stop it', async () => {
    // gen_server: only "{'EXIT', Parent, Reason}" terminates the server; a supervisor traps exits.
    const sup = await startSupervisor({ children: [] });
    const stranger = spawn(genServer<object>({ init: () => ({}), handleCast: () => exit(sup, 'shutdown') }));
    cast(stranger, { type: 'go' });
    await expect(whichChildren(sup)).resolves.toEqual([]);
    expect(isAlive(sup)).toBe(true);
    await stop(sup, 'shutdown');
    exit(stranger, 'kill');
  });
});
