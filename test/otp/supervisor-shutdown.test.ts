import { describe, expect, it, vi } from 'vitest';
import {
  exit,
  stop,
  genServer,
  isAlive,
  monitor,
  spawn,
  startSupervisor,
  SupervisorError,
  whichChildren,
  type ExitReason,
  type Pid,
  type ShutdownSpec,
} from '../../src/otp/index.ts';
import { tick, waitDead, waitFor, worker } from '../support/otp-fixtures.ts';

function exitOf(pid: Pid): Promise<ExitReason> {
  return new Promise((resolve) => monitor(pid, (d) => resolve(d.reason)));
}

async function onlyChild(sup: Pid): Promise<Pid> {
  return (await whichChildren(sup))[0]?.pid as Pid;
}

describe('supervisor shutdown', () => {
  it('stops children in reverse start order', async () => {
    const log: string[] = [];
    const sup = await startSupervisor({
      children: ['a', 'b', 'c'].map((id) => ({ id, start: worker(log, id) })),
    });
    const supExit = exitOf(sup);
    void stop(sup, 'shutdown');
    expect(await supExit).toBe('shutdown');
    expect(log).toEqual(['start a', 'start b', 'start c', 'stop c shutdown', 'stop b shutdown', 'stop a shutdown']);
  });

  it('brutal_kill kills the child without running its terminate', async () => {
    const log: string[] = [];
    const sup = await startSupervisor({ children: [{ id: 'w', start: worker(log, 'w'), shutdown: 'brutal_kill' }] });
    const childExit = exitOf(await onlyChild(sup));
    void stop(sup, 'shutdown');
    expect(await childExit).toBe('killed');
    expect(log).toEqual(['start w']);
  });

  it('a child that ignores shutdown is killed after its shutdown timeout', async () => {
    const log: string[] = [];
    const sup = await startSupervisor({ children: [{ id: 'w', start: worker(log, 'w', { hangOnShutdown: true }), shutdown: 20 }] });
    const childExit = exitOf(await onlyChild(sup));
    const supExit = exitOf(sup);
    void stop(sup, 'shutdown');
    expect(await childExit).toBe('killed');
    expect(await supExit).toBe('shutdown');
    expect(log).toEqual(['start w', 'stop w shutdown']);
  });

  it('a child that stops within its shutdown timeout exits with shutdown', async () => {
    const log: string[] = [];
    const sup = await startSupervisor({ children: [{ id: 'w', start: worker(log, 'w'), shutdown: 5000 }] });
    const childExit = exitOf(await onlyChild(sup));
    void stop(sup, 'shutdown');
    expect(await childExit).toBe('shutdown');
  });

  it('infinity waits for the child however long its terminate takes', async () => {
    let release!: () => void;
    const slow = () =>
      spawn(genServer<object>({ init: () => ({}), terminate: () => new Promise<void>((r) => (release = r)) }), { trapExit: true });
    const sup = await startSupervisor({ children: [{ id: 'slow', start: slow, shutdown: 'infinity' }] });
    const child = await onlyChild(sup);
    const childExit = exitOf(child);
    void stop(sup, 'shutdown');
    await waitFor(() => release !== undefined, 'terminate to begin');
    for (let i = 0; i < 20; i++) await tick();
    expect(isAlive(child)).toBe(true);
    expect(isAlive(sup)).toBe(true);
    release();
    expect(await childExit).toBe('shutdown');
    await waitDead(sup);
  });

  it('a worker is killed after the default shutdown of 5000 ms', async () => {
    const log: string[] = [];
    const sup = await startSupervisor({ children: [{ id: 'w', start: worker(log, 'w', { hangOnShutdown: true }) }] });
    const child = await onlyChild(sup);
    const childExit = exitOf(child);
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      void stop(sup, 'shutdown');
      for (let i = 0; i < 5; i++) await tick();
      expect(log).toContain('stop w shutdown');
      vi.advanceTimersByTime(4999);
      for (let i = 0; i < 5; i++) await tick();
      expect(isAlive(child)).toBe(true);
      vi.advanceTimersByTime(1);
      expect(await childExit).toBe('killed');
    } finally {
      vi.useRealTimers();
    }
    await waitDead(sup);
  });

  it('a supervisor child is waited for by default (shutdown infinity)', async () => {
    let release!: () => void;
    const hanging = () =>
      spawn(genServer<object>({ init: () => ({}), terminate: () => new Promise<void>((r) => (release = r)) }), { trapExit: true });
    const root = await startSupervisor({
      children: [
        {
          id: 'inner',
          type: 'supervisor',
          start: () => startSupervisor({ children: [{ id: 'h', start: hanging, shutdown: 'infinity' }] }),
        },
      ],
    });
    const inner = await onlyChild(root);
    const innerExit = exitOf(inner);
    void stop(root, 'shutdown');
    await waitFor(() => release !== undefined, 'the inner child to begin stopping');
    for (let i = 0; i < 20; i++) await tick();
    expect(isAlive(inner)).toBe(true);
    release();
    expect(await innerExit).toBe('shutdown');
    await waitDead(root);
  });

  it('a supervisor that is killed takes its children down through their links', async () => {
    const log: string[] = [];
    const sup = await startSupervisor({ children: [{ id: 'w', start: worker(log, 'w') }] });
    const childExit = exitOf(await onlyChild(sup));
    exit(sup, 'kill');
    expect(await childExit).toBe('killed');
  });

  it('a child that fails to start at init stops the ones already started and rejects with failed_to_start_child', async () => {
    const log: string[] = [];
    const boom = () => true;
    const failure = startSupervisor({
      children: [
        { id: 'a', start: worker(log, 'a') },
        { id: 'b', start: worker(log, 'b') },
        { id: 'c', start: worker(log, 'c', { failStart: boom }) },
        { id: 'd', start: worker(log, 'd') },
      ],
    });
    const error = await failure.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(SupervisorError);
    expect(error).toMatchObject({ code: 'failed_to_start_child', details: { childId: 'c' } });
    expect(((error as SupervisorError).reason as Error).message).toBe('cannot start c');
    expect(log).toEqual(['start a', 'start b', 'start_failed c', 'stop b shutdown', 'stop a shutdown']);
  });
});
