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

/** One event of a supervision tree (a union on `type`; see above). */
export type TreeEvent =
  | {
      /** A child started. */
      readonly type: 'start';
      /** Its supervisor. */
      readonly supervisor: Pid;
      /** Its child id (undefined under a dynamic supervisor). */
      readonly id: string | undefined;
      /** The new process. */
      readonly pid: Pid;
      /** `'worker'` or `'supervisor'`. */
      readonly childType: ChildType;
    }
  | {
      /** A child exited. */
      readonly type: 'exit';
      /** Its supervisor. */
      readonly supervisor: Pid;
      /** Its child id (undefined under a dynamic supervisor). */
      readonly id: string | undefined;
      /** The process that exited. */
      readonly pid: Pid;
      /** Its exit reason, as the supervisor saw it. */
      readonly reason: ExitReason;
    }
  | {
      /** A child was restarted. */
      readonly type: 'restart';
      /** Its supervisor. */
      readonly supervisor: Pid;
      /** Its child id (undefined under a dynamic supervisor). */
      readonly id: string | undefined;
      /** The new incarnation; undefined when its start returned `'ignore'`. */
      readonly pid: Pid | undefined;
      /** The incarnation that exited; undefined when a retried start finally succeeded. */
      readonly previous: Pid | undefined;
      /** How many times this child id has been restarted so far. */
      readonly restarts: number;
    }
  | {
      /** A child's start failed (during a restart it is retried). */
      readonly type: 'start_error';
      /** Its supervisor. */
      readonly supervisor: Pid;
      /** Its child id (undefined under a dynamic supervisor). */
      readonly id: string | undefined;
      /** What the start threw or returned. */
      readonly error: unknown;
    }
  | {
      /** A supervisor gave up: it stops its children and exits `shutdown`. */
      readonly type: 'escalate';
      /** The supervisor. */
      readonly supervisor: Pid;
      /** Always `'reached_max_restart_intensity'`. */
      readonly reason: 'reached_max_restart_intensity';
    }
  | {
      /** A significant child ended by itself and ends its supervisor. */
      readonly type: 'auto_shutdown';
      /** The supervisor. */
      readonly supervisor: Pid;
      /** The significant child. */
      readonly id: string | undefined;
    }
  | {
      /** The application's root exited on its own. */
      readonly type: 'fatal';
      /** The root supervisor. */
      readonly pid: Pid;
      /** Its exit reason. */
      readonly reason: ExitReason;
    };

/** A typed event stream: subscribe with a listener, or `for await` over it. */
export interface EventStream<E> extends AsyncIterable<E> {
  /** Call `listener` for every event from now on; returns the unsubscribe function. */
  subscribe(listener: (event: E) => void): () => void;
}
