/**
 * The API's error bodies, shaped like FastAPI's so clients of the original demo keep working:
 *
 * - 422 `{detail: [{type, loc, msg, input}]}` — a field is missing or has the wrong type
 *   (`RequestValidationError`, built by `request-validation.ts`);
 * - 400 `{detail: "..."}` — a value is present but unacceptable (blank or malformed id), or the
 *   layer below rejected the input with an `InvalidInputError`;
 * - 401 / 403 / 404 / 413 / 415 `{detail: "..."}` — auth, host, route, size, media type;
 * - 500 `{detail: "server error: ..."}` — anything else (logged with its stack).
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { InvalidInputError, MnemoError } from '../errors.ts';

/** One FastAPI/pydantic validation issue. */
export interface ValidationIssue {
  type: string;
  loc: (string | number)[];
  msg: string;
  input: unknown;
  ctx?: Record<string, unknown>;
}

/** A request whose fields do not have the declared shape: 422 with every issue found. */
export class RequestValidationError extends Error {
  constructor(readonly issues: ValidationIssue[]) {
    super(issues.map((i) => `${i.loc.join('.')}: ${i.msg}`).join('; '));
    this.name = 'RequestValidationError';
  }
}

/** An error that already knows its status and its `detail` text. */
export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    readonly detail: string,
  ) {
    super(detail);
    this.name = 'HttpError';
  }
}

export interface ErrorBody {
  detail: string | ValidationIssue[];
}

/** The status and body for any thrown value; `logAsError` marks the ones a human should see. */
export function errorResponse(err: unknown, bodyLimit: number): {
  status: number;
  body: ErrorBody;
  logAsError: boolean;
} {
  if (err instanceof RequestValidationError) {
    return { status: 422, body: { detail: err.issues }, logAsError: false };
  }
  if (err instanceof HttpError) {
    return { status: err.statusCode, body: { detail: err.detail }, logAsError: false };
  }
  if (err instanceof InvalidInputError) {
    return { status: 400, body: { detail: err.message }, logAsError: false };
  }
  if (!(err instanceof MnemoError) && isFastifyError(err)) {
    switch (err.code) {
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return {
          status: 413,
          body: { detail: `request body too large (limit ${bodyLimit} bytes)` },
          logAsError: false,
        };
      case 'FST_ERR_CTP_INVALID_JSON_BODY':
        return {
          status: 422,
          body: {
            detail: [
              { type: 'json_invalid', loc: ['body', 0], msg: 'JSON decode error', input: {}, ctx: { error: err.message } },
            ],
          },
          logAsError: false,
        };
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return {
          status: 415,
          body: { detail: 'unsupported media type: send application/json' },
          logAsError: false,
        };
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
        return {
          status: 422,
          body: { detail: [{ type: 'missing', loc: ['body'], msg: 'Field required', input: null }] },
          logAsError: false,
        };
    }
    const status = err.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      return { status, body: { detail: err.message }, logAsError: false };
    }
  }
  const message = err instanceof Error ? err.message : String(err);
  return { status: 500, body: { detail: `server error: ${message}` }, logAsError: true };
}

function isFastifyError(err: unknown): err is FastifyError {
  const code: unknown = err instanceof Error ? (err as Error & { code?: unknown }).code : undefined;
  return typeof code === 'string' && code.startsWith('FST_');
}

/** Installs the error and not-found handlers that produce the bodies above. */
export function installErrorHandlers(app: FastifyInstance, bodyLimit: number): void {
  app.setErrorHandler((err: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const { status, body, logAsError } = errorResponse(err, bodyLimit);
    if (logAsError) request.log.error({ err }, 'request failed');
    else request.log.info({ status, detail: body.detail }, 'request rejected');
    return reply.code(status).send(body);
  });
  app.setNotFoundHandler((_request, reply) => reply.code(404).send({ detail: 'Not Found' }));
}
