/**
 * gen_server_SUITE: the process semantics Mnemo takes from erlang:exit/2, gen_server.erl,
 * proc_lib and erlang:send_after, one behaviour per test, each with the OTP rule it follows.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  call,
  cancelTimer,
  cast,
  exit,
  EXIT,
  genServer,
  isAlive,
  monitor,
  readTimer,
  sendAfter,
  spawn,
  start,
  startSupervisor,
  startTimer,
  stop,
  type Down,
  type ExitError,
  type ExitMessage,
  type Message,
  type Pid,
  type ServerSelf,
  type TimerMessage,
} from '../../src/otp/index.ts';
import { tick, waitFor } from '../support/otp-fixtures.ts';

function downOf(pid: Pid): Promise<Down> {
  return new Promise((resolve) => monitor(pid, resolve));
}

async function rejection(promise: Promise<unknown>): Promise<ExitError> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: ExitError) => error,
  );
}

/** A server that logs its infos and its terminate; started linked to `parent` if given. */
function logger(log: string[], trapExit: boolean, parent?: Pid): Pid {
  return spawn(
    genServer<object>({
      init: () => ({}),
      handleInfo: (message) => {
        const m = message as ExitMessage;
        log.push(m.type === EXIT ? `EXIT ${String(m.reason)} from ${m.from === undefined ? 'top' : 'process'}` : `info ${m.type}`);
      },
      terminate: (reason) => void log.push(`terminate ${String(reason)}`),
    }),
    { trapExit, ...(parent === undefined ? {} : { link: parent }) },
  );
}

/** A process that, asked with `{ type: 'exit', target, reason }`, sends that exit signal itself. */
function sender(): Pid {
  return spawn(
    genServer<object, void, Message, { type: 'exit'; target: Pid; reason: 'normal' | 'shutdown' }>({
      init: () => ({}),
      handleCast: (m) => exit(m.target, m.reason),
    }),
  );
}

afterEach(() => {
  vi.useRealTimers();
});

