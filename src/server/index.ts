/**
 * `mnemo/server`: the HTTP API and the chat page (fastify 5), over a recall service and a
 * runtime. `startServer` listens; `createServer` builds the app without listening. Also here:
 * the metrics, the authorization table and the HTTP errors. Importing it loads fastify.
 *
 * @module mnemo/server
 */
export { createServer, startServer, DEFAULT_BODY_LIMIT } from './server.ts';
export type { ServerOptions, RunningServer } from './server.ts';
export { createServerMetrics, type ServerMetrics } from './metrics.ts';
export type { RecallApi, RuntimeView, ChatResult, ToolCallView } from './services.ts';
export type { RowBody, DailyRowBody } from '../recall/demo-shapes.ts';
export { ID_RULE, isValidId } from '../recall/index.ts';
export { routeAccess, replaceUserTokens, AuthorizationConfigError, DEFAULT_ACCESS, type Access, type Principal, type RouteAccess } from './authorization.ts';
export { HttpError, RequestValidationError, type ValidationIssue } from './server-errors.ts';
