/**
 * DNS-rebinding guard for a server bound to loopback: a web page on another site can point its
 * own host name at 127.0.0.1 and then talk to us as "same origin". Browsers always send the
 * name they resolved in `Host`, so a loopback-bound server accepts only loopback names there
 * (`localhost`, `127.x.x.x`, `[::1]`, any port) and answers 403 to everything else.
 * A server bound to another interface cannot know its public names and skips the check.
 */
import type { FastifyInstance } from 'fastify';
import { HttpError } from './server-errors.ts';

export function isLoopbackHost(host: string): boolean {
  const name = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  return name === 'localhost' || name === '::1' || /^127(\.\d{1,3}){3}$/.test(name);
}

/** `localhost:8000` → `localhost`, `[::1]:8000` → `::1`; `null` for a malformed header. */
export function hostName(header: string): string | null {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+)(?::\d{1,5})?$/.exec(header.trim());
  return m?.[1] === undefined ? null : m[1].replace(/^\[(.*)\]$/, '$1');
}

export function installLoopbackHostGuard(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    const header = request.headers.host;
    const name = typeof header === 'string' ? hostName(header) : null;
    if (name === null || !isLoopbackHost(name)) {
      throw new HttpError(403, 'forbidden host: this server only answers to loopback names');
    }
  });
}
