import type { AssistantMessage, Message } from '../message.ts';

/**
 * Makes a window acceptable to every LLM provider (`tokenWindow`'s last step): a tool result
 * whose call is not before it in the window (or that answers a call already answered) is
 * dropped, and a tool call without a result after it is removed from its assistant turn (the
 * turn goes if nothing remains; its `content_blocks` go with removed calls).
 */
export function pairToolCalls(body: readonly Message[]): Message[] {
  const called = new Set<string>();
  const answered = new Set<string>();
  const kept = body.filter((m) => {
    if (m.role === 'assistant') for (const tc of m.tool_calls ?? []) called.add(tc.id);
    if (m.role !== 'tool') return true;
    if (!called.has(m.tool_call_id) || answered.has(m.tool_call_id)) return false;
    answered.add(m.tool_call_id);
    return true;
  });
  const out: Message[] = [];
  for (const m of kept) {
    if (m.role !== 'assistant' || !m.tool_calls || m.tool_calls.every((tc) => answered.has(tc.id))) {
      out.push(m);
      continue;
    }
    const calls = m.tool_calls.filter((tc) => answered.has(tc.id));
    if (calls.length === 0 && m.content === null) continue;
    const { tool_calls: _calls, content_blocks: _blocks, ...rest } = m;
    // Provider-native blocks may name the removed calls: they go with them.
    const repaired: AssistantMessage = calls.length > 0 ? { ...rest, tool_calls: calls } : rest;
    out.push(repaired);
  }
  return out;
}
