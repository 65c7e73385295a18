import type { JsonObject } from '../message.ts';

/**
 * A tool call as the loops execute it, whatever shape the response carried
 * (beamai's `parse_tool_call`):
 * - OpenAI nested `{id, type: 'function', function: {name, arguments}}`, or the flat
 *   `{id, name, arguments}`;
 * - a missing id or name becomes `"unknown"`;
 * - string arguments are JSON-decoded; text that is not a JSON object becomes `{raw: text}`;
 *   an empty string is `{}` (servers send it for tools without parameters: beamai would give
 *   `{raw: ""}`); an object is taken as is; anything else is `{}`.
 * Stores keep the call exactly as the response carried it; this only reads it.
 */
export interface ParsedToolCall {
  /** The call's id (`'unknown'` when the response had none). */
  id: string;
  /** The tool's name (`'unknown'` when the response had none). */
  name: string;
  /** The decoded arguments (see above). */
  args: JsonObject;
}

/** What a loop did with one call: the content the model got back, and whether it failed. */
export interface ToolCallRecord extends ParsedToolCall {
  /**
   * The content the model got back: the tool's result, or `{"error": ...}` when it threw or was not
   * found.
   */
  result: string;
  /** False when the tool threw or was not found. */
  ok: boolean;
}

export function parseToolCall(call: unknown): ParsedToolCall {
  const tc = isObject(call) ? call : {};
  const fn = isObject(tc['function']) ? tc['function'] : undefined;
  const name = fn ? fn['name'] : tc['name'];
  const rawArgs = fn ? fn['arguments'] : tc['arguments'];
  return {
    id: typeof tc['id'] === 'string' ? tc['id'] : 'unknown',
    name: typeof name === 'string' ? name : 'unknown',
    args: decodeArgs(rawArgs),
  };
}

function decodeArgs(raw: unknown): JsonObject {
  if (typeof raw === 'string') {
    if (raw.trim() === '') return {};
    try {
      const decoded: unknown = JSON.parse(raw);
      return isObject(decoded) ? (decoded as JsonObject) : { raw };
    } catch {
      return { raw };
    }
  }
  return isObject(raw) ? (raw as JsonObject) : {};
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
