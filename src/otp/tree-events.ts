/**
 * What a supervision tree reports as it runs (Application.events).
 * - `start`: a supervisor started a child (at init, `startChild`, or a restart);
 * - `exit`: a supervised child exited (`reason` as the supervisor saw it);
 * - `restart`: a supervisor restarted a child after an exit (`restarts` = how many times
 *   this child id has been restarted so far); `pid` undefined if its start returned 'ignore';
 * - `start_error`: a child's start failed (at init, or during a restart: it will be retried);
 * - `escalate`: a supervisor reached its restart intensity; it stops its children and exits
 *   with `shutdown`, which its parent handles;
 * - `auto_shutdown`: a significant child (`id`) ended by itself and the supervisor's
 *   `autoShutdown` flag ends the supervisor: it stops its other children and exits `shutdown`;
 * - `fatal`: the application's root supervisor exited on its own (not through `stop()`).
 */
import type { ChildType } from './child-spec.ts';
import type { ExitReason } from './exit-reason.ts';
import type { Pid } from './pid.ts';

export type TreeEvent =
  | { readonly type: 'start'; readonly supervisor: Pid; readonly id: string | undefined; readonly pid: Pid; readonly childType: ChildType }
  | { readonly type: 'exit'; readonly supervisor: Pid; readonly id: string | undefined; readonly pid: Pid; readonly reason: ExitReason }
  | {
      readonly type: 'restart';
      readonly supervisor: Pid;
      readonly id: string | undefined;
      readonly pid: Pid | undefined;
      /** The incarnation that exited; undefined when a retried start finally succeeded. */
      readonly previous: Pid | undefined;
      readonly restarts: number;
    }
  | { readonly type: 'start_error'; readonly supervisor: Pid; readonly id: string | undefined; readonly error: unknown }
  | { readonly type: 'escalate'; readonly supervisor: Pid; readonly reason: 'reached_max_restart_intensity' }
  | { readonly type: 'auto_shutdown'; readonly supervisor: Pid; readonly id: string | undefined }
  | { readonly type: 'fatal'; readonly pid: Pid; readonly reason: ExitReason };

/** A typed event stream: subscribe with a listener, or `for await` over it. */
export interface EventStream<E> extends AsyncIterable<E> {
  /** Call `listener` for every event from now on; returns the unsubscribe function. */
  subscribe(listener: (event: E) => void): () => void;
}
