/**
 * Test workers and helpers for the OTP suites: real processes (gen servers, machines), a
 * fake clock, and waits that poll state instead of sleeping for a fixed time.
 */
import { cast, exit, genServer, isAlive, spawn, type Clock, type ExitReason, type ExitSignal, type Message, type Pid, type ServerSelf } from '../../src/otp/index.ts';

export interface FakeClock extends Clock {
  advance(ms: number): void;
}

export function fakeClock(startMs = 1_000_000): FakeClock {
  let t = startMs;
  return {
    now: () => t,
    advance: (ms) => {
      t += ms;
    },
  };
}

/** Poll until `check` returns a value other than undefined/false (or throw after `timeoutMs`). */
export async function waitFor<T>(check: () => T | undefined | false, what = 'condition', timeoutMs = 5000): Promise<T> {
  if (check.constructor.name === 'AsyncFunction') throw new TypeError('waitFor takes a synchronous check');
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 1));
  }
}

export const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

export interface WorkerOptions {
  /** Ignore graceful shutdown: terminate never finishes (the supervisor must kill it). */
  readonly hangOnShutdown?: boolean;
  /** Make the start function throw instead of spawning. */
  readonly failStart?: () => boolean;
  /** Return 'ignore' from the start function. */
  readonly ignore?: boolean;
  /** Register under this name. */
  readonly name?: string;
  /** Trap exits, so a supervisor's shutdown runs terminate (gen_server's rule). Default true. */
  readonly trapExit?: boolean;
}

/**
 * A start function for a worker that logs `start <id>` / `stop <id> <reason>` to `log`.
 * Cast `{type:'crash'}` to crash it, `{type:'stop', reason}` to make it stop itself.
 */
export function worker(log: string[], id: string, options: WorkerOptions = {}): () => Pid | 'ignore' {
  return () => {
    if (options.failStart?.() === true) {
      log.push(`start_failed ${id}`);
      throw new Error(`cannot start ${id}`);
    }
    if (options.ignore === true) return 'ignore';
    return spawn(
      genServer<{ self: ServerSelf }>({
        init: (_input, self) => {
          log.push(`start ${id}`);
          return { self };
        },
        handleCall: (request) => (request.type === 'ping' ? 'pong' : undefined),
        handleCast: (message, state) => {
          if (message.type === 'crash') throw new Error(`boom ${id}`);
          if (message.type === 'stop') state.self.stop((message as unknown as { reason: ExitReason }).reason);
        },
        terminate: (reason) => {
          log.push(`stop ${id} ${reasonText(reason)}`);
          if (options.hangOnShutdown === true) return new Promise<void>(() => {});
        },
      }),
      { trapExit: options.trapExit ?? true, ...(options.name === undefined ? {} : { name: options.name }) },
    );
  };
}

/** `normal`, `shutdown`, `killed`, `shutdown:<term>` or `crashed`. */
export function reasonText(reason: ExitReason): string {
  if (typeof reason === 'string') return reason;
  return 'shutdown' in reason ? `shutdown:${String(reason.shutdown)}` : 'crashed';
}

/**
 * A process standing in for the Erlang shell, which top-level code is not: a process spawned
 * with `{ link: shell.pid }` has it as its parent (start_link), and `shell.exit(target, reason)`
 * sends an exit signal from it. It traps exits, so its children's exits leave it alone.
 */
export interface Shell {
  readonly pid: Pid;
  exit(target: Pid, reason: ExitSignal): void;
}

export function shell(): Shell {
  const pid = spawn(
    genServer<object, void, Message, { type: 'exit'; target: Pid; reason: ExitSignal }>({
      init: () => ({}),
      handleCast: (m) => exit(m.target, m.reason),
    }),
    { trapExit: true },
  );
  return { pid, exit: (target, reason) => cast(pid, { type: 'exit', target, reason }) };
}

export async function waitDead(pid: Pid): Promise<void> {
  await waitFor(() => !isAlive(pid), `${pid} to exit`);
}
