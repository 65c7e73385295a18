import type { JsonValue } from './message.ts';

/**
 * A detached, exact copy of a JSON value, or where and why the value is not JSON.
 *
 * "JSON" is strict here, because a store must give back exactly what it was given: no
 * `undefined` (JSON.stringify would drop it), no functions, symbols or bigints, no NaN or
 * ±Infinity (they would come back as null), no holes in arrays, no cycles, no class instances
 * (a Date would come back as a string), no symbol keys. `-0` is the one value JSON cannot keep
 * apart (it comes back as 0). Own `__proto__` keys are kept as plain data.
 */
export type JsonCheck = { ok: true; value: JsonValue } | { ok: false; path: string; reason: string };

/** Deeper values are rejected rather than risking a stack overflow while copying. */
export const MAX_JSON_DEPTH = 1000;

export function copyJson(value: unknown, path = '$'): JsonCheck {
  const ancestors = new Set<object>();
  let failure: { path: string; reason: string } | undefined;

  const visit = (v: unknown, at: string, depth: number): JsonValue | undefined => {
    switch (typeof v) {
      case 'string':
      case 'boolean':
        return v;
      case 'number':
        if (Number.isFinite(v)) return v;
        failure = { path: at, reason: `${v} is not a JSON number` };
        return undefined;
      case 'object':
        break;
      default:
        failure = { path: at, reason: `${typeof v} is not a JSON value` };
        return undefined;
    }
    if (v === null) return null;
    if (depth >= MAX_JSON_DEPTH) {
      failure = { path: at, reason: `nested deeper than ${MAX_JSON_DEPTH} levels` };
      return undefined;
    }
    if (ancestors.has(v)) {
      failure = { path: at, reason: 'cycle' };
      return undefined;
    }
    ancestors.add(v);
    try {
      if (Array.isArray(v)) {
        const out: JsonValue[] = new Array<JsonValue>(v.length);
        for (let i = 0; i < v.length; i++) {
          if (!(i in v)) {
            failure = { path: `${at}[${i}]`, reason: 'hole in array' };
            return undefined;
          }
          const item = visit(v[i], `${at}[${i}]`, depth + 1);
          if (item === undefined) return undefined;
          out[i] = item;
        }
        return out;
      }
      const proto = Object.getPrototypeOf(v) as unknown;
      if (proto !== Object.prototype && proto !== null) {
        failure = { path: at, reason: 'not a plain object' };
        return undefined;
      }
      if (Object.getOwnPropertySymbols(v).length > 0) {
        failure = { path: at, reason: 'symbol keys' };
        return undefined;
      }
      const out: { [key: string]: JsonValue } = {};
      for (const key of Object.keys(v)) {
        const item = visit((v as Record<string, unknown>)[key], `${at}.${key}`, depth + 1);
        if (item === undefined) return undefined;
        if (key === '__proto__') Object.defineProperty(out, key, { value: item, enumerable: true, writable: true, configurable: true });
        else out[key] = item;
      }
      return out;
    } finally {
      ancestors.delete(v);
    }
  };

  const copied = visit(value, path, 0);
  return copied === undefined ? { ok: false, ...(failure ?? { path, reason: 'not JSON' }) } : { ok: true, value: copied };
}
