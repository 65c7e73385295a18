/**
 * Application support: start a supervision tree, watch it, stop it.
 * (Implementation in progress.)
 */
import type { ChildType } from './child-spec.ts';
import type { ExitReason } from './exit-reason.ts';
import type { Pid } from './pid.ts';
import type { SupervisorOptions, SupervisorSpec } from './supervisor.ts';
import type { EventStream, TreeEvent } from './tree-events.ts';

export type ApplicationOptions = SupervisorOptions;

/** One node of `Application.inspect()`. */
export interface TreeNode {
  readonly id: string | undefined;
  readonly pid: Pid | 'restarting' | undefined;
  readonly name: string | undefined;
  readonly type: ChildType;
  /** `running`, `exiting` (stopping gracefully), `restarting`, or `undefined` (spec kept, no process). */
  readonly status: 'running' | 'exiting' | 'restarting' | 'undefined';
  /** A machine's state value (xstate `snapshot.value`); undefined for other logic. */
  readonly state: unknown;
  /** How many times the supervisor restarted this child id. */
  readonly restarts: number;
  readonly mailboxDepth: number;
  /** Children, for supervisors. */
  readonly children: readonly TreeNode[];
}

export interface Application {
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
}

export interface ShutdownHandlerOptions {
  /** Default `['SIGTERM', 'SIGINT']`. */
  readonly signals?: readonly NodeJS.Signals[];
  /** Called after the tree stopped (code 0) or on a second signal (code 130). Default `process.exit`. */
  readonly exit?: (code: number) => void;
}

function notYet(): never {
  throw new Error('src/otp/application.ts: not implemented yet');
}

/** Start the root supervisor of an application and return its handle. */
export function startApplication(spec: SupervisorSpec, options?: ApplicationOptions): Promise<Application> {
  void spec;
  void options;
  return notYet();
}

/**
 * On SIGTERM/SIGINT: stop the tree gracefully, then exit(0); a second signal exits at once.
 * Returns a function that removes the handlers.
 */
export function installShutdownHandlers(app: Application, options?: ShutdownHandlerOptions): () => void {
  void app;
  void options;
  return notYet();
}
