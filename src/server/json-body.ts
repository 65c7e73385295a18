/**
 * The JSON body parser: fastify's own, except that a key that could poison prototypes
 * (`__proto__`, or `constructor` holding `prototype`) is answered as what it is, a 422
 * `json_forbidden_key`, not as a "JSON decode error" (fastify's parser reports both alike).
 * The check walks the parsed value iteratively, so nesting cannot overflow it.
 */
import { errorCodes, type FastifyInstance } from 'fastify';
import { RequestValidationError } from './server-errors.ts';

export function installJsonBodyParser(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = body as string;
    if (text.length === 0) return done(new errorCodes.FST_ERR_CTP_EMPTY_JSON_BODY(), undefined);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return done(new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY(), undefined);
    }
    const key = forbiddenKey(value);
    if (key !== undefined) {
      return done(
        new RequestValidationError([
          {
            type: 'json_forbidden_key',
            loc: ['body', ...key],
            msg: 'the JSON object key "__proto__" (or "constructor" holding "prototype") is not accepted',
            input: {},
          },
        ]),
        undefined,
      );
    }
    done(null, value);
  });
}

function forbiddenKey(root: unknown): (string | number)[] | undefined {
  const stack: [unknown, (string | number)[]][] = [[root, []]];
  while (stack.length > 0) {
    const [value, path] = stack.pop()!;
    if (value === null || typeof value !== 'object') continue;
    if (!Array.isArray(value)) {
      if (Object.prototype.hasOwnProperty.call(value, '__proto__')) return [...path, '__proto__'];
      const ctor = (value as Record<string, unknown>)['constructor'];
      if (Object.prototype.hasOwnProperty.call(value, 'constructor') && ctor !== null && typeof ctor === 'object' && Object.prototype.hasOwnProperty.call(ctor, 'prototype')) {
        return [...path, 'constructor'];
      }
    }
    // Paths are built only for objects and arrays that are walked; depth is bounded by the body size.
    for (const [k, child] of Object.entries(value)) {
      if (child !== null && typeof child === 'object') stack.push([child, path.length < 8 ? [...path, Array.isArray(value) ? Number(k) : k] : path]);
    }
  }
  return undefined;
}