describe('gen_server_SUITE: exit signals', () => {
  it('a process that does not trap exits ignores normal and ends with any other reason, without terminate', async () => {
    // erlang:exit/2: "If Pid is not trapping exits, Pid itself exits with exit reason Reason" (normal is ignored).
    const log: string[] = [];
    const pid = logger(log, false);
    const other = sender();
    cast(other, { type: 'exit', target: pid, reason: 'normal' });
    await tick();
    expect(isAlive(pid)).toBe(true);
    const down = downOf(pid);
    cast(other, { type: 'exit', target: pid, reason: 'shutdown' });
    expect((await down).reason).toBe('shutdown');
    expect(log).toEqual([]);
    exit(other, 'kill');
  });

  it('kill ends even a trapping process, with reason killed', async () => {
    // erlang:exit/2: "If Reason is the atom kill ... Pid unconditionally exits with exit reason killed."
    const log: string[] = [];
    const pid = logger(log, true);
    const down = downOf(pid);
    exit(pid, 'kill');
    expect((await down).reason).toBe('killed');
    expect(log).toEqual([]);
  });

  it('a trapping server gets an exit signal from a process other than its parent in handleInfo, and carries on', async () => {
    // gen_server: "{'EXIT', Pid, Reason}" from anyone but the parent is an ordinary message for handle_info.
    const log: string[] = [];
    const pid = logger(log, true);
    const other = sender();
    cast(other, { type: 'exit', target: pid, reason: 'shutdown' });
    await waitFor(() => log.length === 1, 'the EXIT info');
    expect(log).toEqual(['EXIT shutdown from process']);
    expect(isAlive(pid)).toBe(true);
    exit(pid, 'kill');
    exit(other, 'kill');
  });

  it('a trapping server started without a link is its own parent: an exit signal from outside any process is an EXIT info', async () => {
    // gen.erl: started `nolink`, a gen_server's Parent is self(); {'EXIT', From, shutdown} from anyone else goes to handle_info.
    const log: string[] = [];
    const pid = logger(log, true);
    exit(pid, 'shutdown');
    await waitFor(() => log.length === 1, 'the EXIT info');
    expect(log).toEqual(['EXIT shutdown from top']);
    expect(isAlive(pid)).toBe(true);
    exit(pid, 'kill');
  });

  it('a server started by another process without a link takes that process\'s exit signal as an EXIT info too', async () => {
    const log: string[] = [];
    let child: Pid | undefined;
    const starter = spawn(
      genServer<object>({
        init: () => ({}),
        handleCast: (m) => {
          if (m.type === 'spawn') child = logger(log, true);
          else if (child !== undefined) exit(child, 'shutdown');
        },
      }),
    );
    cast(starter, { type: 'spawn' });
    cast(starter, { type: 'exit_child' });
    await waitFor(() => log.length === 1, 'the EXIT info');
    expect(log).toEqual(['EXIT shutdown from process']);
    exit(child!, 'kill');
    exit(starter, 'kill');
  });

  it('a server without a link that sends itself an exit signal stops: it is its own parent', async () => {
    const log: string[] = [];
    const pid: Pid = spawn(
      genServer<object>({
        init: () => ({}),
        handleCast: () => exit(pid, 'shutdown'),
        terminate: (reason) => void log.push(`terminate ${String(reason)}`),
      }),
      { trapExit: true },
    );
    const down = downOf(pid);
    cast(pid, { type: 'quit' });
    expect((await down).reason).toBe('shutdown');
    expect(log).toEqual(['terminate shutdown']);
  });

  it("a trapping server stops on its parent's exit signal: terminate runs, then it exits with the reason", async () => {
    // gen_server: "{'EXIT', Parent, Reason}" -> terminate(Reason, State), then exit(Reason).
    const log: string[] = [];
    let child: Pid | undefined;
    const parent: Pid = spawn(
      genServer<object>({
        init: () => ({}),
        handleCast: (m) => {
          // Linked at its start (gen_server:start_link): the parent is the process it links to.
          if (m.type === 'spawn') child = logger(log, true, parent);
          else if (child !== undefined) exit(child, 'shutdown');
        },
      }),
    );
    cast(parent, { type: 'spawn' });
    const down = downOf(child!);
    cast(parent, { type: 'stop_child' });
    expect((await down).reason).toBe('shutdown');
    expect(log).toEqual(['terminate shutdown']);
    exit(parent, 'kill');
  });

  it('only a supervisor\'s parent stops it with an exit signal; stop() stops it from anywhere', async () => {
    // supervisor is a gen_server: an exit signal from a non-parent is an EXIT message it does not act on.
    let sup: Pid | undefined;
    const parent = spawn(
      genServer<object>({
        init: () => ({}),
        handleCall: async () => (sup = await startSupervisor({ children: [] })),
      }),
    );
    await call(parent, { type: 'start' }, { timeoutMs: Infinity });
    const other = sender();
    cast(other, { type: 'exit', target: sup!, reason: 'shutdown' });
    await tick();
    await tick();
    expect(isAlive(sup!)).toBe(true);
    await stop(sup!, 'shutdown');
    expect(isAlive(sup!)).toBe(false);
    exit(parent, 'kill');
    exit(other, 'kill');
  });

  it('terminate on a supervisor shutdown runs only in a server that traps exits', async () => {
    // gen_server docs: terminate is called on a supervisor shutdown "only if the gen_server process traps exits".
    const log: string[] = [];
    const server = (id: string, trapExit: boolean) => () =>
      spawn(genServer<object>({ init: () => ({}), terminate: (reason) => void log.push(`${id} ${String(reason)}`) }), { trapExit });
    const sup = await startSupervisor({
      children: [
        { id: 'trapping', start: server('trapping', true) },
        { id: 'plain', start: server('plain', false) },
      ],
    });
    await stop(sup, 'shutdown');
    expect(log).toEqual(['trapping shutdown']);
  });

  it('stop() runs terminate whether or not the server traps exits', async () => {
    // gen_server:stop/3: "the gen_server process calls Module:terminate/2 before exiting".
    const log: string[] = [];
    const pid = logger(log, false);
    await stop(pid, 'shutdown');
    expect(log).toEqual(['terminate shutdown']);
  });
});

