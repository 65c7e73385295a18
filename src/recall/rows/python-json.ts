import type { JsonValue } from '../../message.ts';

/**
 * `json.dumps(value, ensure_ascii=False)` as Python writes it: the demo's tool-call `input`
 * format and the line format of its JSONL files. Without `indent`: separators `", "` and
 * `": "`; with `indent` (its `conversations.json`): one member per line, `","` and `": "`.
 * Strings escape exactly as Python escapes them (quote, backslash, control characters). Known
 * gaps, from JSON's number model and JS objects: an integral float (`1.0`) prints as `1`, and
 * integer-like object keys come first in JS key order.
 */
export function pythonJsonDumps(value: JsonValue, indent?: number): string {
  return dump(value, indent === undefined ? undefined : ' '.repeat(indent), '');
}

function dump(value: JsonValue, unit: string | undefined, pad: string): string {
  if (value === null) return 'null';
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
    return JSON.stringify(value);
  }
  const inner = unit === undefined ? '' : pad + unit;
  const items = Array.isArray(value)
    ? value.map((v) => dump(v, unit, inner))
    : Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}: ${dump(v, unit, inner)}`);
  const [open, close] = Array.isArray(value) ? ['[', ']'] : ['{', '}'];
  if (items.length === 0) return open + close;
  if (unit === undefined) return `${open}${items.join(', ')}${close}`;
  return `${open}\n${inner}${items.join(`,\n${inner}`)}\n${pad}${close}`;
}
