import type { JsonValue, Message } from '../../message.ts';
import type { ToolCallView } from './row-types.ts';
import { pythonJsonDumps } from './python-json.ts';

/**
 * Projects a real tool transcript (assistant messages with `tool_calls`, then `tool` results)
 * to the demo's `{name, input, output}` list, in call order. A result is paired with its call
 * by `tool_call_id` (the demo paired by tool name, last call first, which swapped the results
 * of two parallel calls to one tool). A result whose call is unknown is appended as the demo
 * appended it: `{name: name ?? 'tool', input: '', output}`.
 */
export function projectToolCalls(transcript: readonly Message[]): ToolCallView[] {
  const views: ToolCallView[] = [];
  // Calls still waiting for their result, per id, oldest first (an id can recur across turns).
  const waiting = new Map<string, ToolCallView[]>();
  for (const m of transcript) {
    if (m.role === 'assistant') {
      for (const call of m.tool_calls ?? []) {
        const view = { name: call.function.name, input: inputOf(call.function.arguments), output: '' };
        views.push(view);
        waiting.set(call.id, [...(waiting.get(call.id) ?? []), view]);
      }
    } else if (m.role === 'tool') {
      const view = waiting.get(m.tool_call_id)?.shift();
      if (view) {
        view.output = m.content;
      } else {
        views.push({ name: m.name ?? 'tool', input: '', output: m.content });
      }
    }
  }
  return views;
}

/** The model sends arguments as JSON text; the demo printed the parsed object with `json.dumps`. */
function inputOf(args: string): string {
  let parsed: JsonValue;
  try {
    parsed = JSON.parse(args) as JsonValue;
  } catch {
    return args;
  }
  return typeof parsed === 'string' ? parsed : pythonJsonDumps(parsed);
}
