/**
 * The server's time limits, apart from server.ts so the command's option parser can name them
 * without loading fastify (`mnemo --help` answers at once).
 */

/** How long a request's headers and body may take to arrive (then 408). */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/** How long a stop waits for turns in flight before it cancels them. */
export const DEFAULT_STOP_TIMEOUT_MS = 10_000;
/** After the stop deadline, how long cancelled turns have to send their 503 before every socket is closed. */
export const STOP_ANSWER_GRACE_MS = 1_000;
/** Requests a minute to `/api/*` per user (or client address, when the request names no user). */
export const DEFAULT_RATE_LIMIT_PER_MINUTE = 600;
/** Chat turns running at once per user. */
export const DEFAULT_MAX_CONCURRENT_TURNS = 4;
