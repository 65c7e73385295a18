import { MnemoError } from '../errors.ts';
import type { ExitReason } from './exit-reason.ts';
import type { Pid } from './pid.ts';

/**
 * Why a `call` (or a synchronous start) failed. `code` is the OTP exit reason class:
 * - `noproc`: the name is not registered or the process is dead;
 * - `timeout`: no reply within `timeoutMs` (a late reply is dropped);
 * - `calling_self`: a process called itself (also after an `await` in an async gen server callback);
 * - `normal` / `shutdown` / `killed`: the target stopped while the call was pending;
 * - `crashed`: the target crashed; `reason` is the original thrown value.
 */
export type ExitCode = 'noproc' | 'timeout' | 'calling_self' | 'normal' | 'shutdown' | 'killed' | 'crashed';

/** A failed `call` or synchronous start, with its `ExitCode`. */
export class ExitError extends MnemoError {
  /**
   * For `crashed`, the original thrown value (also `cause`); for a `{ shutdown: term }` exit,
   * that object; otherwise the code itself.
   */
  readonly reason: unknown;

  constructor(
    /** Why it failed (see `ExitCode`). */
    readonly code: ExitCode,
    /** The exit reason exactly as the runtime saw it (`timeout`/`calling_self` are call-side). */
    readonly exit: ExitReason | 'timeout' | 'calling_self',
    message: string,
  ) {
    const reason = typeof exit === 'object' && 'crashed' in exit ? exit.crashed : exit;
    super(message, reason instanceof Error ? { cause: reason } : undefined);
    this.reason = reason;
  }
}

/** Why a registry operation failed. */
export type RegistryErrorCode =
  /** The name is held by another live process (`pid` names it). */
  | 'already_registered'
  /** The process already has a (different) registered name. */
  | 'already_named'
  /** `register` of a process that is not alive. */
  | 'noproc'
  /** `unregister` of a name that is not registered. */
  | 'not_registered'
  /** The name is not a non-empty string. */
  | 'badarg';

/** A refused `register`, `unregister` or named spawn (see `RegistryErrorCode`). Nothing changed. */
export class RegistryError extends MnemoError {
  constructor(
    /** Why it was refused. */
    readonly code: RegistryErrorCode,
    message: string,
    /** For `already_registered`: the process holding the name. */
    readonly pid?: Pid,
  ) {
    super(message);
  }
}

/** OTP's supervisor error terms, one code each. */
export type SupervisorErrorCode =
  /** A child spec or supervisor flag is malformed (`details` says which field). */
  | 'invalid_child_spec'
  | 'invalid_supervisor_flags'
  /** `startChild` with an id whose child is running (`pid` is the running child). */
  | 'already_started'
  /** `startChild` with an id whose spec is kept but the child is not running. */
  | 'already_present'
  /** `restartChild`/`deleteChild` on a running child. */
  | 'running'
  /** `restartChild`/`deleteChild` on a child the supervisor is trying to restart. */
  | 'restarting'
  | 'not_found'
  /** `deleteChild`/`restartChild` on a dynamic (simple_one_for_one) supervisor. */
  | 'simple_one_for_one'
  /** A dynamic supervisor already runs `maxChildren` children. */
  | 'max_children'
  /**
   * A child's start function threw or returned something other than a pid or `'ignore'`
   * (`childId`, `reason`). From `startSupervisor` this is OTP's `{shutdown, {failed_to_start_child, Id, Reason}}`:
   * the children already started were stopped first.
   */
  | 'failed_to_start_child';

/** A supervisor's refusal or start failure (see `SupervisorErrorCode`). */
export class SupervisorError extends MnemoError {
  constructor(
    /** What went wrong. */
    readonly code: SupervisorErrorCode,
    message: string,
    /** What it concerns, as the code has it. */
    readonly details: {
      /** `already_started`: the running child. */
      readonly pid?: Pid;
      /** The child concerned. */
      readonly childId?: string;
      /** `failed_to_start_child`: the start's error (also `cause`). */
      readonly reason?: unknown;
      /** `invalid_child_spec` / `invalid_supervisor_flags`: the bad field. */
      readonly field?: string;
    } = {},
  ) {
    super(message, details.reason instanceof Error ? { cause: details.reason } : undefined);
  }

  /** Convenience: the original start error for `failed_to_start_child`. */
  get reason(): unknown {
    return this.details.reason;
  }
}
