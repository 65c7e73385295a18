/**
 * Matching a request's `Authorization: Bearer <token>` against the configured tokens.
 *
 * Every comparison hashes both sides first (SHA-256) and compares the digests with
 * `timingSafeEqual` (equal-length buffers), and every configured token is compared on every
 * request, so the time taken tells neither the length of a token, nor where a guess first
 * differs, nor which token matched.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';

/** What a request's Authorization header holds: nothing, a bearer value, or something else. */
export type PresentedBearer = { kind: 'none' } | { kind: 'bearer'; digest: Buffer } | { kind: 'malformed' };

export function presentedBearer(request: FastifyRequest): PresentedBearer {
  const header = request.headers.authorization;
  if (header === undefined) return { kind: 'none' };
  const match = typeof header === 'string' ? /^Bearer +(\S+) *$/i.exec(header) : null;
  return match?.[1] === undefined ? { kind: 'malformed' } : { kind: 'bearer', digest: tokenDigest(match[1]) };
}

/**
 * The value of the first entry whose token the digest matches, else `undefined`. All entries
 * are compared, whatever matched first.
 */
export function matchToken<T>(digest: Buffer, entries: readonly (readonly [Buffer, T])[]): T | undefined {
  let found: T | undefined;
  for (const [expected, value] of entries) {
    if (timingSafeEqual(digest, expected) && found === undefined) found = value;
  }
  return found;
}

export function tokenDigest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}
