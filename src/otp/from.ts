/**
 * The reply capability that comes with a call (OTP's `From`). It lives apart from call.ts
 * so that the envelopes a gen server receives can name it without importing the call path.
 */
export interface From<R = unknown> {
  /** Resolve the caller's promise. Ignored if the call already ended (timeout, exit, earlier reply). */
  reply(value: R): void;
  /** Reject the caller's promise with `error`; the process itself carries on. */
  fail(error: unknown): void;
  /** True until the call is answered, timed out or rejected. */
  readonly pending: boolean;
}
