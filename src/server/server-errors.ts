/**
 * The API's error bodies, shaped like FastAPI's so clients of the original demo keep working:
 *
 * - 422 `{detail: [{type, loc, msg, input}]}` — a field is missing or has the wrong type
 *   (`RequestValidationError`, built by `request-validation.ts`); `input` is echoed only when
 *   small and shallow (≤ 8 levels, ≤ 1 KiB), else described, so no input can make the answer
 *   itself fail; a `__proto__` key gets `json_forbidden_key`;
 * - 400 `{detail: "..."}` — a value is present but unacceptable (blank or malformed id), or the
 *   layer below rejected the input with an `InvalidInputError`;
 * - 409 `{detail, code: 'memory_conflict'}` — a long-term memory update from a stale version;
 * - 409 / 404 `{detail, code}` — a fork's new session id is taken (`fork_target_exists`), or
 *   the row to branch at does not exist (`fork_point_missing`);
 * - 401 / 403 / 404 / 408 / 413 / 415 / 431 `{detail: "..."}` — auth, host, route, time, size,
 *   media type, header size;
 * - 409 `{detail, code: 'user_erasing'}` — the request names a user whose erasure is running;
 * - 429 / 422 `{detail, code}` — a limit (see the README's Limits): `rate_limited`,
 *   `too_many_turns`, `session_limit`, `fork_limit` (429), `search_terms_limit` (422);
 * - 502 / 503 / 504 / 429 `{detail, code}` — the model failed (an `LlmError`, see
 *   `LLM_STATUS`) or the turn was cut short by a stop (`turn_interrupted`, 503). The detail
 *   is the code's fixed sentence (`LLM_ERROR_SENTENCES`, the one the failed turn's row stores):
 *   the provider's own words can carry a masked key, an account or an internal URL, so they go
 *   only to the log, with the whole error;
 * - 503 / 507 / 500 `{detail, code}` — the storage failed (`StorageError`, see `STORAGE_STATUS`):
 *   503 while it is unreachable or closing (retry, on this server or another), 507 when full;
 *   503 `recall_unavailable` for a runtime without the layered memory. The detail is a fixed
 *   sentence (a driver's message can name a host or a path); the whole error goes to the log;
 * - 500 `{detail: "server error: ..."}` — anything else (logged with its stack).
 *
 * A request Node's HTTP parser refuses before fastify sees it (raw non-ASCII bytes in the URL,
 * as `curl 'host/search?keyword=咖啡'` sends, oversized headers, a garbled request line) gets
 * the same `{detail}` shape from `clientErrorHandler`, written straight to the socket.
 */
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { InvalidInputError, MnemoError } from '../errors.ts';
import { ForkError } from '../memory/contract/fork.ts';
import { LlmError, type LlmErrorCode } from '../llm/llm-errors.ts';
import { TurnInterruptedError } from '../recall/chat/turn-interrupted.ts';
import { FactConflictError, FactNotFoundError } from '../recall/facts/fact-errors.ts';
import { RecallLimitError, RecallUnavailableError, UserErasingError } from '../recall/recall-errors.ts';
import { StorageError, type StorageErrorCode } from '../memory/contract/memory-errors.ts';
import { drainRefusedBody } from './refused-body.ts';

/** One FastAPI/pydantic validation issue. */
export interface ValidationIssue {
  /** The issue's kind (`missing`, `string_type`, ...), as pydantic names it. */
  type: string;
  /** Where: `['body', 'user_id']`, `['query', 'limit']`. */
  loc: (string | number)[];
  /** What is wrong, in words. */
  msg: string;
  /** The value found there. */
  input: unknown;
  /** More about the rule broken (a limit, a pattern). */
  ctx?: Record<string, unknown>;
}

/** A request whose fields do not have the declared shape: 422 with every issue found. */
export class RequestValidationError extends Error {
  constructor(
    /** Every issue found. */
    readonly issues: ValidationIssue[],
  ) {
    super(issues.map((i) => `${i.loc.join('.')}: ${i.msg}`).join('; '));
    this.name = 'RequestValidationError';
  }
}

