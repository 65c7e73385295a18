/**
 * Application support: start a supervision tree, watch it, stop it.
 *
 * Contract
 * - `startApplication(spec)` starts the root supervisor (rejects like `startSupervisor`).
 * - `inspect()` is synchronous: it reads each supervisor's child list and each process's
 *   shell state and xstate snapshot, without sending messages, so it works while a
 *   supervisor is busy restarting.
 * - `events` carries the tree's supervisor decisions (start, exit, restart, start_error,
 *   escalate) from the moment `startApplication` resolves (the initial tree is what
 *   `inspect()` shows), and `fatal` when the root exits on its own.
 * - `trace(listener)` follows messages and machine states of the tree's processes through
 *   xstate's inspection API; nothing is traced (or paid for) until it is called.
 * - `stop()` asks the root to shut down (`shutdown`): children stop right to left, each per
 *   its shutdown spec, then the root exits. Idempotent.
 * - `installShutdownHandlers(app)`: on SIGTERM/SIGINT stop the tree, then exit(0); a second
 *   signal exits at once with 130.
 */
import type { ChildType } from './child-spec.ts';
import type { ExitReason } from './exit-reason.ts';
import { monitor } from './monitor.ts';
import type { Pid } from './pid.ts';
import { Process, processInfo, stop } from './process.ts';
import { onSupervisorEvent } from './supervisor-events.ts';
import { startSupervisorProcess, supervisorStateOf, type Child, type SupervisorOptions, type SupervisorSpec } from './supervisor.ts';
import { createEventStream } from './event-stream.ts';
import { traceProcess, type ProcessTraceEvent } from './trace.ts';
import type { EventStream, TreeEvent } from './tree-events.ts';

/**
 * What `startApplication` takes besides the spec: the root's name and clock (`SupervisorOptions`).
 */
export type ApplicationOptions = SupervisorOptions;

/** One node of `Application.inspect()`. */
export interface TreeNode {
  /** The child id under its supervisor (undefined for the root and dynamic children). */
  readonly id: string | undefined;
  /**
   * The running process, `'restarting'` while a failed restart is retried, undefined when not
   * running.
   */
  readonly pid: Pid | 'restarting' | undefined;
  /** Its registered name, if any. */
  readonly name: string | undefined;
  /** `'worker'` or `'supervisor'`. */
  readonly type: ChildType;
  /** `running`, `exiting` (stopping gracefully), `restarting`, or `undefined` (spec kept, no process). */
  readonly status: 'running' | 'exiting' | 'restarting' | 'undefined';
  /** A machine's state value (xstate `snapshot.value`); undefined for other logic. */
  readonly state: unknown;
  /** How many times the supervisor restarted this child. */
  readonly restarts: number;
  /** Messages accepted but not yet taken by its behaviour. */
  readonly mailboxDepth: number;
  /** Children, for supervisors (in start order). */
  readonly children: readonly TreeNode[];
}

/** A running supervision tree, from `startApplication`. */
export interface Application {
  /** The root supervisor. */
  readonly root: Pid;
  /** A snapshot of the live tree, synchronous. */
  inspect(): TreeNode;
  /** start / exit / restart / start_error / escalate / fatal events of this tree. */
  readonly events: EventStream<TreeEvent>;
  /** Stop the tree (children in reverse start order) and wait until the root has exited. */
  stop(): Promise<void>;
  /** Called once if the root exits on its own (intensity exhausted all the way up). */
  onFatal(listener: (reason: ExitReason) => void): () => void;
  /** Resolves with the root's exit reason when the tree is gone (stopped or fatal). */
  readonly exited: Promise<ExitReason>;
  /**
   * Trace messages and machine states of every process in the tree, including ones started
   * later (xstate inspection; see trace.ts). Returns the function that stops tracing.
   */
  trace(listener: (event: ProcessTraceEvent) => void): () => void;
}

/** What `installShutdownHandlers` takes. */
export interface ShutdownHandlerOptions {
  /** Default `['SIGTERM', 'SIGINT']`. */
  readonly signals?: readonly NodeJS.Signals[];
  /** Called after the tree stopped (code 0) or on a second signal (code 130). Default `process.exit`. */
  readonly exit?: (code: number) => void;
}

