/**
 * src/otp: the OTP runtime core.
 *
 * A process is an xstate v5 actor inside a thin shell (`process.ts`) that adds what xstate
 * lacks: `call` with a timeout and typed exit errors, `cast`, exit reasons, links, monitors,
 * a local name registry, and inspection. Supervisors (`supervisor.ts`) are our own code with
 * OTP's exact semantics; `application.ts` starts a tree and watches it. xstate stays behind
 * this barrel: nothing outside src/otp should need to import xstate to use a process.
 *
 * @module mnemo/otp
 */
export type { Pid, ProcessRef, Message } from './pid.ts';
export type { ExitReason, ExitSignal } from './exit-reason.ts';
export { isNormalExit, isCrash, formatExitReason } from './exit-reason.ts';
export { ExitError, RegistryError, SupervisorError } from './otp-errors.ts';
export type { ExitCode, RegistryErrorCode, SupervisorErrorCode } from './otp-errors.ts';
export type { Clock } from './clock.ts';
export { monotonicClock } from './clock.ts';

export {
  spawn,
  spawnHibernated,
  start,
  exit,
  stop,
  link,
  unlink,
  isAlive,
  processInfo,
  processes,
  pidOf,
  selfPid,
  TERMINATE,
  EXIT,
  HIBERNATE,
} from './process.ts';
export type { SpawnOptions, StartOptions, ProcessInfo, ProcessStatus, TerminateEvent, ExitMessage, ExitWatcher } from './process.ts';

export { sendAfter, startTimer, cancelTimer, readTimer } from './timers.ts';
export type { TimerRef, TimerMessage } from './timers.ts';

export { register, unregister, whereis, registered } from './registry.ts';

export { call, cast, send } from './call.ts';
export type { CallOptions, CallEvent } from './call.ts';
export type { From } from './from.ts';

export { monitor, demonitor, watch } from './monitor.ts';
export type { MonitorRef, Down } from './monitor.ts';

export { genServer, noReply } from './gen-server.ts';
export type { GenServerCallbacks, ServerSelf, GenServerLogic, TimeoutInfo } from './gen-server.ts';

export type {
  ChildSpec,
  DynamicChildSpec,
  RestartType,
  ShutdownSpec,
  ChildType,
  StartResult,
  AutoShutdown,
} from './child-spec.ts';

export {
  startSupervisor,
  startDynamicSupervisor,
  startChild,
  terminateChild,
  restartChild,
  deleteChild,
  whichChildren,
  countChildren,
} from './supervisor.ts';
export type {
  Strategy,
  SupervisorFlags,
  SupervisorSpec,
  DynamicSupervisorSpec,
  SupervisorOptions,
  ChildInfo,
  ChildCounts,
} from './supervisor.ts';

export type { TreeEvent, EventStream } from './tree-events.ts';

export { traceProcess } from './trace.ts';
export type { ProcessTraceEvent } from './trace.ts';

export { startApplication, installShutdownHandlers } from './application.ts';
export { ServiceSlot } from './service-slot.ts';
export type { Application, ApplicationOptions, TreeNode, ShutdownHandlerOptions } from './application.ts';
