/**
 * Optional bearer-token guard, installed on the API's routes only. With a token configured,
 * every API request must carry `Authorization: Bearer <token>`; otherwise it gets 401 and
 * nothing runs. The page and its static files stay public (they hold no data) so a browser can
 * load the page and then ask its user for the token.
 *
 * An admin token (`adminToken` of the server) is accepted wherever the API token is, and is
 * what `GET /api/runtime` needs to show conversation names.
 *
 * The comparison hashes both sides first, so it takes the same time whatever the length or
 * the position of the first differing byte.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from './server-errors.ts';

/** Accepts a request that presents any of `tokens` (the API token, or the admin token). */
export function bearerTokenHook(...tokens: string[]): (request: FastifyRequest, reply: FastifyReply) => Promise<void> {
  const checks = tokens.map(bearerCheck);
  return async (request, reply) => {
    const header = request.headers.authorization;
    // Every check runs, so the time does not tell which token matched.
    if (checks.map((presents) => presents(request)).includes(true)) return;
    reply.header('www-authenticate', 'Bearer realm="mnemo"');
    throw new HttpError(401, header === undefined ? 'missing bearer token' : 'invalid bearer token');
  };
}

/** Whether a request carries `Authorization: Bearer <token>`, compared in constant time. */
export function bearerCheck(token: string): (request: FastifyRequest) => boolean {
  const expected = digest(token);
  return (request) => {
    const header = request.headers.authorization;
    const match = typeof header === 'string' ? /^Bearer +(\S+) *$/i.exec(header) : null;
    return match?.[1] !== undefined && timingSafeEqual(digest(match[1]), expected);
  };
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}