describe('gen_server_SUITE: calling_self', () => {
  it('a server calling itself after an await is rejected with calling_self at once', async () => {
    // gen:call: "call(Process, ...) when Process =:= self() -> exit(calling_self)".
    const pid: Pid = spawn(
      genServer<object>({
        init: () => ({}),
        handleCall: async (request): Promise<string> => {
          if (request.type === 'peek') return 'peeked';
          await new Promise((r) => setTimeout(r, 1));
          return call(pid, { type: 'peek' }).then(
            () => 'no error',
            (error: ExitError) => error.code,
          );
        },
      }),
    );
    await expect(call(pid, { type: 'outer' }, { timeoutMs: 60_000 })).resolves.toBe('calling_self');
    exit(pid, 'kill');
  });
});

describe('gen_server_SUITE: calling_self, whatever the callback is', () => {
  /** A handler that, after an await, calls its own server, and answers with what that call gave. */
  const selfCalling = (pid: () => Pid) => async (request: Message): Promise<string> => {
    if (request.type === 'peek') return 'peeked';
    await new Promise((r) => setTimeout(r, 1));
    return call(pid(), { type: 'peek' }, { timeoutMs: 60_000 }).then(
      () => 'no error',
      (error: ExitError) => error.code,
    );
  };

  it('a method of a class instance (an async method inherited from its prototype)', async () => {
    let pid: Pid | undefined;
    const body = selfCalling(() => pid!);
    class Server {
      init() {
        return {};
      }
      async handleCall(request: Message) {
        return body(request);
      }
    }
    pid = spawn(genServer<object>(new Server()));
    await expect(call(pid, { type: 'outer' }, { timeoutMs: 60_000 })).resolves.toBe('calling_self');
    exit(pid, 'kill');
  });

  it('a plain function that returns a promise (it hands the request to an async function)', async () => {
    let pid: Pid | undefined;
    const body = selfCalling(() => pid!);
    pid = spawn(genServer<object>({ init: () => ({}), handleCall: (request) => body(request) }));
    await expect(call(pid, { type: 'outer' }, { timeoutMs: 60_000 })).resolves.toBe('calling_self');
    exit(pid, 'kill');
  });

  it('a cast handler: its call to itself after an await fails with calling_self too', async () => {
    let seen: string | undefined;
    const pid: Pid = spawn(
      genServer<object>({
        init: () => ({}),
        handleCall: () => 'peeked',
        handleCast: async () => {
          await Promise.resolve();
          seen = await call(pid, { type: 'peek' }, { timeoutMs: 60_000 }).then(() => 'no error', (error: ExitError) => error.code);
        },
      }),
    );
    cast(pid, { type: 'go' });
    await waitFor(() => seen, 'the cast to finish');
    expect(seen).toBe('calling_self');
    exit(pid, 'kill');
  });

  it('work a callback leaves running after it returned is not the process: its call is answered', async () => {
    let answer: unknown;
    const pid: Pid = spawn(
      genServer<object>({
        init: () => ({}),
        handleCall: () => 'peeked',
        handleCast: () => {
          void (async () => {
            await new Promise((r) => setTimeout(r, 1));
            answer = await call(pid, { type: 'peek' }, { timeoutMs: 60_000 }).catch((error: ExitError) => error.code);
          })();
        },
      }),
    );
    cast(pid, { type: 'go' });
    await waitFor(() => answer, 'the detached call');
    expect(answer).toBe('peeked');
    exit(pid, 'kill');
  });
});

