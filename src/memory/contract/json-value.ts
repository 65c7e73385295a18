import type { JsonValue } from '../../message.ts';

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
  // One walk reused by every copy (it runs for every message written); a copy started while
  // one is running (a proxy's trap calling back in) takes a fresh one.
  const walk = spareWalk ?? { ancestors: [], keys: [], failure: undefined };
  spareWalk = undefined;
  try {
    const copied = visit(walk, value, 0);
    if (copied !== undefined) return { ok: true, value: copied };
    const failure = walk.failure ?? { keys: [], reason: 'not JSON' };
    const at = failure.keys.reduce<string>((p, k) => (typeof k === 'number' ? `${p}[${k}]` : `${p}.${k}`), path);
    return { ok: false, path: at, reason: failure.reason };
  } finally {
    walk.ancestors.length = 0;
    walk.keys.length = 0;
    walk.failure = undefined;
    spareWalk = walk;
  }
}

let spareWalk: Walk | undefined;

interface Walk {
  /** The containers above the value being visited (a stack: messages are shallow, so a scan
   * of it is cheaper than a Set made per message). */
  ancestors: object[];
  /** Where the walk is (keys and indexes from the root); formatted only on failure. */
  keys: Array<string | number>;
  failure: { keys: Array<string | number>; reason: string } | undefined;
}

function fail(walk: Walk, reason: string): undefined {
  walk.failure = { keys: walk.keys.slice(), reason };
  return undefined;
}

/** The copy of `v`, or undefined after recording why it is not JSON. (Top level and without
 * per-call strings: this runs for every message written.) */
function visit(walk: Walk, v: unknown, depth: number): JsonValue | undefined {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return v;
    case 'number':
      return Number.isFinite(v) ? v : fail(walk, `${v} is not a JSON number`);
    case 'object':
      break;
    default:
      return fail(walk, `${typeof v} is not a JSON value`);
  }
  if (v === null) return null;
  if (depth >= MAX_JSON_DEPTH) return fail(walk, `nested deeper than ${MAX_JSON_DEPTH} levels`);
  if (walk.ancestors.includes(v)) return fail(walk, 'cycle');
  walk.ancestors.push(v);
  try {
    if (Array.isArray(v)) {
      const out: JsonValue[] = new Array<JsonValue>(v.length);
      for (let i = 0; i < v.length; i++) {
        walk.keys.push(i);
        if (!(i in v)) return fail(walk, 'hole in array');
        const item = visit(walk, v[i], depth + 1);
        if (item === undefined) return undefined;
        walk.keys.pop();
        out[i] = item;
      }
      return out;
    }
    const proto = Object.getPrototypeOf(v) as unknown;
    if (proto !== Object.prototype && proto !== null) return fail(walk, 'not a plain object');
    if (Object.getOwnPropertySymbols(v).length > 0) return fail(walk, 'symbol keys');
    const out: { [key: string]: JsonValue } = {};
    for (const key of Object.keys(v)) {
      walk.keys.push(key);
      const item = visit(walk, (v as Record<string, unknown>)[key], depth + 1);
      if (item === undefined) return undefined;
      walk.keys.pop();
      if (key === '__proto__') Object.defineProperty(out, key, { value: item, enumerable: true, writable: true, configurable: true });
      else out[key] = item;
    }
    return out;
  } finally {
    walk.ancestors.pop();
  }
}
