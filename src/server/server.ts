/**
 * The HTTP server: the JSON API (`api-routes.ts`) and the chat page (`static-assets.ts`) on
 * fastify 5, over service objects handed in by the caller (no globals).
 *
 * Safety, all on by default:
 * - request bodies above `bodyLimit` (1 MiB) get 413; only `application/json` bodies are parsed;
 * - a request whose headers and body have not all arrived within `requestTimeoutMs` (30 s)
 *   gets 408 and its connection is closed (a body trickled a byte at a time cannot hold a
 *   connection, or a graceful stop, forever);
 * - who may do what (authorization.ts): every route declares its `access` (`public`,
 *   `authenticated`, `user`, `operator`; undeclared: `operator`); the caller is the admin
 *   token, a user token (`userTokens`: acts for its own `user_id` only, else 403), the shared
 *   `token` (any user), a trusted proxy's user header (`trustUserHeader`), or anonymous (401
 *   wherever a token is needed);
 * - `GET /api/runtime` is an operator route (never a user token) and names conversations only
 *   for `Authorization: Bearer <adminToken>`;
 * - a POST, PUT, PATCH or DELETE needs `Content-Type: application/json` or `X-Mnemo-Request`,
 *   else 403 `csrf_header_required` (cross-site-guard.ts: another site's page cannot send either);
 * - with `loopbackOnly`, a request whose `Host` is not a loopback name gets 403 (DNS rebinding);
 * - the page is served from a fixed allow-list with a strict Content-Security-Policy;
 * - no CORS headers, so other origins cannot read answers.
 *
 * MCP (mcp-route.ts): `POST /mcp` serves the caller's own memory over Streamable HTTP, the
 * user taken from the credentials as on `/api/*`.
 *
 * Operations (ops-routes.ts): `/healthz` and `/readyz` need no token and reveal nothing;
 * `/metrics` (Prometheus, metrics.ts) is an operator route; `/openapi.json` is generated from
 * the routes' schemas (api-schemas.ts).
 * Every request has an id (`x-request-id` if the client sent a plain one, else a UUID),
 * answered in `x-request-id` and carried as `reqId` by every log line written for it.
 *
 * `startServer` listens and returns a handle whose `close()` stops accepting and waits for the
 * requests in flight (a chat turn finishes and is stored) before it resolves; a turn still
 * running `stopTimeoutMs` (10 s) after `close()` began is cancelled (stored as interrupted,
 * answered 503 `turn_interrupted`), a request still arriving then (a trickled upload) is cut,
 * and one second later every socket left is closed, so no client can hold a stop.
 */
import { randomUUID } from 'node:crypto';
import { InvalidInputError } from '../errors.ts';
import type { AddressInfo } from 'node:net';
import swagger from '@fastify/swagger';
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyServerOptions } from 'fastify';
import { registerApiRoutes } from './api-routes.ts';
import { registerMcpRoute } from './mcp-route.ts';
import { validated } from './api-schemas.ts';
import { createServerMetrics, type ServerMetrics } from './metrics.ts';
import { registerExtractionRoutes, registerMetricsRoute, registerProbeRoutes } from './ops-routes.ts';
import { installAuthorization, replaceUserTokens } from './authorization.ts';
import { installCrossSiteGuard } from './cross-site-guard.ts';
import { clientErrorHandler, errorCodeOf, errorResponse, installErrorHandlers } from './server-errors.ts';
import { trackIdleSockets } from './idle-sockets.ts';
import { installJsonBodyParser } from './json-body.ts';
import {
  DEFAULT_MAX_CONCURRENT_TURNS,
  DEFAULT_RATE_LIMIT_PER_MINUTE,
  DEFAULT_REQUEST_TIMEOUT_MS,
  DEFAULT_STOP_TIMEOUT_MS,
  STOP_ANSWER_GRACE_MS,
} from './server-defaults.ts';
import { installRateLimit } from './rate-limit.ts';
import { turnSlots } from './turn-slots.ts';
import { ID_MAX_CHARS } from '../recall/recall-ids.ts';
import { SERVER_STOPPING } from './turn-signal.ts';
import { installLoopbackHostGuard, isLoopbackHost } from './loopback-host.ts';
import type { RecallApi, RuntimeView } from './services.ts';
import { loadStaticAssets, registerStaticAssets } from './static-assets.ts';
import { SECURITY_HEADERS } from './security-headers.ts';

