/**
 * Optional bearer-token guard, installed on the API's routes only. With a token configured,
 * every API request must carry `Authorization: Bearer <token>`; otherwise it gets 401 and
 * nothing runs. The page and its static files stay public (they hold no data) so a browser can
 * load the page and then ask its user for the token.
 *
 * The comparison hashes both sides first, so it takes the same time whatever the length or
 * the position of the first differing byte.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from './server-errors.ts';

export function bearerTokenHook(token: string): (request: FastifyRequest, reply: FastifyReply) => Promise<void> {
  const expected = digest(token);
  return async (request, reply) => {
    const header = request.headers.authorization;
    const match = typeof header === 'string' ? /^Bearer +(\S+) *$/i.exec(header) : null;
    if (match?.[1] !== undefined && timingSafeEqual(digest(match[1]), expected)) return;
    reply.header('www-authenticate', 'Bearer realm="mnemo"');
    throw new HttpError(401, header === undefined ? 'missing bearer token' : 'invalid bearer token');
  };
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}
