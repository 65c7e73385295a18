import type { DailyValue } from '../stored-values.ts';
import { storedRowText } from './search-index.ts';

/**
 * A stored daily value's document text (search-index.ts `storedRowText`), read from its raw
 * JSON as the raw-text handle gives it (recall-dbs.ts `openRawText`: one char per byte): the
 * bulk build's read, which decodes only the content and not the whole value (the value's
 * UTF-8 decoding and `JSON.parse` were half the CPU of reading a row).
 *
 * Why the first `"content":"` is the row's content: inside a JSON string every `"` is
 * escaped, so the pattern only occurs as a key; the row's own `content` is always a string,
 * so a second occurrence (a nested value's key, as an imported row's `import` may hold) makes
 * the row ambiguous. A row with tool calls (their names, inputs and outputs are part of the
 * text), an ambiguous one or one of an unexpected shape is decoded whole.
 */
export function rawRowText(raw: string): string {
  const at = raw.indexOf(CONTENT);
  if (at < 0 || raw.indexOf(CONTENT, at + 1) >= 0 || raw.includes(TOOL_CALLS)) return storedRowText(decodeWhole(raw));
  const start = at + CONTENT.length;
  const end = stringEnd(raw, start);
  if (end < 0) return storedRowText(decodeWhole(raw));
  let text = raw.slice(start, end);
  if (NON_ASCII.test(text)) text = Buffer.from(text, 'latin1').toString('utf8');
  return text.includes('\\') ? (JSON.parse(`"${text}"`) as string) : text;
}

const CONTENT = '"content":"';
const TOOL_CALLS = '"tool_calls":';
const NON_ASCII = /[^\x00-\x7f]/;

/** The index of the `"` closing the JSON string whose characters begin at `from` (-1 if none). */
function stringEnd(raw: string, from: number): number {
  for (let i = raw.indexOf('"', from); i >= 0; i = raw.indexOf('"', i + 1)) {
    let backslashes = 0;
    while (raw.charCodeAt(i - 1 - backslashes) === 0x5c) backslashes++;
    if (backslashes % 2 === 0) return i;
  }
  return -1;
}

function decodeWhole(raw: string): DailyValue {
  return JSON.parse(Buffer.from(raw, 'latin1').toString('utf8')) as DailyValue;
}