/** The default `bodyLimit`: 1 MiB. */
export const DEFAULT_BODY_LIMIT = 1024 * 1024;

/**
 * What `createServer` (and `startServer`) takes: the services to serve and the safety settings (see
 * above for each default).
 */
export interface ServerOptions {
  /** The layered memory the API serves: `runtime.recall`, or a `createRecall` service. */
  recall: RecallApi;
  /**
   * The runtime the operator routes look at (`/readyz`, `/metrics`, `GET /api/runtime`): a
   * `Runtime` will do.
   */
  runtime: RuntimeView;
  /** The shared token: `Authorization: Bearer <token>` acts for any user on `/api/*`. Default: none. */
  token?: string | null;
  /** The operator's token: the operator routes (`/metrics`, `GET /api/runtime` with
   *  conversation names) and everything else, for any user. Default: none. */
  adminToken?: string | null;
  /** Token → user id: each token acts for its own user only (another `user_id` is 403); can be
   *  replaced while running (`RunningServer.replaceUserTokens`) when given. Default: none. */
  userTokens?: ReadonlyMap<string, string> | null;
  /** Trusted-header mode (a reverse proxy; see authorization.ts): the request carrying `token`
   *  acts as the user named in this header. Default: off. */
  trustUserHeader?: string | null;
  /** Largest accepted request body in bytes. Default 1 MiB. */
  bodyLimit?: number;
  /** Answer only requests whose `Host` is a loopback name. Default false (`startServer`
   *  turns it on when it binds a loopback address). */
  loopbackOnly?: boolean;
  /** fastify's logger option: `false` for none, `true` for JSON lines on stdout. Default false. */
  logger?: FastifyServerOptions['logger'];
  /** Requests a minute to `/api/*` per user (rate-limit.ts), then 429 `rate_limited`; 0: no
   *  limit. Default 600. */
  rateLimitPerMinute?: number;
  /** Chat turns (streamed or not) running at once per user (turn-slots.ts), then 429
   *  `too_many_turns`. Default 4. */
  maxConcurrentTurns?: number;
  /** Time to receive a whole request, headers and body; then 408. Default 30 000 ms. */
  requestTimeoutMs?: number;
  /** The stop deadline: when it fires, chat turns still running are cancelled, requests still
   *  arriving are cut, and every socket is closed a second later. Default: never. */
  stopSignal?: AbortSignal;
  /** What `/metrics` shows. Default: a fresh registry of this server's own (turns, errors,
   *  live conversations, restarts); share one with the runtime (`writeObserver`) and the
   *  model (`observeLlm`) to count appends, commits and model calls too. */
  metrics?: ServerMetrics;
}

/**
 * The longest path parameter routed (longer: 414). The router measures a segment with the
 * characters it keeps percent-encoded (`/`, `%`, `?`, `#`, ...) still three characters each, so
 * an id of `ID_MAX_CHARS` such characters must fit.
 */
const MAX_PARAM_LENGTH = ID_MAX_CHARS * 3;

/** A client's own `x-request-id` is kept only when it is this plain (it goes into logs). */
const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The fastify app of the API and the chat page, not listening (for `app.inject` in tests, or to add
 * routes). Use `startServer` to serve it.
 *
 * @throws `InvalidInputError` `invalid_option` for a bad `rateLimitPerMinute` or
 * `maxConcurrentTurns`.
 * @throws `AuthorizationConfigError` (`invalid_auth_config`) for `trustUserHeader` without
 * `token`, or a user token equal to the shared or admin token.
 */
