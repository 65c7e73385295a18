/**
 * `/mcp`: the user's memory as an MCP server over Streamable HTTP (src/mcp/mcp-server.ts),
 * beside the JSON API and under the same rules.
 *
 * The user is the request's credentials, exactly as for the JSON API (authorization.ts, access
 * `self`): a per-user token, or the trusted proxy's user header. A caller that does not say
 * which user (the shared token alone, the admin token) is refused with 403
 * `{detail, code: 'forbidden'}`, an anonymous one with 401 (on an open server too: no credential
 * there names a user). There is no `user_id` to name: every call acts for the caller's own
 * user, so one user never reaches another's memory.
 *
 * Stateless (the SDK's `sessionIdGenerator: undefined`): each POST is one JSON-RPC message or
 * batch, answered as JSON (`enableJsonResponse`), by a server made for that request and closed
 * with it; so each request's credentials are checked anew (a reloaded tokens file applies at
 * once). GET (a server-to-client stream) and DELETE (ending a session) have nothing to do in
 * that mode: 405 with `Allow: POST`. It is counted by the per-user rate limit like `/api/*`, and
 * is not part of `/openapi.json` (it speaks JSON-RPC, not REST).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createMcpServer } from '../mcp/mcp-server.ts';
import type { MemoryRecall } from '../mcp/recall-view.ts';
import { HttpError } from './server-errors.ts';
import { SECURITY_HEADERS } from './security-headers.ts';

export type McpRecall = Omit<MemoryRecall, 'rankMemory' | 'recordTurn'>;

const ROUTE = { config: { access: 'self' as const }, schema: { hide: true } };

export function registerMcpRoute(api: FastifyInstance, recall: McpRecall): void {
  api.post('/mcp', ROUTE, async (request, reply) => {
    const userId = callerUser(request);
    const server = createMcpServer({ recall: recall as MemoryRecall, userId });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    // The transport writes the answer itself: the headers fastify's onSend would add, here.
    reply.hijack();
    reply.raw.setHeaders(new Map(Object.entries({ ...SECURITY_HEADERS, 'x-request-id': request.id })));
    reply.raw.once('close', () => void server.close().catch(() => undefined));
    await server.connect(transport);
    await transport.handleRequest(request.raw, reply.raw, request.body);
  });
  for (const method of ['GET', 'DELETE'] as const) {
    api.route({
      method,
      url: '/mcp',
      ...ROUTE,
      handler: async (request, reply) => {
        callerUser(request);
        void reply.header('allow', 'POST');
        throw new HttpError(405, 'this MCP endpoint is stateless: POST each JSON-RPC message');
      },
    });
  }
}

function callerUser(request: FastifyRequest): string {
  const principal = request.principal;
  // Access `self` admitted only user principals.
  if (principal.kind !== 'user') throw new HttpError(403, 'this route acts for the caller’s own user', 'forbidden');
  return principal.userId;
}
