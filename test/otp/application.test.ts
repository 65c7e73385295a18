import { spawn as spawnChild } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { assign, setup } from 'xstate';
import {
  cast,
  exit,
  genServer,
  spawn,
  startApplication,
  startDynamicSupervisor,
  startChild,
  TERMINATE,
  call,
  type Pid,
  type ProcessTraceEvent,
  type TreeEvent,
} from '../../src/otp/index.ts';
import { fakeClock, waitFor, worker } from '../support/otp-fixtures.ts';

const toggle = setup({}).createMachine({
  initial: 'off',
  states: { off: { on: { flip: 'on', [TERMINATE]: 'done' } }, on: { on: { flip: 'off', [TERMINATE]: 'done' } }, done: { type: 'final' } },
});

describe('application', () => {
  it('inspect returns the live tree: ids, pids, types, statuses, machine states, restarts, mailbox depth', async () => {
    const log: string[] = [];
    let release!: () => void;
    const busy = () =>
      spawn(
        genServer<object>({
          init: () => ({}),
          handleCast: (m) => (m.type === 'block' ? new Promise<void>((r) => (release = r)) : undefined),
        }),
      );
    const app = await startApplication(
      {
        intensity: 5,
        children: [
          { id: 'switch', start: () => spawn(toggle, { name: 'app-switch' }) },
          { id: 'busy', start: busy },
          { id: 'convs', type: 'supervisor', start: () => startDynamicSupervisor({ child: { start: worker(log, 'conv') } }) },
          { id: 'later', start: () => 'ignore' },
        ],
      },
      { clock: fakeClock() },
    );
    const root = app.inspect();
    const byId = (id: string) => root.children.find((c) => c.id === id)!;
    cast('app-switch', { type: 'flip' });
    const busyPid = byId('busy').pid as Pid;
    cast(busyPid, { type: 'block' });
    cast(busyPid, { type: 'x' });
    cast(busyPid, { type: 'y' });
    await startChild(byId('convs').pid as Pid);

    const tree = app.inspect();
    const node = (id: string) => tree.children.find((c) => c.id === id)!;
    expect(tree).toMatchObject({ id: undefined, pid: app.root, type: 'supervisor', status: 'running' });
    expect(tree.children.map((c) => c.id)).toEqual(['switch', 'busy', 'convs', 'later']);
    expect(node('switch')).toMatchObject({ name: 'app-switch', type: 'worker', status: 'running', state: 'on', restarts: 0 });
    expect(node('busy').mailboxDepth).toBe(2);
    expect(node('convs')).toMatchObject({ type: 'supervisor', status: 'running' });
    expect(node('convs').children).toHaveLength(1);
    expect(node('later')).toMatchObject({ pid: undefined, status: 'undefined' });

    exit(node('switch').pid as Pid, 'kill');
    await waitFor(() => app.inspect().children.find((c) => c.id === 'switch')?.restarts === 1, 'the restart count');
    expect(app.inspect().children.find((c) => c.id === 'switch')?.state).toBe('off');
    release();
    await app.stop();
  });

  it('events report exits and restarts of this tree', async () => {
    const log: string[] = [];
    const app = await startApplication({ intensity: 5, children: [{ id: 'w', start: worker(log, 'w') }] }, { clock: fakeClock() });
    const events: TreeEvent[] = [];
    app.events.subscribe((e) => events.push(e));
    const first = app.inspect().children[0]?.pid as Pid;
    cast(first, { type: 'crash' });
    await waitFor(() => events.some((e) => e.type === 'restart'), 'the restart event');
    const second = app.inspect().children[0]?.pid as Pid;
    expect(events.map((e) => e.type)).toEqual(['exit', 'start', 'restart']);
    expect(events[0]).toMatchObject({ type: 'exit', supervisor: app.root, id: 'w', pid: first });
    expect(events[1]).toMatchObject({ type: 'start', id: 'w', pid: second, childType: 'worker' });
    expect(events[2]).toMatchObject({ type: 'restart', id: 'w', pid: second, previous: first, restarts: 1 });
    await app.stop();
  });

  it('events of another tree are not reported', async () => {
    const mine = await startApplication({ children: [{ id: 'w', start: worker([], 'w') }] });
    const other = await startApplication({ intensity: 5, children: [{ id: 'x', start: worker([], 'x') }] });
    const seen: TreeEvent[] = [];
    mine.events.subscribe((e) => seen.push(e));
    cast(other.inspect().children[0]?.pid as Pid, { type: 'crash' });
    await waitFor(() => other.inspect().children[0]?.restarts === 1, 'the other tree to restart');
    expect(seen).toEqual([]);
    await mine.stop();
    await other.stop();
  });

  it('trace follows messages and machine states through xstate inspection, including restarted processes', async () => {
    const log: string[] = [];
    const app = await startApplication(
      {
        intensity: 5,
        children: [
          { id: 'switch', start: () => spawn(toggle, { name: 'trace-switch' }) },
          { id: 'w', start: worker(log, 'w') },
        ],
      },
      { clock: fakeClock() },
    );
    const seen: ProcessTraceEvent[] = [];
    const stopTracing = app.trace((e) => seen.push(e));
    const switchPid = app.inspect().children[0]?.pid as Pid;
    cast('trace-switch', { type: 'flip' });
    expect(seen).toEqual([
      { type: 'received', pid: switchPid, message: 'flip' },
      { type: 'state', pid: switchPid, state: 'on' },
    ]);
    exit(switchPid, 'kill');
    await waitFor(() => app.inspect().children[0]?.restarts === 1, 'the restart');
    const newPid = app.inspect().children[0]?.pid as Pid;
    seen.length = 0;
    cast('trace-switch', { type: 'flip' });
    await expect(call(app.inspect().children[1]?.pid as Pid, { type: 'ping' })).resolves.toBe('pong');
    expect(seen).toEqual([
      { type: 'received', pid: newPid, message: 'flip' },
      { type: 'state', pid: newPid, state: 'on' },
      { type: 'received', pid: app.inspect().children[1]?.pid, message: 'ping' },
    ]);
    stopTracing();
    seen.length = 0;
    cast('trace-switch', { type: 'flip' });
    expect(seen).toEqual([]);
    await app.stop();
  });

  it('a root that runs out of restarts reports escalate then fatal, and onFatal fires', async () => {
    const app = await startApplication({ intensity: 0, children: [{ id: 'w', start: worker([], 'w') }] });
    const fatal: unknown[] = [];
    app.onFatal((reason) => fatal.push(reason));
    const events: TreeEvent[] = [];
    const iterated = (async () => {
      for await (const e of app.events) events.push(e);
    })();
    cast(app.inspect().children[0]?.pid as Pid, { type: 'crash' });
    expect(await app.exited).toBe('shutdown');
    await iterated; // the stream ends with the tree
    expect(events.map((e) => e.type)).toEqual(['exit', 'escalate', 'fatal']);
    expect(fatal).toEqual(['shutdown']);
  });

  it('stop shuts the tree down without a fatal event', async () => {
    const log: string[] = [];
    const app = await startApplication({ children: ['a', 'b'].map((id) => ({ id, start: worker(log, id) })) });
    const events: TreeEvent[] = [];
    app.events.subscribe((e) => events.push(e));
    await app.stop();
    expect(await app.exited).toBe('shutdown');
    expect(log).toEqual(['start a', 'start b', 'stop b shutdown', 'stop a shutdown']);
    expect(events.map((e) => e.type)).toEqual(['exit', 'exit']);
    expect(app.inspect()).toMatchObject({ pid: undefined, status: 'undefined', children: [] });
  });
});

