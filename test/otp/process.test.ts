import { describe, expect, it } from 'vitest';
import { assign, fromPromise, setup } from 'xstate';
import {
  call,
  cast,
  demonitor,
  exit,
  EXIT,
  genServer,
  isAlive,
  link,
  monitor,
  processInfo,
  spawn,
  start,
  stop,
  TERMINATE,
  type Down,
  type ExitMessage,
  type ExitReason,
  type Pid,
} from '../../src/otp/index.ts';
import { shell, waitFor } from '../support/otp-fixtures.ts';

function downOf(pid: Pid | string): Promise<Down> {
  return new Promise((resolve) => monitor(pid, resolve));
}

const idle = genServer<object>({ init: () => ({}), handleCast: () => {} });

describe('exit reasons and graceful stop', () => {
  it("a graceful shutdown (the parent's exit signal) lets the in-flight handler finish, then runs terminate", async () => {
    const log: string[] = [];
    const parent = shell();
    const pid = spawn(
      genServer<object>({
        init: () => ({}),
        handleCast: async () => {
          log.push('work begins');
          await new Promise((r) => setTimeout(r, 5));
          log.push('work ends');
        },
        terminate: (reason) => void log.push(`terminate ${String(reason)}`),
      }),
      { trapExit: true, link: parent.pid },
    );
    cast(pid, { type: 'work' });
    const down = downOf(pid);
    parent.exit(pid, 'shutdown');
    expect((await down).reason).toBe('shutdown');
    expect(log).toEqual(['work begins', 'work ends', 'terminate shutdown']);
  });

  it('kill stops at once without running terminate and exits with killed', async () => {
    const log: string[] = [];
    const pid = spawn(genServer<object>({ init: () => ({}), terminate: () => void log.push('terminate') }));
    const down = downOf(pid);
    exit(pid, 'kill');
    expect((await down).reason).toBe('killed');
    expect(log).toEqual([]);
  });

  it('a crash in a gen server runs terminate with the crash, then exits crashed', async () => {
    const reasons: ExitReason[] = [];
    const pid = spawn(
      genServer<object>({
        init: () => ({}),
        handleCast: () => {
          throw new Error('bad cast');
        },
        terminate: (reason) => void reasons.push(reason),
      }),
    );
    const down = downOf(pid);
    cast(pid, { type: 'x' });
    const { reason } = await down;
    expect((reason as { crashed: Error }).crashed.message).toBe('bad cast');
    expect(reasons).toEqual([reason]);
  });

  it('a machine that handles TERMINATE winds down to a final state and exits with the requested reason', async () => {
    const log: string[] = [];
    const machine = setup({
      actors: { flush: fromPromise(async () => void log.push('flushed')) },
    }).createMachine({
      initial: 'ready',
      states: {
        ready: { on: { [TERMINATE]: 'closing' } },
        closing: { invoke: { src: 'flush', onDone: 'closed' } },
        closed: { type: 'final' },
      },
    });
    const parent = shell();
    const pid = spawn(machine, { trapExit: true, link: parent.pid });
    const down = downOf(pid);
    parent.exit(pid, { shutdown: 'maintenance' });
    expect(processInfo(pid)?.status).toBe('exiting');
    expect((await down).reason).toEqual({ shutdown: 'maintenance' });
    expect(log).toEqual(['flushed']);
  });

  it('a machine without a TERMINATE transition exits at once with the reason', async () => {
    const pid = spawn(setup({}).createMachine({}));
    const down = downOf(pid);
    exit(pid, 'shutdown');
    expect(isAlive(pid)).toBe(false);
    expect((await down).reason).toBe('shutdown');
  });

  it('a machine that reaches a final state on its own exits normal', async () => {
    const machine = setup({}).createMachine({ initial: 'a', states: { a: { on: { done: 'b' } }, b: { type: 'final' } } });
    const pid = spawn(machine);
    const down = downOf(pid);
    cast(pid, { type: 'done' });
    expect((await down).reason).toBe('normal');
  });

  it('start waits for an async init; a failing init rejects start with crashed', async () => {
    const pid = await start(
      genServer<{ ready: boolean }>({
        init: async () => {
          await new Promise((r) => setTimeout(r, 2));
          return { ready: true };
        },
        handleCall: (_r, _f, state) => state.ready,
      }),
    );
    await expect(call(pid, { type: 'ready?' })).resolves.toBe(true);
    exit(pid, 'kill');

    const failure = start(
      genServer({
        init: async () => {
          throw new Error('no config');
        },
      }),
    );
    await expect(failure).rejects.toMatchObject({ code: 'crashed' });
  });

  it('stop resolves once the process exited with the reason; noproc for a dead one', async () => {
    const pid = spawn(idle);
    await stop(pid, 'shutdown');
    expect(isAlive(pid)).toBe(false);
    await expect(stop(pid)).rejects.toMatchObject({ code: 'noproc' });
  });
});

