/**
 * call / cast / send: how messages reach a process.
 *
 * How a behaviour replies to a call
 * - A machine receives the request as an event with one extra field, `from` (a `From`,
 *   OTP's `From` argument): `{ ...request, from }`. It replies whenever it is ready, in an
 *   action or after async work (e.g. in an invoked promise actor's `onDone`):
 *   `event.from.reply(value)`, or `event.from.fail(error)` to reject the caller with a
 *   domain error without crashing. Keep `from` in context if the reply comes later.
 * - A gen server's `handleCall` returns (or resolves) the reply, or returns `noReply` and
 *   replies later through `from`.
 * - The first reply wins. A reply after the caller timed out, or after the caller was
 *   rejected because the process exited, is dropped (OTP's alias semantics).
 *
 * `call` resolves the name on every call and rejects with an ExitError whose `code` is
 * `noproc`, `timeout`, `calling_self`, the exit reason of a target that stopped mid-call
 * (`normal`, `shutdown`, `killed`), or `crashed` with `reason` = the thrown value.
 * `cast` and `send` never throw: a message to a dead or unknown process is dropped.
 */
import { InvalidInputError } from '../errors.ts';
import { ExitError } from './otp-errors.ts';
import { formatExitReason, type ExitReason } from './exit-reason.ts';
import type { Message, Pid, ProcessRef } from './pid.ts';
import { expireAfter, type Expirable, type TimeoutQueue } from './call-timeouts.ts';
import { CallEnvelope } from './envelopes.ts';
import type { From } from './from.ts';
import { codeOf, deliverInfo, isSelf, resolve, type PendingCall, type Process } from './process.ts';

export type { From } from './from.ts';

/** The event a machine receives for `call(ref, request)`. */
export type CallEvent<TRequest extends Message = Message, R = unknown> = TRequest & {
  /** Where the reply goes: `from.reply(value)` or `from.fail(error)`, once. */
  readonly from: From<R>;
};

/** Options of `call`. */
export interface CallOptions {
  /**
   * Reject with `timeout` after this many ms. Default 5000 (OTP's); `Infinity` waits forever.
   * Not a positive number: the call rejects with InvalidInputError `invalid_option`, nothing is sent.
   */
  readonly timeoutMs?: number;
}

export class CallFrom implements From, PendingCall, Expirable {
  pending = true;
  deadline = 0;
  timeouts: TimeoutQueue | undefined = undefined;

  constructor(
    private readonly target: Process,
    private readonly resolveCall: (value: unknown) => void,
    private readonly rejectCall: (error: unknown) => void,
    private readonly request: Message,
    private readonly timeoutMs: number,
  ) {}

  reply(value: unknown): void {
    if (!this.pending) return;
    this.pending = false;
    this.target.pending?.delete(this);
    this.timeouts?.settled();
    this.resolveCall(value);
  }

  fail(error: unknown): void {
    if (!this.pending) return;
    this.pending = false;
    this.target.pending?.delete(this);
    this.timeouts?.settled();
    this.rejectCall(error);
  }

  settleExit(reason: ExitReason, target: Pid): void {
    if (!this.pending) return;
    this.pending = false;
    this.timeouts?.settled();
    this.rejectCall(new ExitError(codeOf(reason), reason, `call ${this.request.type} to ${target}: process exited (${formatExitReason(reason)})`));
  }

  expire(): void {
    if (!this.pending) return;
    this.pending = false;
    this.target.pending?.delete(this);
    this.rejectCall(new ExitError('timeout', 'timeout', `call ${this.request.type} to ${this.target}: no reply within ${this.timeoutMs} ms`));
  }
}

/** Send `request` and wait for the reply. See the file header for the error codes. */
export function call<R = unknown, TRequest extends Message = Message>(ref: ProcessRef, request: TRequest, options?: CallOptions): Promise<R> {
  const target = resolve(ref);
  if (target === undefined) {
    return Promise.reject(new ExitError('noproc', 'noproc', `call ${request.type}: no process ${String(ref)}`));
  }
  if (isSelf(target)) {
    return Promise.reject(new ExitError('calling_self', 'calling_self', `call ${request.type}: ${target} called itself`));
  }
  const timeoutMs = options?.timeoutMs ?? 5000;
  if (!(timeoutMs > 0)) {
    return Promise.reject(new InvalidInputError('invalid_option', `call ${request.type}: timeoutMs must be a positive number or Infinity, got ${timeoutMs}`));
  }
  return new Promise<R>((resolveCall, rejectCall) => {
    const from = new CallFrom(target, resolveCall as (value: unknown) => void, rejectCall, request, timeoutMs);
    (target.pending ??= new Set()).add(from);
    if (timeoutMs !== Infinity) from.timeouts = expireAfter(from, timeoutMs);
    // Object.assign, not a spread: measured faster through xstate's machine transition.
    target.deliver(target.kind === 'server' ? new CallEnvelope(request.type, request, from) : Object.assign({}, request, { from }));
  });
}

/** Fire-and-forget. Never throws; a message to a dead or unknown process is dropped. */
export function cast<TMessage extends Message>(ref: ProcessRef, message: TMessage): void {
  const target = resolve(ref);
  if (target !== undefined) target.deliver(message);
}

/**
 * A plain message (Erlang's `!`): a machine gets it as an event, a gen server in
 * `handleInfo`. Never throws.
 */
export function send<TMessage extends Message>(ref: ProcessRef, message: TMessage): void {
  const target = resolve(ref);
  if (target !== undefined) deliverInfo(target, message);
}
