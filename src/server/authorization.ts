/**
 * Who may do what: one step that resolves every request's caller to a `Principal`, and each
 * route's declared `access` (its route config: `{ config: { access: 'user' } }`) that says
 * which principals it admits.
 *
 * Principals, from the request's `Authorization: Bearer <token>`:
 * - `admin`: the admin token (`--admin-token`); may do everything, for any user;
 * - `user`: a token of the user-tokens file (token → user id), or, in trusted-header mode, the
 *   user a reverse proxy names in its header (see `trustUserHeader`); acts for that user only;
 * - `shared`: the one shared token (`--token`); acts for any user it names (self-asserted);
 * - `anonymous`: no token, or (where anonymous callers are admitted) one that matches nothing.
 *
 * Access levels (a route that declares none gets `operator`, the strictest, so a route added
 * later without a declaration is never accidentally open):
 * - `public`: everyone; no token is looked at (the page, its assets, the probes, the OpenAPI);
 * - `authenticated`: any principal; anonymous callers only while the API is open (no shared
 *   token, no user tokens);
 * - `user`: as `authenticated`, and a `user` principal may only name its own `user_id` (in the
 *   body, the query string or the path): another is 403 `{detail, code: 'forbidden'}`; when
 *   the request names none, the principal's own id is filled in where the route's schema takes it;
 * - `self`: a `user` principal only (a user token, or the trusted header's user), acting for
 *   that user with nothing in the request to name one (`/mcp`); the shared token, the admin
 *   token and an open server's anonymous callers cannot say which user, so they are refused;
 * - `operator`: the admin token; when none is configured, the shared token; when no token of
 *   any kind is configured (an open server), everyone. Never a user token.
 *
 * A caller not admitted gets 401 (with a Bearer challenge) when anonymous, else 403. The token
 * is checked in `onRequest`, before the body is read; the `user_id` in `preValidation`, once it is.
 *
 * The user tokens can be replaced while the server runs (`replaceUserTokens`: the CLI does so
 * on SIGHUP); requests from then on are checked against the new set. Whether the API is open
 * is decided at start: only a server started with user tokens can have them replaced, and by a
 * non-empty set, so a reload never opens it.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema, RouteOptions } from 'fastify';
import { MnemoError } from '../errors.ts';
import { isValidId } from '../recall/recall-ids.ts';
import { matchToken, presentedBearer, tokenDigest } from './bearer-token.ts';
import { HttpError } from './server-errors.ts';

/** A route's access level (see above): `public`, `authenticated`, `user`, `self` or `operator`. */
export type Access = 'public' | 'authenticated' | 'user' | 'self' | 'operator';
export const ACCESS_LEVELS: readonly Access[] = ['public', 'authenticated', 'user', 'self', 'operator'];
/** What a route that declares no access gets. */
export const DEFAULT_ACCESS: Access = 'operator';

/** Who a request is from (see above), on `request.principal`. */
export type Principal =
  | {
      /** No token, or one that matches nothing. */
      kind: 'anonymous';
    }
  | {
      /** The shared token: acts for any user it names. */
      kind: 'shared';
    }
  | {
      /** A user's token (or the trusted header): acts for `userId` only. */
      kind: 'user';
      /** The user it acts for. */
      userId: string;
    }
  | {
      /** The admin token: everything, for any user. */
      kind: 'admin';
    };

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Who may call this route (authorization.ts); undeclared: `operator`. */
    access?: Access;
  }
  interface FastifyRequest {
    /** The caller, resolved before anything else runs (authorization.ts). */
    principal: Principal;
  }
}

export interface AuthorizationOptions {
  /** The shared token: any user, self-asserted. */
  token?: string | null;
  /** The operator's token. */
  adminToken?: string | null;
  /** Token → user id: each token acts for its user only. */
  userTokens?: ReadonlyMap<string, string> | null;
  /**
   * Trusted-header mode, for a reverse proxy that authenticates users itself: a request
   * carrying the shared `token` (the proxy's own credential) acts as the user named in this
   * header. It assumes the proxy removes any copy of the header a client sent and sets its own;
   * the shared token then never reaches clients. Requires `token`. A request with the token but
   * without the header (or with it twice, or with an invalid id) is 401.
   */
  trustUserHeader?: string | null;
}

