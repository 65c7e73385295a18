import type { JsonValue } from '../../message.ts';
import type { ToolCallView } from './row-types.ts';

/**
 * Reads the demo's stored `meta.tool_calls` (imported rows) as its `/messages` endpoint did:
 * items that are not objects are dropped; `name`, `input` and `output` are turned into strings,
 * missing ones into `''` (Python's `str()` of a number or a list differs in a few spellings;
 * JSON text is used for non-strings).
 */
export function demoToolCalls(value: JsonValue | undefined): ToolCallView[] {
  if (!Array.isArray(value)) return [];
  const views: ToolCallView[] = [];
  for (const item of value) {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) continue;
    views.push({ name: text(item['name']), input: text(item['input']), output: text(item['output']) });
  }
  return views;
}

function text(v: JsonValue | undefined): string {
  if (v === undefined || v === null) return v === null ? 'None' : '';
  return typeof v === 'string' ? v : JSON.stringify(v);
}