function node(id: string | undefined, pid: Pid | 'restarting' | undefined, type: ChildType, restarts: number): TreeNode {
  if (!(pid instanceof Process)) {
    const status = pid === 'restarting' ? 'restarting' : 'undefined';
    return { id, pid, name: undefined, type, status, state: undefined, restarts, mailboxDepth: 0, children: [] };
  }
  const info = processInfo(pid);
  const sup = supervisorStateOf(pid);
  const children = sup === undefined || info === undefined ? [] : sup.list().map((c: Child) => node(c.id, c.pid, c.spec.type, c.restarts));
  return {
    id,
    pid,
    name: info?.name,
    type,
    status: info === undefined ? 'undefined' : info.status,
    state: info?.state,
    restarts,
    mailboxDepth: info?.mailboxDepth ?? 0,
    children,
  };
}

/** True if `pid` is `root` or was started (transitively) by it. */
function inTree(pid: Pid, root: Process): boolean {
  for (let p = pid instanceof Process ? pid : undefined; p !== undefined; p = p.parent) if (p === root) return true;
  return false;
}

/** Start the root supervisor of an application and return its handle. */
export async function startApplication(spec: SupervisorSpec, options: ApplicationOptions = {}): Promise<Application> {
  const events = createEventStream<TreeEvent>();
  const root = await startSupervisorProcess(spec, options);
  const offSupervisorEvents = onSupervisorEvent((event) => {
    if ('supervisor' in event && inTree(event.supervisor, root)) events.emit(event);
  });
  const fatalListeners = new Set<(reason: ExitReason) => void>();
  let stopping = false;
  let resolveExited!: (reason: ExitReason) => void;
  const exited = new Promise<ExitReason>((r) => (resolveExited = r));
  monitor(root, (down) => {
    offSupervisorEvents();
    if (!stopping) {
      events.emit({ type: 'fatal', pid: root, reason: down.reason });
      for (const listener of fatalListeners) listener(down.reason);
    }
    events.end();
    resolveExited(down.reason);
  });
  return {
    root,
    inspect: () => node(undefined, root.alive ? root : undefined, 'supervisor', 0),
    events,
    async stop() {
      stopping = true;
      // gen_server:stop: the application is not the root's parent, so an exit signal would not do.
      if (root.alive) stop(root, 'shutdown').catch(() => {});
      await exited;
    },
    onFatal(listener) {
      fatalListeners.add(listener);
      return () => void fatalListeners.delete(listener);
    },
    exited,
    trace(listener) {
      const stops: Array<() => void> = [];
      const follow = (pid: Pid): void => {
        const stop = traceProcess(pid, listener);
        if (stop !== undefined) stops.push(stop);
      };
      const walk = (n: TreeNode): void => {
        if (n.pid instanceof Process) follow(n.pid);
        n.children.forEach(walk);
      };
      walk(node(undefined, root.alive ? root : undefined, 'supervisor', 0));
      const offStarts = events.subscribe((e) => e.type === 'start' && follow(e.pid));
      return () => {
        offStarts();
        for (const stop of stops.splice(0)) stop();
      };
    },
  };
}

/**
 * On SIGTERM/SIGINT: stop the tree gracefully, then exit(0); a second signal exits at once
 * with 130. Returns a function that removes the handlers.
 */
export function installShutdownHandlers(app: Application, options: ShutdownHandlerOptions = {}): () => void {
  const signals = options.signals ?? ['SIGTERM', 'SIGINT'];
  const exitProcess = options.exit ?? ((code: number) => process.exit(code));
  let stopping = false;
  const onSignal = (): void => {
    if (stopping) return exitProcess(130);
    stopping = true;
    app.stop().then(
      () => exitProcess(0),
      () => exitProcess(1),
    );
  };
  for (const signal of signals) process.on(signal, onSignal);
  return () => {
    for (const signal of signals) process.off(signal, onSignal);
  };
}
