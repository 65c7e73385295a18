import { monotonicClock, type Clock } from '../../clock.ts';

/**
 * A token bucket: `perMinute` requests a minute on average, up to `burst` at once after a quiet
 * spell. `take()` resolves when a token is available (waiting on the injected `sleep`), so the
 * drain never sends faster than the endpoint's quota however much is queued.
 */
export interface RateLimiter {
  take(signal?: AbortSignal): Promise<void>;
}

/** A monotonic clock that can also wait: what spaces requests out (tests pass a fake one). */
export interface Timing extends Clock {
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const realTiming: Timing = {
  now: () => monotonicClock.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve) => {
      if (signal?.aborted) return resolve();
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      }
      signal?.addEventListener('abort', done, { once: true });
    }),
};

export function tokenBucket(perMinute: number, burst: number, timing: Timing = realTiming): RateLimiter {
  const perMs = perMinute / 60_000;
  let tokens = burst;
  let at = timing.now();
  return {
    async take(signal) {
      for (;;) {
        const now = timing.now();
        tokens = Math.min(burst, tokens + (now - at) * perMs);
        at = now;
        if (tokens >= 1) {
          tokens -= 1;
          return;
        }
        if (signal?.aborted) return;
        await timing.sleep(Math.ceil((1 - tokens) / perMs), signal);
      }
    },
  };
}