export function createServer(options: ServerOptions): FastifyInstance {
  const bodyLimit = options.bodyLimit ?? DEFAULT_BODY_LIMIT;
  const requestTimeout = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const metrics = options.metrics ?? createServerMetrics();
  const runtimeView = options.runtime;
  const app = Fastify({
    logger: options.logger ?? false,
    bodyLimit,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // Node's requestTimeout covers receiving the request only, never the time to answer it,
    // so a long turn is not cut short. Node checks it every connectionsCheckingInterval
    // (30 s by default, which would stretch a short timeout), hence the finer interval.
    requestTimeout,
    http: {
      headersTimeout: Math.min(60_000, requestTimeout),
      connectionsCheckingInterval: Math.max(10, Math.min(1_000, Math.floor(requestTimeout / 4))),
    },
    requestIdHeader: false,
    genReqId: (request) => {
      const sent = request.headers['x-request-id'];
      return typeof sent === 'string' && CLIENT_REQUEST_ID.test(sent) ? sent : randomUUID();
    },
    // One line per request from our own hook below instead of fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    // Errors found while routing (a malformed URL, a path parameter over MAX_PARAM_LENGTH)
    // get the same `{detail}` bodies as everything else.
    frameworkErrors: (err, _request, reply) => {
      const { status, body } = errorResponse(err, bodyLimit);
      metrics.error(errorCodeOf(err, status, body), status);
      void (reply as FastifyReply).headers(SECURITY_HEADERS).code(status).send(body);
    },
    // Requests Node's parser refuses before routing (raw non-ASCII in the URL): `{detail}` too.
    clientErrorHandler,
  });

  // JSON only: a cross-site <form> can post text/plain without a preflight, so refuse it.
  app.removeContentTypeParser('text/plain');
  installJsonBodyParser(app);
  metrics.trackLiveConversations(() => runtimeView.liveConversations ?? 0);
  const extractionStatus = options.recall.extractionStatus?.bind(options.recall);
  if (extractionStatus !== undefined) metrics.trackExtraction(extractionStatus);
  const embeddingsStatus = options.recall.embeddingsStatus?.bind(options.recall);
  if (embeddingsStatus !== undefined) metrics.trackEmbeddings(() => embeddingsStatus());
  const stopTracking = runtimeView.events ? metrics.trackRestarts(runtimeView.events, runtimeView.name) : () => {};
  app.addHook('onClose', async () => stopTracking());
  installErrorHandlers(app, bodyLimit, (code, status) => metrics.error(code, status));
  // Once closing, idle sockets are destroyed and every answer ends its connection: Node only
  // closes connections that are idle when close() starts, so a keep-alive socket whose turn
  // was in flight, or a preconnected one, would otherwise hold close() open until the client
  // dropped it.
  const idleSockets = trackIdleSockets(app.server);
  app.addHook('preClose', async () => idleSockets.closeAll());
  // The stop deadline: an upload still arriving is cut now, every other socket once the
  // cancelled turns have had STOP_ANSWER_GRACE_MS to answer (idle-sockets.ts).
  options.stopSignal?.addEventListener('abort', () => idleSockets.deadline(STOP_ANSWER_GRACE_MS), { once: true });
  app.addHook('onSend', async (request, reply, payload) => {
    reply.headers(SECURITY_HEADERS);
    reply.header('x-request-id', request.id);
    if (idleSockets.closing) reply.header('connection', 'close');
    return payload;
  });
  if (options.loopbackOnly) installLoopbackHostGuard(app);
  app.addHook('onResponse', async (request, reply) => {
    // The route pattern, not the URL: query strings carry user ids and search keywords.
    const route = request.routeOptions.url ?? '(no route)';
    const quiet = route === '/api/runtime' || !route.startsWith('/api');
    request.log[quiet ? 'debug' : 'info'](
      { method: request.method, route, status: reply.statusCode, ms: Math.round(reply.elapsedTime) },
      'request',
    );
  });

  const token = options.token ?? null;
  const adminToken = options.adminToken ?? null;
  const userTokens = options.userTokens ?? null;
  // Before any route: it gives each its access (undeclared: operator) and checks every request.
  installAuthorization(app, { token, adminToken, userTokens, trustUserHeader: options.trustUserHeader ?? null });
  installCrossSiteGuard(app);
  registerStaticAssets(app, loadStaticAssets());
  const anyToken = token !== null || adminToken !== null || (userTokens !== null && userTokens.size > 0);
  // Before the routes: it collects them as they are added.
  void app.register(swagger, {
    openapi: {
      info: { title: 'Mnemo', version: '0.1.0', description: 'Durable, supervised conversation memory for AI agents' },
      ...(!anyToken ? {} : { components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } }, security: [{ bearer: [] }] }),
    },
  });
  void app.register(async (ops) => {
    validated(ops);
    registerProbeRoutes(ops, runtimeView);
    registerMetricsRoute(ops, metrics);
    registerExtractionRoutes(ops, options.recall);
  });
  const rate = options.rateLimitPerMinute ?? DEFAULT_RATE_LIMIT_PER_MINUTE;
  const concurrentTurns = options.maxConcurrentTurns ?? DEFAULT_MAX_CONCURRENT_TURNS;
  for (const [name, value, least] of [['rateLimitPerMinute', rate, 0], ['maxConcurrentTurns', concurrentTurns, 1]] as const) {
    if (!Number.isSafeInteger(value) || value < least) throw new InvalidInputError('invalid_option', `${name} must be an integer >= ${least}, got ${value}`, { option: name });
  }
  void app.register(async (api) => {
    validated(api);
    // Before the routes: it adds its hook to each as it is added.
    await installRateLimit(api, rate);
    registerApiRoutes(api, {
      recall: options.recall,
      runtime: options.runtime,
      turns: turnSlots(concurrentTurns),
      onTurn: (seconds, outcome) => metrics.turn(seconds, outcome),
      ...(options.stopSignal ? { stopSignal: options.stopSignal } : {}),
    });
    registerMcpRoute(api, options.recall);
  });
  return app;
}