/** An error that already knows its status and its `detail` text. */
export class HttpError extends Error {
  constructor(
    /** The HTTP status to answer with. */
    readonly statusCode: number,
    /** The body's `detail`. */
    readonly detail: string,
    /** A stable code for the body (`forbidden`), when the status alone is not enough. */
    readonly code?: string,
  ) {
    super(detail);
    this.name = 'HttpError';
  }
}

export interface ErrorBody {
  detail: string | ValidationIssue[];
  /** Present for model failures, interrupted turns and erasures: the stable code behind the status. */
  code?: string;
}

/** The status of a model failure, by `LlmError` code; the detail is the code's own sentence. */
const LLM_STATUS: Readonly<Record<LlmErrorCode, number>> = {
  llm_auth: 502,
  llm_rate_limited: 429,
  llm_bad_request: 502,
  llm_unavailable: 503,
  llm_timeout: 504,
  llm_aborted: 503,
  llm_error: 502,
};

/** The status and fixed sentence of each storage failure a request can meet. */
const STORAGE_STATUS: Partial<Record<StorageErrorCode, [number, string]>> = {
  storage_unavailable: [503, 'the storage is unreachable; retry shortly'],
  store_closed: [503, 'the server is stopping; retry on another'],
  write_aborted: [503, 'the write was aborted before it was stored; retry'],
  write_conflict: [503, 'another writer came first; retry'],
  storage_full: [507, 'the storage is full'],
};