describe('gen_server_SUITE: continue and timeout', () => {
  it("handleContinue runs after init and before any message, even one sent right after the spawn", async () => {
    // gen_server: "{ok, State, {continue, Continue}}": handle_continue runs "immediately after the callback".
    const log: string[] = [];
    const pid = spawn(
      genServer<object>({
        init: (_input, self) => {
          self.continue('warm up');
          return {};
        },
        handleContinue: (request) => void log.push(`continue ${String(request)}`),
        handleCast: (m) => void log.push(`cast ${m.type}`),
      }),
    );
    cast(pid, { type: 'first' });
    await waitFor(() => log.length === 2, 'both callbacks');
    expect(log).toEqual(['continue warm up', 'cast first']);
    exit(pid, 'kill');
  });

  it('a timeout set by a callback delivers a timeout info when no message comes, and any message cancels it', async () => {
    // gen_server: "{noreply, NewState, Timeout}": "handle_info(timeout, State)" if no message arrives within Timeout ms.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const log: string[] = [];
    const pid = spawn(
      genServer<{ self: ServerSelf }>({
        init: (_input, self) => ({ self }),
        handleCast: (m, state) => {
          log.push(`cast ${m.type}`);
          if (m.type === 'arm') state.self.timeout(100);
        },
        handleInfo: (m) => void log.push(`info ${m.type}`),
      }),
    );
    cast(pid, { type: 'arm' });
    vi.advanceTimersByTime(99);
    cast(pid, { type: 'other' }); // a message came: the timeout is void
    vi.advanceTimersByTime(500);
    cast(pid, { type: 'arm' });
    vi.advanceTimersByTime(100);
    expect(log).toEqual(['cast arm', 'cast other', 'cast arm', 'info timeout']);
    exit(pid, 'kill');
  });
});

describe('gen_server_SUITE: start timeout', () => {
  it('an init that hangs fails start with timeout and the process is killed', async () => {
    // proc_lib:start/5: if no ack within Time, "the process is killed" and {error, timeout} is returned.
    const started: Pid[] = [];
    const hanging = genServer<object>({
      init: (_input, self) => {
        started.push(self.pid);
        return new Promise<object>(() => {});
      },
    });
    const error = await rejection(start(hanging, { timeoutMs: 20 }));
    expect(error.code).toBe('timeout');
    expect(isAlive(started[0]!)).toBe(false);
  });
});

describe('gen_server_SUITE: timers (erlang:send_after)', () => {
  function inbox(log: string[]): Pid {
    return spawn(
      genServer<object>({
        init: () => ({}),
        handleInfo: (m) => {
          const timer = m as TimerMessage<string>;
          log.push(timer.ref === undefined ? `info ${m.type}` : `timeout ${timer.message}`);
        },
      }),
    );
  }

  it('sendAfter delivers the message as an info; cancelTimer before it fires returns the time left and it never comes', () => {
    // erlang:cancel_timer/1: returns "the time in milliseconds left until the canceled timer would have expired".
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const log: string[] = [];
    const pid = inbox(log);
    const kept = sendAfter(pid, { type: 'kept' }, 50);
    const cancelled = sendAfter(pid, { type: 'cancelled' }, 100);
    vi.advanceTimersByTime(40);
    const left = cancelTimer(cancelled);
    expect(typeof left).toBe('number');
    expect(left as number).toBeGreaterThan(0);
    expect(left as number).toBeLessThanOrEqual(100);
    vi.advanceTimersByTime(200);
    expect(log).toEqual(['info kept']);
    // erlang:cancel_timer/1: "false" for a timer that has already expired.
    expect(cancelTimer(kept)).toBe(false);
    expect(readTimer(kept)).toBe(false);
    exit(pid, 'kill');
  });

  it('startTimer delivers { type: timeout, ref, message }', () => {
    // erlang:start_timer/3: "{timeout, TimerRef, Msg} is sent to the process identified by Dest".
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const log: string[] = [];
    const pid = inbox(log);
    startTimer(pid, 'tick', 10);
    vi.advanceTimersByTime(10);
    expect(log).toEqual(['timeout tick']);
    exit(pid, 'kill');
  });

  it('a timer dies with its process', () => {
    // erlang:send_after/3: "The timer is automatically canceled if ... the process referred to by the pid() is not alive, or if the process exits."
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const log: string[] = [];
    const pid = inbox(log);
    const timer = sendAfter(pid, { type: 'late' }, 100);
    expect(readTimer(timer)).not.toBe(false);
    exit(pid, 'kill');
    expect(readTimer(timer)).toBe(false);
    expect(cancelTimer(timer)).toBe(false);
    expect(readTimer(sendAfter(pid, { type: 'to the dead' }, 10))).toBe(false);
  });
});