/** One registered route and the access it declared (`declared: false`: it got the default). */
export interface RouteAccess {
  /** The HTTP method. */
  method: string;
  /** The route's path, as registered (`/api/sessions/:session_id`). */
  url: string;
  /** Who may call it. */
  access: Access;
  /** False when the route declared none and got the default (`operator`). */
  declared: boolean;
  /** The route's schema (what it takes), for tests that call every route. */
  schema?: FastifySchema;
}

const TABLES = new WeakMap<FastifyInstance, RouteAccess[]>();
const USER_TOKEN_SETTERS = new WeakMap<FastifyInstance, (tokens: ReadonlyMap<string, string>) => void>();

/**
 * Puts `tokens` (token → user id) in place of the user tokens of `app` (a server made by
 * `createServer` with user tokens), for every request from now on. Throws
 * `AuthorizationConfigError`, changing nothing, for a server started without user tokens, an
 * empty set, or a token that is also the shared or the admin token.
 */
export function replaceUserTokens(app: FastifyInstance, tokens: ReadonlyMap<string, string>): void {
  const set = USER_TOKEN_SETTERS.get(app);
  if (set === undefined) throw new AuthorizationConfigError('this server was started without user tokens: they cannot be replaced');
  set(tokens);
}

/** Every route registered on `app` (a server made by `createServer`), with its access. */
export function routeAccess(app: FastifyInstance): readonly RouteAccess[] {
  return [...(TABLES.get(app) ?? [])];
}

/** Options that cannot make a coherent policy (a library caller's mistake; the CLI checks first). */
export class AuthorizationConfigError extends MnemoError {
  /** Always `'invalid_auth_config'`. */
  readonly code = 'invalid_auth_config';
}

