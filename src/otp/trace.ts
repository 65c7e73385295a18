/**
 * Message-level tracing of live processes, built on xstate's inspection API
 * (`actor.system.inspect`). Costs nothing until someone traces: xstate only builds
 * inspection events for systems that have an observer.
 * - `received`: a message reached the behaviour (its `type`; for a call, the request type);
 * - `state`: a machine process entered a state (its `snapshot.value`) after a message.
 * Only the process's own actor is reported, not a machine's invoked children. Internal
 * events (xstate.*, otp.resume/poke/crash) are left out. A traced machine does not hibernate
 * (process.ts) while it is traced: its actor is the one followed.
 */
import type { AnyActorRef, InspectionEvent } from 'xstate';
import type { Pid, ProcessRef } from './pid.ts';
import { keepAwake, releaseAwake, resolve } from './process.ts';

/** One traced event (see above). */
export type ProcessTraceEvent =
  | {
      /** A message reached the behaviour. */
      readonly type: 'received';
      /** The process. */
      readonly pid: Pid;
      /** The message's `type` (for a call, the request's). */
      readonly message: string;
    }
  | {
      /** A machine entered a state. */
      readonly type: 'state';
      /** The process. */
      readonly pid: Pid;
      /** Its `snapshot.value`. */
      readonly state: unknown;
    };

const INTERNAL = /^(xstate\.|otp\.(resume|poke|crash|continue|timeout_tick)$)/;

/**
 * Trace one live process until the returned function is called or it exits. Returns
 * undefined if the process is not alive.
 */
export function traceProcess(ref: ProcessRef, listener: (event: ProcessTraceEvent) => void): (() => void) | undefined {
  const proc = resolve(ref);
  if (proc === undefined) return undefined;
  const actor: AnyActorRef | undefined = keepAwake(proc);
  if (actor === undefined) {
    releaseAwake(proc);
    return undefined;
  }
  const machine = proc.kind === 'machine';
  const subscription = actor.system.inspect((event: InspectionEvent) => {
    if (event.actorRef !== actor) return;
    if (event.type === '@xstate.event') {
      if (!INTERNAL.test(event.event.type)) listener({ type: 'received', pid: proc, message: event.event.type });
    } else if (event.type === '@xstate.snapshot' && machine && !INTERNAL.test(event.event.type)) {
      listener({ type: 'state', pid: proc, state: (event.snapshot as { value?: unknown }).value });
    }
  });
  return () => {
    subscription.unsubscribe();
    releaseAwake(proc);
  };
}
