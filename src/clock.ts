/**
 * Where Mnemo reads time: one interface, milliseconds. Which time is the instance's: the
 * system's calendar clock (`systemClock`, `Date.now()`: what records are stamped with, what
 * retries and TTLs count from) or a monotonic one (`monotonicClock`, `performance.now()`: what
 * supervisors measure restart intensity with, what a rate limiter spaces requests with). Tests
 * inject a clock they move themselves instead of sleeping.
 */
export interface Clock {
  /** The current time in milliseconds. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/**
 * `performance.now()`: never steps back with the system clock. What supervisors measure restart
 * intensity with.
 */
export const monotonicClock: Clock = { now: () => performance.now() };