/** Installs the principal and access hooks on `app`; call before any route is registered. */
export function installAuthorization(app: FastifyInstance, options: AuthorizationOptions): void {
  const token = options.token ?? null;
  const adminToken = options.adminToken ?? null;
  const userTokens = options.userTokens ?? new Map<string, string>();
  const header = options.trustUserHeader?.toLowerCase() ?? null;
  if (header !== null && token === null) {
    throw new AuthorizationConfigError('trusted-header mode needs the shared token: it is the proxy’s credential');
  }
  const adminEntries = adminToken === null ? [] : [[tokenDigest(adminToken), true] as const];
  const sharedEntries = token === null ? [] : [[tokenDigest(token), true] as const];
  const entriesOf = (tokens: ReadonlyMap<string, string>): (readonly [Buffer, string])[] => {
    for (const secret of tokens.keys()) {
      if (secret === token || secret === adminToken) throw new AuthorizationConfigError('a user token must differ from the shared and the admin token');
    }
    return [...tokens].map(([secret, userId]) => [tokenDigest(secret), userId] as const);
  };
  let userEntries = entriesOf(userTokens);
  /** No shared token and no user tokens: user routes admit anonymous callers (self-asserted ids). */
  const apiOpen = token === null && userEntries.length === 0;
  if (userEntries.length > 0) {
    USER_TOKEN_SETTERS.set(app, (tokens) => {
      if (tokens.size === 0) throw new AuthorizationConfigError('the user tokens cannot be replaced by none: the API would stay closed to every user');
      userEntries = entriesOf(tokens);
    });
  }
  /** No token of any kind: operator routes admit everyone too. */
  const allOpen = apiOpen && adminToken === null;

  const table: RouteAccess[] = [];
  TABLES.set(app, table);
  app.addHook('onRoute', (route: RouteOptions) => {
    const declared = route.config?.access;
    if (declared !== undefined && !ACCESS_LEVELS.includes(declared)) throw new Error(`route ${route.url}: unknown access ${String(declared)}`);
    route.config = { ...route.config, access: declared ?? DEFAULT_ACCESS };
    const access = declared ?? DEFAULT_ACCESS;
    for (const method of [route.method].flat()) {
      table.push({ method, url: route.url, access, declared: declared !== undefined, ...(route.schema === undefined ? {} : { schema: route.schema }) });
    }
  });

  // Declared up front (null until the onRequest hook below sets it) so every request has one shape.
  app.decorateRequest('principal', null as never);

  const resolve = (request: FastifyRequest): { principal: Principal; refused: string } => {
    const presented = presentedBearer(request);
    if (presented.kind === 'none') return { principal: { kind: 'anonymous' }, refused: 'missing bearer token' };
    const anonymous = { principal: { kind: 'anonymous' } as const, refused: 'invalid bearer token' };
    if (presented.kind === 'malformed') return anonymous;
    // Every kind is compared, so the time does not tell which one matched.
    const admin = matchToken(presented.digest, adminEntries);
    const user = matchToken(presented.digest, userEntries);
    const shared = matchToken(presented.digest, sharedEntries);
    if (admin) return { principal: { kind: 'admin' }, refused: '' };
    if (user !== undefined) return { principal: { kind: 'user', userId: user }, refused: '' };
    if (!shared) return anonymous;
    if (header === null) return { principal: { kind: 'shared' }, refused: '' };
    const named = headerUser(request, header);
    return named === null
      ? { principal: { kind: 'anonymous' }, refused: `missing or invalid ${header} header` }
      : { principal: { kind: 'user', userId: named }, refused: '' };
  };

  const admits = (access: Access, principal: Principal): boolean => {
    switch (access) {
      case 'public':
        return true;
      case 'authenticated':
      case 'user':
        return principal.kind !== 'anonymous' || apiOpen;
      case 'self':
        return principal.kind === 'user';
      case 'operator':
        return principal.kind === 'admin' || (principal.kind === 'shared' && adminToken === null) || allOpen;
    }
  };

  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const access = request.routeOptions.config.access ?? DEFAULT_ACCESS;
    if (access === 'public' || request.is404) {
      request.principal = { kind: 'anonymous' };
      return;
    }
    const { principal, refused } = resolve(request);
    request.principal = principal;
    if (admits(access, principal)) return;
    if (principal.kind === 'anonymous') {
      reply.header('www-authenticate', 'Bearer realm="mnemo"');
      throw new HttpError(401, refused);
    }
    const why =
      access === 'self' ? 'this route acts for the caller’s own user: it needs a user token or the trusted user header'
      : principal.kind === 'user' ? 'a user token cannot use this route'
      : 'this route needs the admin token';
    throw new HttpError(403, why, 'forbidden');
  });

  app.addHook('preValidation', async (request: FastifyRequest) => {
    const principal = request.principal;
    if (principal.kind !== 'user' || request.routeOptions.config.access !== 'user') return;
    const places = userIdPlaces(request);
    let named = false;
    for (const place of places) {
      if (place === undefined || place === null || typeof place !== 'object' || !('user_id' in place)) continue;
      named = true;
      if ((place as { user_id: unknown }).user_id !== principal.userId) {
        throw new HttpError(403, 'this token acts for another user_id', 'forbidden');
      }
    }
    if (!named) fillUserId(request, principal.userId);
  });
}

function userIdPlaces(request: FastifyRequest): unknown[] {
  return [request.body, request.query, request.params];
}

/** Puts the principal's id where the route's schema takes `user_id` (body, else query string). */
function fillUserId(request: FastifyRequest, userId: string): void {
  const schema = request.routeOptions.schema;
  const takes = (part: unknown): boolean => {
    const properties = (part as { properties?: Record<string, unknown> } | undefined)?.properties;
    return properties !== undefined && 'user_id' in properties;
  };
  if (takes(schema?.body) && (request.body === undefined || (typeof request.body === 'object' && request.body !== null && !Array.isArray(request.body)))) {
    request.body = { ...(request.body as Record<string, unknown> | undefined), user_id: userId };
  } else if (takes(schema?.querystring)) {
    (request.query as Record<string, unknown>)['user_id'] = userId;
  }
}

/** The user a trusted proxy names: exactly one header, holding a valid id. */
function headerUser(request: FastifyRequest, name: string): string | null {
  const raw = request.raw.rawHeaders;
  const values: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) if (raw[i]!.toLowerCase() === name) values.push(raw[i + 1]!);
  return values.length === 1 && isValidId(values[0]) ? values[0]! : null;
}
