import type { Message, ToolMessage } from '../message.ts';
import { parseToolCall } from '../kernel/tool-call.ts';
import { encodeResult, toolMessage } from '../kernel/tool-result.ts';

/**
 * Results for the tool calls in `history` that never got one (a run that ended between the
 * model's tool-call turn and its results: a crash, an abort, a tool that never returned).
 * Providers reject such a history, so the next run appends these synthetic results, in call
 * order, before anything else (beamai's `heal_dangling`). Content:
 * `{"error":{"type":"cancelled","message":...}}`.
 */
export function danglingToolResults(history: readonly Message[]): ToolMessage[] {
  const answered = new Set<string>();
  for (const m of history) if (m.role === 'tool') answered.add(m.tool_call_id);
  const healed: ToolMessage[] = [];
  for (const m of history) {
    if (m.role !== 'assistant' || !Array.isArray(m.tool_calls)) continue;
    for (const call of m.tool_calls) {
      const { id } = parseToolCall(call);
      if (answered.has(id)) continue;
      answered.add(id);
      healed.push(toolMessage(id, CANCELLED));
    }
  }
  return healed;
}

const CANCELLED = encodeResult({
  error: { type: 'cancelled', message: 'the run that made this tool call ended before its result was stored' },
});
