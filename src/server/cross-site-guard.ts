/**
 * Refusing requests another site's page could make. A browser sends a "simple" cross-site
 * request (a POST with no body, or with a form's content type) without asking first: the
 * missing CORS headers keep the answer from that page, but not the request from running, and
 * on an open server (no token) nothing else stops it.
 *
 * So a state-changing request (POST, PUT, PATCH, DELETE) must carry `Content-Type:
 * application/json` or the header `X-Mnemo-Request` (any value; the page sends `1`): either
 * makes a browser ask the server first (a CORS preflight), which this server never approves.
 * Without both it is 403 `{detail, code: 'csrf_header_required'}`, checked in `onRequest`
 * after the token (so a caller without one still learns it needs one), before the body is
 * read or anything runs. Requests for routes that do not exist keep their 404.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { HttpError } from './server-errors.ts';

export const CUSTOM_REQUEST_HEADER = 'x-mnemo-request';

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Whether `request` is one no other site's page could have made without a preflight. */
export function carriesSameSiteProof(request: FastifyRequest): boolean {
  if (!STATE_CHANGING.has(request.method)) return true;
  if (request.headers[CUSTOM_REQUEST_HEADER] !== undefined) return true;
  const type = request.headers['content-type'];
  return typeof type === 'string' && type.split(';')[0]!.trim().toLowerCase() === 'application/json';
}

/** Installs the check; call after `installAuthorization`. */
export function installCrossSiteGuard(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    if (request.is404 || carriesSameSiteProof(request)) return;
    throw new HttpError(
      403,
      `a ${request.method} needs Content-Type: application/json or the header X-Mnemo-Request: 1 (so that no other site's page can send it)`,
      'csrf_header_required',
    );
  });
}
