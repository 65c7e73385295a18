/**
 * The operators' routes:
 *
 *   GET /healthz       → 200 {status: 'ok'}          the process answers (liveness); public
 *   GET /readyz        → 200 {status: 'ready', checks} | 503 {status: 'not_ready', checks}
 *                        checks: {tree: running|stopped, storage: open|closed, writable}; public
 *   GET /metrics       → Prometheus text (metrics.ts); operator (authorization.ts)
 *   GET /fact-extraction → {pending, retrying, dead, dead_jobs}: background fact extraction's
 *                        queue and its dead-lettered jobs (recall's `extractionStatus`); operator;
 *                        `dead_jobs` (user and session ids) only for the admin token, the
 *                        counts alone for anyone else the route admits
 *   POST /fact-extraction/retry?user_id= → {requeued}: the dead-lettered jobs (of that user, else
 *                        all) back in the queue, attempts reset; operator
 *   GET /openapi.json  → the OpenAPI 3 document of every route (@fastify/swagger); public
 *
 * The probes say only what an orchestrator needs: no path, no id, no error text beyond a code.
 */
import { extractionBody } from '../recall/demo-shapes.ts';
import type { FastifyInstance } from 'fastify';
import type { ServerMetrics } from './metrics.ts';
import type { RecallApi, RuntimeView } from './services.ts';
import { errorBody } from './api-schemas.ts';

const probeSchema = (summary: string, extra: Record<string, unknown> = {}) => ({ summary, tags: ['operations'], ...extra });

// What each answers (/openapi.json; test/server/openapi-responses.test.ts checks real answers).
const str = { type: 'string' } as const;
const int = { type: 'integer' } as const;
const refused = { 401: errorBody, 403: errorBody };
const health = { 200: { type: 'object', properties: { status: { type: 'string', enum: ['ok'] } }, required: ['status'] } };
const readiness = {
  type: 'object',
  properties: {
    status: { type: 'string', enum: ['ready', 'not_ready'] },
    checks: { type: 'object', properties: { tree: str, storage: str, writable: { type: 'boolean' }, error: str }, required: ['tree', 'storage', 'writable'] },
  },
  required: ['status', 'checks'],
};
const deadJob = {
  type: 'object',
  properties: {
    user_id: str,
    session_id: str,
    reply_id: int,
    message_ids: { type: 'array', items: int },
    attempts: int,
    last_error: { type: 'object', properties: { code: str, message: str }, required: ['code', 'message'] },
    queued_at: str,
    dead_at: str,
  },
  required: ['user_id', 'session_id', 'reply_id', 'message_ids', 'attempts', 'last_error', 'queued_at', 'dead_at'],
};
const extraction = {
  200: {
    type: 'object',
    description: '`dead_jobs` for the admin token only',
    properties: { pending: int, retrying: int, dead: int, dead_jobs: { type: 'array', items: deadJob } },
    required: ['pending', 'retrying', 'dead'],
  },
  ...refused,
};
const requeued = { 200: { type: 'object', properties: { requeued: int }, required: ['requeued'] }, ...refused };

export function registerProbeRoutes(app: FastifyInstance, runtime: RuntimeView): void {
  app.get('/healthz', { config: { access: 'public' }, schema: probeSchema('Liveness: the process answers', { security: [], response: health }) }, async () => ({ status: 'ok' }));
  app.get('/readyz', { config: { access: 'public' }, schema: probeSchema('Readiness: tree running, storage open and writable', { security: [], response: { 200: readiness, 503: readiness } }) }, async (_request, reply) => {
    const health = (await runtime.health?.()) ?? { tree: 'running', storage: 'open', writable: true };
    const ready = health.tree === 'running' && health.storage === 'open' && health.writable;
    const checks: Record<string, unknown> = { tree: health.tree, storage: health.storage, writable: health.writable };
    if (!health.writable && health.error !== undefined) checks['error'] = /^[A-Za-z0-9_]{1,64}$/.test(health.error) ? health.error : 'error';
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not_ready', checks });
  });
  app.get('/openapi.json', { config: { access: 'public' }, schema: { hide: true } }, async () => app.swagger());
}

/** `/metrics`, for operators. */
export function registerMetricsRoute(app: FastifyInstance, metrics: ServerMetrics): void {
  app.get('/metrics', { config: { access: 'operator' }, schema: probeSchema('Prometheus metrics (text exposition format)', { response: { 200: { description: 'text/plain; version=0.0.4', type: 'string' }, ...refused } }) }, async (_request, reply) => {
    const { contentType, body } = await metrics.scrape();
    return reply.type(contentType).send(body);
  });
}

/** `/fact-extraction`, for operators: what extraction has queued, retrying and dead-lettered, and a retry of the dead. */
export function registerExtractionRoutes(app: FastifyInstance, recall: RecallApi): void {
  const { extractionStatus, retryDeadExtractions } = recall;
  if (extractionStatus !== undefined) {
    app.get('/fact-extraction', { config: { access: 'operator' }, schema: probeSchema('Background fact extraction: jobs queued, retrying and dead-lettered', { response: extraction }) }, async (request) => {
      // Only the admin token sees which users' jobs died; others (the shared token when no admin
      // token is set, an open server) get the counts.
      return extractionBody(await extractionStatus.call(recall), request.principal.kind === 'admin');
    });
  }
  if (retryDeadExtractions !== undefined) {
    app.post<{ Querystring: { user_id?: string } }>(
      '/fact-extraction/retry',
      {
        config: { access: 'operator' },
        schema: probeSchema('Puts the dead-lettered extraction jobs (of user_id, else all) back in the queue', {
          querystring: { type: 'object', properties: { user_id: { type: 'string', default: '' } } },
          response: requeued,
        }),
      },
      async (request) => {
        const userId = request.query.user_id;
        return { requeued: await retryDeadExtractions.call(recall, userId === undefined || userId === '' ? undefined : userId) };
      },
    );
  }
}