/** The status and body for any thrown value; `logAsError` marks the ones a human should see. */
export function errorResponse(err: unknown, bodyLimit: number): {
  status: number;
  body: ErrorBody;
  logAsError: boolean;
} {
  if (err instanceof RequestValidationError) {
    return { status: 422, body: { detail: err.issues.map((i) => ({ ...i, input: boundedInput(i.input) })) }, logAsError: false };
  }
  if (err instanceof HttpError) {
    return { status: err.statusCode, body: err.code === undefined ? { detail: err.detail } : { detail: err.detail, code: err.code }, logAsError: false };
  }
  if (err instanceof InvalidInputError) {
    return { status: 400, body: { detail: err.message }, logAsError: false };
  }
  if (err instanceof FactConflictError) {
    return { status: 409, body: { detail: err.message, code: err.code }, logAsError: false };
  }
  if (err instanceof FactNotFoundError) {
    return { status: 404, body: { detail: err.message }, logAsError: false };
  }
  if (err instanceof UserErasingError) {
    return { status: 409, body: { detail: 'this user is being erased; retry when the erasure has finished', code: err.code }, logAsError: false };
  }
  if (err instanceof RecallLimitError) {
    // Too many terms is a request too big to run (422); too many sessions or forks, a quota (429).
    return { status: err.code === 'search_terms_limit' ? 422 : 429, body: { detail: err.message, code: err.code }, logAsError: false };
  }
  if (err instanceof ForkError) {
    // The new session id is taken (409), or the row to branch at does not exist (404).
    return { status: err.code === 'fork_target_exists' ? 409 : 404, body: { detail: err.message, code: err.code }, logAsError: false };
  }
  if (err instanceof TurnInterruptedError) {
    return { status: 503, body: { detail: 'the server is stopping: the turn was interrupted', code: err.code }, logAsError: false };
  }
  if (err instanceof StorageError) {
    const [status, detail] = STORAGE_STATUS[err.code] ?? [500, 'the storage failed'];
    return { status, body: { detail, code: err.code }, logAsError: true };
  }
  if (err instanceof RecallUnavailableError) {
    return { status: 503, body: { detail: 'this server runs without the layered memory', code: err.code }, logAsError: true };
  }
  if (err instanceof LlmError) {
    return { status: LLM_STATUS[err.code] ?? 502, body: { detail: err.sentence, code: err.code }, logAsError: true };
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

/** Deeper than this, an echoed input is replaced by a note (serializing it could overflow the stack). */
const MAX_ECHO_DEPTH = 8;
/** Longer than this (serialized), an echoed input is replaced by a note. */
const MAX_ECHO_CHARS = 1024;

/** The input as echoed in a 422: itself when small and shallow, else a short description. */
function boundedInput(input: unknown): unknown {
  if (input === null || typeof input !== 'object') {
    return typeof input === 'string' && input.length > MAX_ECHO_CHARS ? `${input.slice(0, MAX_ECHO_CHARS)}…` : input;
  }
  // Iterative, so the check itself cannot overflow.
  const stack: [unknown, number][] = [[input, 1]];
  let nodes = 0;
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (value === null || typeof value !== 'object') continue;
    if (depth > MAX_ECHO_DEPTH) return `(${Array.isArray(input) ? 'an array' : 'an object'} nested deeper than ${MAX_ECHO_DEPTH} levels, not echoed)`;
    if (++nodes > MAX_ECHO_CHARS) break;
    for (const child of Object.values(value)) stack.push([child, depth + 1]);
  }
  if (nodes > MAX_ECHO_CHARS || JSON.stringify(input).length > MAX_ECHO_CHARS) {
    return `(${Array.isArray(input) ? 'an array' : 'an object'} too large to echo)`;
  }
  return input;
}

function isFastifyError(err: unknown): err is FastifyError {
  const code: unknown = err instanceof Error ? (err as Error & { code?: unknown }).code : undefined;
  return typeof code === 'string' && code.startsWith('FST_');
}

/**
 * The stable code an error answer is counted under (`mnemo_http_errors_total`): the body's
 * `code`, `validation_error` for a 422, a `MnemoError`'s or fastify's own code, else
 * `http_<status>` (`http_500` for the unexpected).
 */
export function errorCodeOf(err: unknown, status: number, body: ErrorBody): string {
  if (body.code !== undefined) return body.code;
  if (status === 422) return 'validation_error';
  if (err instanceof MnemoError) return err.code;
  if (isFastifyError(err)) return err.code;
  return `http_${status}`;
}

/** Installs the error and not-found handlers that produce the bodies above; `onError` counts them. */
export function installErrorHandlers(app: FastifyInstance, bodyLimit: number, onError?: (code: string, status: number) => void): void {
  app.setErrorHandler((err: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const { status, body, logAsError } = errorResponse(err, bodyLimit);
    onError?.(errorCodeOf(err, status, body), status);
    if (logAsError) request.log.error({ err }, 'request failed');
    else request.log.info({ status, detail: body.detail }, 'request rejected');
    if (status === 413) drainRefusedBody(request.raw);
    return reply.code(status).send(body);
  });
  app.setNotFoundHandler((_request, reply) => {
    onError?.('not_found', 404);
    return reply.code(404).send({ detail: 'Not Found' });
  });
}

/** The status and `detail` for a request the HTTP parser refused (Node's `clientError`). */
export function clientErrorResponse(err: NodeJS.ErrnoException & { reason?: string }): { status: number; detail: string } {
  switch (err.code) {
    case 'HPE_INVALID_URL':
      return {
        status: 400,
        detail: 'invalid URL: only ASCII is allowed, percent-encode anything else (curl: -G --data-urlencode)',
      };
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, detail: 'request headers too large' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, detail: 'request timeout' };
    default:
      return { status: 400, detail: `bad request: ${err.reason ?? err.message}` };
  }
}

/**
 * fastify's `clientErrorHandler`: answers in the `{detail}` shape (fastify's default body is
 * `{error, message, statusCode}`), then closes the connection, as Node and fastify do.
 */
export function clientErrorHandler(
  this: FastifyInstance,
  err: NodeJS.ErrnoException & { reason?: string },
  socket: Duplex,
): void {
  // A reset connection has nobody left to answer.
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const { status, detail } = clientErrorResponse(err);
  // Debug, as fastify's own handler (trace): port scanners and broken proxies send these too.
  this.log.debug({ status, detail, code: err.code }, 'request refused by the HTTP parser');
  if (socket.writable) {
    const body = JSON.stringify({ detail } satisfies ErrorBody);
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `X-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}