/** A listening server, from `startServer`. */
export interface RunningServer {
  /** The fastify app. */
  app: FastifyInstance;
  /** `http://host:port` as bound (the real port when 0 was asked for). */
  url: string;
  /** The address bound. */
  host: string;
  /** The port bound (the real one when 0 was asked for). */
  port: number;
  /** Whether requests must name a loopback host. */
  loopbackOnly: boolean;
  /** Stops accepting, waits for requests in flight (cancelling the turns still running after
   *  the stop timeout), then resolves. Idempotent. */
  close(): Promise<void>;
  /** Puts new user tokens in place for every request from now on (authorization.ts's
   *  `replaceUserTokens`: only for a server started with user tokens; throws otherwise). */
  replaceUserTokens(tokens: ReadonlyMap<string, string>): void;
}

/**
 * Creates the server (`createServer`) and listens on `host:port`; a loopback `host` turns
 * `loopbackOnly` on. Resolves once listening.
 *
 * @throws What `createServer` throws; the listen error (`EADDRINUSE`, ...) as Node gives it.
 *
 * @example
 * ```ts
 * import { startRuntime } from 'mnemo';
 * import { startServer } from 'mnemo/server';
 *
 * const runtime = await startRuntime({ dataDir: './data' });
 * const server = await startServer({ recall: runtime.recall, runtime, host: '127.0.0.1', port: 8000 });
 * console.log(`chat page at ${server.url}/`);
 * // on shutdown: finish the requests in flight, then stop the runtime
 * await server.close();
 * await runtime.stop();
 * ```
 */
export async function startServer(
  options: Omit<ServerOptions, 'loopbackOnly' | 'stopSignal'> & {
    host: string;
    port: number;
    loopbackOnly?: boolean;
    /** How long `close()` lets turns in flight run before cancelling them. Default 10 000 ms. */
    stopTimeoutMs?: number;
  },
): Promise<RunningServer> {
  const loopbackOnly = options.loopbackOnly ?? isLoopbackHost(options.host);
  const stopping = new AbortController();
  const app = createServer({ ...options, loopbackOnly, stopSignal: stopping.signal });
  await app.listen({ host: options.host, port: options.port });
  const address = app.server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  let closing: Promise<void> | undefined;
  return {
    app,
    url: `http://${host}:${address.port}`,
    host: address.address,
    port: address.port,
    loopbackOnly,
    replaceUserTokens: (tokens) => replaceUserTokens(app, tokens),
    close: () =>
      (closing ??= (async () => {
        const deadline = setTimeout(() => stopping.abort(SERVER_STOPPING), options.stopTimeoutMs ?? DEFAULT_STOP_TIMEOUT_MS);
        try {
          await app.close();
        } finally {
          clearTimeout(deadline);
        }
      })()),
  };
}