describe('shutdown on signals', () => {
  const program = fileURLToPath(new URL('../programs/app-main.ts', import.meta.url));
  const tsx = fileURLToPath(new URL('../../node_modules/.bin/tsx', import.meta.url));

  async function run(env: Record<string, string>) {
    const child = spawnChild(tsx, [program], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    const output = { text: '' };
    child.stdout.on('data', (d: Buffer) => (output.text += d.toString()));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    await waitFor(() => output.text.includes('ready'), 'the program to start', 15_000);
    return { child, output, exited };
  }

  it('SIGTERM stops the tree in reverse order, then exits 0', async () => {
    const { child, output, exited } = await run({});
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(output.text.trim().split('\n')).toEqual([
      'ready',
      'stopping c',
      'stop c shutdown',
      'stopping b',
      'stop b shutdown',
      'stopping a',
      'stop a shutdown',
      'exit 0',
    ]);
  }, 30_000);

  it('a second signal exits at once with 130 while the tree is still stopping', async () => {
    const { child, output, exited } = await run({ HANG_ON_STOP: '1' });
    child.kill('SIGTERM');
    await waitFor(() => output.text.includes('stopping c'), 'the stop to begin');
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(output.text).not.toContain('stop c shutdown');
    expect(output.text.trim().endsWith('exit 130')).toBe(true);
  }, 30_000);
});
