import { describe, expect, it } from 'vitest';
import { setup } from 'xstate';
import {
  call,
  cast,
  exit,
  HIBERNATE,
  link,
  monitor,
  processInfo,
  selfPid,
  spawn,
  spawnHibernated,
  stop,
  TERMINATE,
  traceProcess,
  unlink,
  type CallEvent,
  type Down,
  type Pid,
  type TerminateEvent,
} from '../../src/otp/index.ts';
import { resolve } from '../../src/otp/process.ts';
import { whereis } from '../../src/otp/index.ts';

/** Whether the shell holds an xstate actor for `pid` right now. */
const awake = (pid: Pid) => resolve(pid)?.actor !== undefined;
const downOf = (pid: Pid) => new Promise<Down>((r) => monitor(pid, r));

type Event = { type: 'bump' } | { type: 'work' } | { type: 'done' } | CallEvent<{ type: 'count' }, number> | TerminateEvent;

/** Counts bumps in a mutable context; rests (HIBERNATE) in `resting`, is busy in `working`. */
function counter(log: string[] = []) {
  return setup({ types: {} as { context: { n: number; self: Pid | undefined }; events: Event } }).createMachine({
    context: () => ({ n: 0, self: selfPid() }),
    entry: () => log.push('entry'),
    initial: 'resting',
    on: {
      bump: { actions: ({ context }) => void context.n++ },
      count: { actions: ({ context, event }) => event.from.reply(context.n) },
    },
    states: {
      resting: { tags: [HIBERNATE], on: { work: 'working', [TERMINATE]: 'stopped' } },
      working: { on: { done: 'resting' } },
      stopped: { type: 'final' },
    },
  });
}

describe('hibernation (erlang:hibernate)', () => {
  it('a machine resting in a HIBERNATE state holds no xstate actor between messages', () => {
    const pid = spawn(counter());
    expect(awake(pid)).toBe(false);
    cast(pid, { type: 'bump' });
    expect(awake(pid)).toBe(false);
    exit(pid, 'kill');
  });

  it('wakes for the next message with its context as it was, and does not run its entry again', async () => {
    const log: string[] = [];
    const pid = spawn(counter(log));
    cast(pid, { type: 'bump' });
    cast(pid, { type: 'bump' });
    expect(await call(pid, { type: 'count' })).toBe(2);
    expect(log).toEqual(['entry']);
    exit(pid, 'kill');
  });

  it('stays awake in a state without the tag, and hibernates again when it returns to one', () => {
    const pid = spawn(counter());
    cast(pid, { type: 'work' });
    expect(awake(pid)).toBe(true);
    expect(processInfo(pid)?.state).toBe('working');
    cast(pid, { type: 'done' });
    expect(awake(pid)).toBe(false);
    exit(pid, 'kill');
  });

  it('is inspected without being woken: state and mailbox depth come from the kept state', () => {
    const pid = spawn(counter(), { mailboxDepth: (s) => (s as { context: { n: number } }).context.n });
    cast(pid, { type: 'bump' });
    expect(processInfo(pid)).toMatchObject({ state: 'resting', mailboxDepth: 1 });
    expect(awake(pid)).toBe(false);
    exit(pid, 'kill');
  });

  it('runs its initialisation as the new process: selfPid() in the context function is its pid', async () => {
    const pid = spawn(counter());
    const { context } = resolve(pid)!.snapshot() as { context: { self: Pid } };
    expect(context.self).toBe(pid);
    exit(pid, 'kill');
  });

  it('winds down on a graceful stop from hibernation, and is killed like any process', async () => {
    const graceful = spawn(counter(), { trapExit: true });
    await stop(graceful, 'shutdown');
    expect(processInfo(graceful)).toBeUndefined();
    const killed = spawn(counter());
    const down = downOf(killed);
    exit(killed, 'kill');
    expect((await down).reason).toBe('killed');
  });

  it('stays awake while traced, and hibernates again when the trace stops', () => {
    const pid = spawn(counter());
    const seen: string[] = [];
    const stopTrace = traceProcess(pid, (e) => seen.push(e.type));
    cast(pid, { type: 'bump' });
    expect(awake(pid)).toBe(true);
    expect(seen).toContain('received');
    stopTrace!();
    expect(awake(pid)).toBe(false);
    exit(pid, 'kill');
  });
});

describe('spawnHibernated (init returning {ok, State, hibernate})', () => {
  it('starts with no xstate actor, its init run as the new process, and no entry action', () => {
    const log: string[] = [];
    let inInit: Pid | undefined;
    const pid = spawnHibernated(counter(log), () => {
      inInit = selfPid();
      return { value: 'resting' as const, context: { n: 5, self: selfPid() } };
    }, { name: 'born-resting' });
    expect(inInit).toBe(pid);
    expect(whereis('born-resting')).toBe(pid);
    expect(awake(pid)).toBe(false);
    expect(processInfo(pid)).toMatchObject({ state: 'resting' });
    expect(log).toEqual([]);
    exit(pid, 'kill');
  });

  it('wakes for its first message with the context its init gave, and rests again after it', async () => {
    const log: string[] = [];
    const pid = spawnHibernated(counter(log), () => ({ value: 'resting' as const, context: { n: 5, self: selfPid() } }));
    cast(pid, { type: 'bump' });
    expect(awake(pid)).toBe(false);
    expect(await call(pid, { type: 'count' })).toBe(6);
    cast(pid, { type: 'work' });
    expect(processInfo(pid)?.state).toBe('working');
    expect(log).toEqual([]);
    exit(pid, 'kill');
  });

  it('stops like a spawned machine: TERMINATE from a supervisor-style stop reaches its state', async () => {
    const pid = spawnHibernated(counter(), () => ({ value: 'resting' as const, context: { n: 0, self: selfPid() } }), { trapExit: true });
    const down = downOf(pid);
    await stop(pid, 'shutdown');
    expect((await down).reason).toBe('shutdown');
  });

  it('an init that throws ends the process crashed, its name released and its links signalled', async () => {
    const partner = spawn(counter());
    const partnerDown = downOf(partner);
    const boom = new Error('no state');
    const pid = spawnHibernated(counter(), () => {
      throw boom;
    }, { name: 'born-broken', link: partner });
    expect(resolve(pid)).toBeUndefined();
    expect(whereis('born-broken')).toBeUndefined();
    expect((await partnerDown).reason).toEqual({ crashed: boom });
  });
});

describe('links and monitors of one and of many', () => {
  it('fires every monitor and signals every link, whether a process has one or several', async () => {
    const target = spawn(counter());
    const downs = [downOf(target), downOf(target), downOf(target)];
    const partners = [spawn(counter()), spawn(counter())];
    for (const p of partners) link(target, p);
    expect(processInfo(target)).toMatchObject({ monitors: 3, links: partners });
    unlink(target, partners[1]!);
    expect(processInfo(target)?.links).toEqual([partners[0]]);
    const partnerDowns = partners.map(downOf);
    exit(target, 'shutdown');
    expect((await Promise.all(downs)).map((d) => d.reason)).toEqual(['shutdown', 'shutdown', 'shutdown']);
    expect((await partnerDowns[0]!).reason).toBe('shutdown'); // linked: the exit signal took it down
    expect(processInfo(partners[1]!)?.state).toBe('resting'); // unlinked: untouched
    exit(partners[1]!, 'kill');
  });
});
