import { errorRecord, type ErrorRecord } from '../errors.ts';
import type { AssistantMessage, Message } from '../message.ts';

/**
 * THE FAILED-TURN RULE, shared by `agent.run` and `recall.chat` (README: "A failed turn"):
 * a turn that fails after its user message was stored keeps that message and stores, after
 * it, an assistant ERROR MARKER whose `error` is `{code, message}` (the error's stable `code`,
 * `agent_failed` for an error without one; the message is Mnemo's own sentence for it, never a
 * model provider's words: see `errorRecord`). A store only appends, so nothing is rolled back.
 * When history is sent to a model again, a failed turn (its marker, the user message it
 * answers, and everything between them) is left out, and so is a tool result whose call was
 * left out; so a later turn never sends "user, user, user".
 *
 * Where the marker lives: `agent.run` stores plain messages (ChatMemory has no meta), so the
 * marker is the message `{role: 'assistant', content: '', error: {code, message}}`;
 * `recall.chat` stores it as an assistant row with content `''` and `meta.error`.
 */
export type TurnError = ErrorRecord;

export type FailedTurnMarker = AssistantMessage & { error: TurnError };

export function turnError(err: unknown): TurnError {
  return errorRecord(err, 'agent_failed');
}

export function failedTurnMarker(err: unknown): FailedTurnMarker {
  return { role: 'assistant', content: '', error: turnError(err) };
}

/** Whether a stored message is an error marker (an assistant message with `error: {code, message}`). */
export function isFailedTurnMarker(m: Message): m is FailedTurnMarker {
  if (m.role !== 'assistant') return false;
  const error = (m as { error?: unknown }).error;
  return typeof error === 'object' && error !== null && typeof (error as TurnError).code === 'string';
}

/**
 * `items` without their failed turns: each marker goes, with the nearest user item before it
 * and everything between (a marker with no user item before it goes alone).
 */
export function dropFailedTurns<T>(items: readonly T[], isMarker: (t: T) => boolean, isUser: (t: T) => boolean): T[] {
  const kept: T[] = [];
  for (const item of items) {
    if (!isMarker(item)) {
      kept.push(item);
      continue;
    }
    let at = kept.length - 1;
    while (at >= 0 && !isUser(kept[at]!)) at--;
    if (at >= 0) kept.length = at;
  }
  return kept;
}

/** The history to send to a model: no failed turn, no tool result whose call is not sent. */
export function withoutFailedTurns(messages: readonly Message[]): Message[] {
  const kept = dropFailedTurns(messages, isFailedTurnMarker, (m) => m.role === 'user');
  const calls = new Set<string>();
  for (const m of kept) if (m.role === 'assistant') for (const c of m.tool_calls ?? []) calls.add(c.id);
  return kept.length === messages.length ? kept : kept.filter((m) => m.role !== 'tool' || calls.has(m.tool_call_id));
}
