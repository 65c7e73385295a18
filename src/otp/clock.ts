/**
 * Where supervisors read time (restart intensity). Milliseconds, monotonic. Tests pass a fake
 * clock (`{ now: () => t }`) and move `t` instead of sleeping.
 */
export interface Clock {
  now(): number;
}

export const monotonicClock: Clock = { now: () => performance.now() };
