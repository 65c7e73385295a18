import { MnemoError } from '../errors.ts';
import type { ToolMessage } from '../message.ts';

/**
 * How a tool's outcome becomes a tool message's content (beamai's `encode_result`):
 * strings as they are; everything else as JSON (`undefined` as `null`); values JSON cannot
 * hold (cycles, bigint) as their `String()` form. A failure is data for the model, never a
 * crash of the loop: `{"error": {"type": <code or "tool_error">, "message": ...}}` for a
 * thrown Error, `{"error": <value>}` for any other thrown value.
 */
export function encodeResult(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value ?? null);
  } catch {
    return String(value);
  }
}

export function encodeToolError(err: unknown): string {
  if (err instanceof Error) {
    const type = err instanceof MnemoError ? err.code : 'tool_error';
    return encodeResult({ error: { type, message: err.message } });
  }
  return encodeResult({ error: err ?? null });
}

export function toolMessage(toolCallId: string, content: string, name?: string): ToolMessage {
  return name === undefined
    ? { role: 'tool', tool_call_id: toolCallId, content }
    : { role: 'tool', tool_call_id: toolCallId, name, content };
}
