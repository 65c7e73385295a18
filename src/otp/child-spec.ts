/**
 * Child specifications (supervisor:child_spec()), their OTP defaults and validation.
 * - `restart`: `permanent` (default) always restarted; `transient` only after an abnormal
 *   exit (not `normal`, `shutdown`, `{shutdown, _}`); `temporary` never, not even by a
 *   sibling's group restart, and its spec is dropped when it exits.
 * - `shutdown`: `brutal_kill` kills at once; a number of ms asks for a graceful stop then
 *   kills after that long; `infinity` waits for the graceful stop. Default 5000 for workers,
 *   `infinity` for supervisors.
 * - `start` must spawn the child and return its Pid (or a promise of it), or `'ignore'`
 *   (the spec is kept with no process; a temporary one is dropped). The supervisor links the
 *   child to itself. A throw, rejection or other return value is a start failure.
 * - `startTimeoutMs` (default `Infinity`): a start that has not settled by then is a start
 *   failure with ExitError `timeout`; a process it hands back later is killed.
 * - `significant` (default false; OTP 24): the child's own exit (transient: a normal one;
 *   temporary: any) can end the supervisor, as its `autoShutdown` flag says. It cannot be
 *   true for a permanent child (`bad_combination`), nor under `autoShutdown: 'never'`.
 */
import { SupervisorError } from './otp-errors.ts';
import type { Pid } from './pid.ts';

/** When a child is restarted (see above). Default `'permanent'`. */
export type RestartType = 'permanent' | 'transient' | 'temporary';
/** How a child is stopped (see above): kill at once, ms of grace then kill, or wait. */
export type ShutdownSpec = 'brutal_kill' | number | 'infinity';
/** What a child is; a supervisor gets `shutdown: 'infinity'` by default. */
export type ChildType = 'worker' | 'supervisor';
/** What a child's `start` returns: its Pid, or `'ignore'` (no process, spec kept). */
export type StartResult = Pid | 'ignore';
/** When a supervisor ends with its significant children (OTP 24's auto_shutdown). */
export type AutoShutdown = 'never' | 'any_significant' | 'all_significant';

/** One child of a supervisor (supervisor:child_spec()). Invalid: SupervisorError `invalid_child_spec`. */
export interface ChildSpec {
  /** Unique among its siblings; names it in `terminateChild`, `restartChild`, events. */
  readonly id: string;
  /** Spawns the child and returns its Pid (or `'ignore'`); the supervisor links it to itself. */
  readonly start: () => StartResult | Promise<StartResult>;
  /** Default `'permanent'`. */
  readonly restart?: RestartType;
  /** Default 5000 ms for a worker, `'infinity'` for a supervisor. */
  readonly shutdown?: ShutdownSpec;
  /** Default `'worker'`. */
  readonly type?: ChildType;
  /** Its own exit may end the supervisor (`autoShutdown`). Default false; never for a permanent child. */
  readonly significant?: boolean;
  /** A start not settled by then fails with ExitError `timeout`. Default `Infinity`. */
  readonly startTimeoutMs?: number;
}

/** The one child template of a dynamic supervisor; `startChild(sup, ...args)` calls `start(...args)`. */
export interface DynamicChildSpec<TArgs extends unknown[] = unknown[]> {
  /** Optional: a dynamic supervisor's children are addressed by Pid. */
  readonly id?: string;
  /** Spawns one child from `startChild`'s arguments. */
  readonly start: (...args: TArgs) => StartResult | Promise<StartResult>;
  /** Default `'permanent'`. */
  readonly restart?: RestartType;
  /** Default 5000 ms for a worker, `'infinity'` for a supervisor. */
  readonly shutdown?: ShutdownSpec;
  /** Default `'worker'`. */
  readonly type?: ChildType;
  /** As in `ChildSpec`. Default false. */
  readonly significant?: boolean;
  /** As in `ChildSpec`. Default `Infinity`. */
  readonly startTimeoutMs?: number;
}

/** A spec with every default filled in. */
export interface ResolvedChildSpec {
  readonly id: string | undefined;
  readonly start: (...args: unknown[]) => StartResult | Promise<StartResult>;
  readonly restart: RestartType;
  readonly shutdown: ShutdownSpec;
  readonly type: ChildType;
  readonly significant: boolean;
  readonly startTimeoutMs: number;
}

const RESTARTS: readonly string[] = ['permanent', 'transient', 'temporary'];
const TYPES: readonly string[] = ['worker', 'supervisor'];

function invalid(field: string, message: string, childId: string | undefined): never {
  throw new SupervisorError('invalid_child_spec', `child spec${childId === undefined ? '' : ` '${childId}'`}: ${message}`, {
    field,
    ...(childId === undefined ? {} : { childId }),
  });
}

/** Validate a spec and fill OTP's defaults. Throws SupervisorError `invalid_child_spec`. */
export function resolveChildSpec(spec: unknown, options: { idRequired: boolean; autoShutdown: AutoShutdown }): ResolvedChildSpec {
  if (typeof spec !== 'object' || spec === null) invalid('spec', 'must be an object', undefined);
  const s = spec as Record<string, unknown>;
  const id = s['id'];
  if (options.idRequired ? typeof id !== 'string' || id.length === 0 : id !== undefined && typeof id !== 'string') {
    invalid('id', 'id must be a non-empty string', undefined);
  }
  const childId = id as string | undefined;
  if (typeof s['start'] !== 'function') invalid('start', 'start must be a function returning a Pid or "ignore"', childId);
  const restart = s['restart'] ?? 'permanent';
  if (!RESTARTS.includes(restart as string)) invalid('restart', `restart must be one of ${RESTARTS.join(', ')}`, childId);
  const type = s['type'] ?? 'worker';
  if (!TYPES.includes(type as string)) invalid('type', `type must be one of ${TYPES.join(', ')}`, childId);
  const shutdown = s['shutdown'] ?? (type === 'supervisor' ? 'infinity' : 5000);
  const validShutdown =
    shutdown === 'brutal_kill' || shutdown === 'infinity' || (typeof shutdown === 'number' && Number.isInteger(shutdown) && shutdown >= 0);
  if (!validShutdown) invalid('shutdown', 'shutdown must be "brutal_kill", "infinity" or a non-negative integer of ms', childId);
  const significant = s['significant'] ?? false;
  if (typeof significant !== 'boolean') invalid('significant', 'significant must be a boolean', childId);
  if (significant && restart === 'permanent') invalid('significant', 'bad_combination: a permanent child cannot be significant', childId);
  if (significant && options.autoShutdown === 'never') invalid('significant', "significant children need autoShutdown 'any_significant' or 'all_significant'", childId);
  const startTimeoutMs = s['startTimeoutMs'] ?? Infinity;
  if (!(typeof startTimeoutMs === 'number' && startTimeoutMs > 0)) invalid('startTimeoutMs', 'startTimeoutMs must be a positive number of ms or Infinity', childId);
  return {
    id: childId,
    start: s['start'] as ResolvedChildSpec['start'],
    restart: restart as RestartType,
    shutdown: shutdown as ShutdownSpec,
    type: type as ChildType,
    significant,
    startTimeoutMs,
  };
}
