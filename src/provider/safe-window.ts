import type { Message } from '../message.ts';

/**
 * beamai's `safe_window(Msgs, N)`, exactly:
 * 1. every system message, wherever it is, goes to the head, in its original order;
 * 2. of the other messages, only the last N are kept;
 * 3. tool messages at the head of those are dropped (their tool call was cut off), EVEN when
 *    nothing was cut: `[tool, user]` with N=5 gives `[user]`. So the result may hold fewer
 *    than N non-system messages.
 * An assistant tool-call turn at the head, or at the end without results, is kept.
 * A message without a role is neither system nor tool.
 */
export function safeWindow<M extends Message>(messages: readonly M[], n: number): M[] {
  const systems = messages.filter((m) => hasRole(m, 'system'));
  const body = messages.filter((m) => !hasRole(m, 'system'));
  let start = body.length > n ? body.length - n : 0;
  while (start < body.length && hasRole(body[start], 'tool')) start++;
  return [...systems, ...body.slice(start)];
}

function hasRole(m: unknown, role: string): boolean {
  return typeof m === 'object' && m !== null && (m as { role?: unknown }).role === role;
}
