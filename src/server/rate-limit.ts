/**
 * A request rate per user on `/api/*` (@fastify/rate-limit): at most `perMinute` requests in a
 * minute's window, then 429 `{detail, code: 'rate_limited'}` with `Retry-After` (seconds) and
 * the `x-ratelimit-*` headers. The page, the probes and `/metrics` are not counted.
 *
 * Counted per user the request acts for: a user token's (or trusted header's) user, else the
 * `user_id` the request names (with the shared token or an open API ids are self-asserted, so a
 * caller that names many users gets a budget for each: the limit bounds what one user can
 * cause, not a flood), else the client address. It runs once the request is read and checked
 * (`preHandler`), so it knows the user; a refused request costs no handler. Counts live in the
 * process's memory (an LRU of 5,000 keys): a restart or a second process starts afresh.
 */
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { HttpError } from './server-errors.ts';

export async function installRateLimit(api: FastifyInstance, perMinute: number): Promise<void> {
  if (perMinute === 0) return;
  const quiet = { 'x-ratelimit-limit': false, 'x-ratelimit-remaining': false, 'x-ratelimit-reset': false } as const;
  await api.register(rateLimit, {
    global: true,
    max: perMinute,
    timeWindow: 60_000,
    hook: 'preHandler',
    keyGenerator: rateKey,
    // Answers within the limit keep their headers as before (the Demo's clients compare them).
    addHeadersOnExceeding: quiet,
    errorResponseBuilder: (_request, context) =>
      new HttpError(429, `too many requests: at most ${context.max} a minute per user; retry in ${context.after}`, 'rate_limited'),
  });
}

function rateKey(request: FastifyRequest): string {
  const principal = request.principal;
  if (principal.kind === 'user') return `user:${principal.userId}`;
  for (const place of [request.body, request.query, request.params]) {
    const named = place !== null && typeof place === 'object' ? (place as { user_id?: unknown }).user_id : undefined;
    if (typeof named === 'string' && named !== '') return `user:${named}`;
  }
  return `addr:${request.ip}`;
}
