/**
 * Why a process ended, as OTP names it.
 * - `normal`: it finished (a machine reached a final state, a server stopped itself normally);
 * - `shutdown` / `{ shutdown: term }`: it was asked to stop (by its supervisor, `exit`, `stop`);
 * - `killed`: it was stopped with `exit(pid, 'kill')`, or a brutal_kill / shutdown timeout;
 * - `noproc`: only in a DOWN for a process that was already dead when monitored;
 * - `{ crashed: error }`: an exception escaped its behaviour (the original thrown value).
 */
export type ExitReason =
  | 'normal'
  | 'shutdown'
  | 'killed'
  | 'noproc'
  | {
      /** Asked to stop, with this term. */
      readonly shutdown: unknown;
    }
  | {
      /** The value its behaviour threw. */
      readonly crashed: unknown;
    };

/** What `exit(pid, signal)` and `stop(pid, reason)` accept: `'kill'` is untrappable (the target exits `killed`). */
export type ExitSignal =
  | 'kill'
  | 'normal'
  | 'shutdown'
  | {
      /** Stop, with this term. */
      readonly shutdown: unknown;
    }
  | {
      /** Exit as if it had thrown this value. */
      readonly crashed: unknown;
    };

/** OTP's "not abnormal": transient children are not restarted after these. */
export function isNormalExit(reason: ExitReason): boolean {
  return reason === 'normal' || reason === 'shutdown' || (typeof reason === 'object' && 'shutdown' in reason);
}

/** True for `{ crashed }`: an exception escaped the behaviour. */
export function isCrash(reason: ExitReason): reason is Extract<ExitReason, { readonly crashed: unknown }> {
  return typeof reason === 'object' && 'crashed' in reason;
}

/** A one-line description for logs and error messages. */
export function formatExitReason(reason: ExitReason): string {
  if (typeof reason === 'string') return reason;
  if ('shutdown' in reason) return `{shutdown, ${describe(reason.shutdown)}}`;
  return `crashed: ${describe(reason.crashed)}`;
}

function describe(value: unknown): string {
  if (value instanceof Error) return `${value.name}: ${value.message}`;
  try {
    return typeof value === 'string' ? value : JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