describe('monitors', () => {
  it('DOWN carries the exit reason', async () => {
    const pid = spawn(idle);
    const down = downOf(pid);
    exit(pid, { shutdown: 'bye' });
    expect(await down).toMatchObject({ pid, target: pid, reason: { shutdown: 'bye' } });
  });

  it('monitoring a dead process fires DOWN with noproc on the next microtask, not synchronously', async () => {
    const pid = spawn(idle);
    exit(pid, 'kill');
    let fired: Down | undefined;
    monitor(pid, (d) => (fired = d));
    expect(fired).toBeUndefined();
    await Promise.resolve();
    expect(fired?.reason).toBe('noproc');
  });

  it('monitoring an unregistered name fires DOWN with noproc', async () => {
    const down = await downOf('otp-test-not-registered');
    expect(down).toMatchObject({ target: 'otp-test-not-registered', pid: undefined, reason: 'noproc' });
  });

  it('monitors stack, and a demonitored one never fires', async () => {
    const pid = spawn(idle);
    const fired: string[] = [];
    monitor(pid, () => fired.push('first'));
    const second = monitor(pid, () => fired.push('second'));
    monitor(pid, () => fired.push('third'));
    expect(demonitor(second)).toBe(true);
    const last = downOf(pid);
    exit(pid, 'kill');
    await last;
    expect(fired).toEqual(['first', 'third']);
  });
});

describe('links', () => {
  it('a crash kills a linked process that does not trap exits, with the same reason', async () => {
    const a = spawn(genServer<object>({ init: () => ({}), handleCast: () => { throw new Error('a died'); } }));
    const b = spawn(idle);
    link(a, b);
    const downB = downOf(b);
    cast(a, { type: 'crash' });
    expect(((await downB).reason as { crashed: Error }).crashed.message).toBe('a died');
  });

  it('a normal exit does not kill a linked process', async () => {
    const a = spawn(setup({}).createMachine({ initial: 'x', states: { x: { on: { end: 'y' } }, y: { type: 'final' } } }));
    const b = spawn(idle);
    link(a, b);
    const downA = downOf(a);
    cast(a, { type: 'end' });
    await downA;
    await new Promise((r) => setTimeout(r, 1));
    expect(isAlive(b)).toBe(true);
    exit(b, 'kill');
  });

  it('a process that traps exits receives the linked exit as a message', async () => {
    const received: ExitMessage[] = [];
    const trapper = spawn(
      genServer<object>({ init: () => ({}), handleInfo: (m) => void (m.type === EXIT && received.push(m as ExitMessage)) }),
      { trapExit: true },
    );
    const other = spawn(idle, { link: trapper });
    exit(other, 'kill');
    await waitFor(() => received.length === 1, 'the EXIT message');
    expect(received[0]).toMatchObject({ type: EXIT, from: other, reason: 'killed' });
    expect(isAlive(trapper)).toBe(true);
    exit(trapper, 'kill');
  });
});

describe('mailbox depth', () => {
  it('counts messages queued behind a busy gen server', async () => {
    let release!: () => void;
    const pid = spawn(
      genServer<object>({
        init: () => ({}),
        handleCast: (m) => (m.type === 'block' ? new Promise<void>((r) => (release = r)) : undefined),
      }),
    );
    cast(pid, { type: 'block' });
    cast(pid, { type: 'a' });
    cast(pid, { type: 'b' });
    cast(pid, { type: 'c' });
    expect(processInfo(pid)?.mailboxDepth).toBe(3);
    release();
    await waitFor(() => processInfo(pid)?.mailboxDepth === 0, 'the queue to drain');
    exit(pid, 'kill');
  });

  it('a machine reports its own backlog through the mailboxDepth option', () => {
    const machine = setup({ types: {} as { context: { queued: number } } }).createMachine({
      context: { queued: 0 },
      on: { enqueue: { actions: assign({ queued: ({ context }) => context.queued + 1 }) } },
    });
    const pid = spawn(machine, { mailboxDepth: (s) => (s as { context: { queued: number } }).context.queued });
    cast(pid, { type: 'enqueue' });
    cast(pid, { type: 'enqueue' });
    expect(processInfo(pid)?.mailboxDepth).toBe(2);
    exit(pid, 'kill');
  });
});

describe('pids', () => {
  it('are unique and print like Erlang pids', () => {
    const a = spawn(idle);
    const b = spawn(idle);
    expect(a).not.toBe(b);
    expect(a.id).not.toBe(b.id);
    expect(String(a)).toMatch(/^<0\.\d+\.0>$/);
    exit(a, 'kill');
    exit(b, 'kill');
  });
});
