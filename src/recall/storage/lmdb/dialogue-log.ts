import type { ToolCallView } from '../../rows/row-types.ts';
import { HIGH, nextCounter, type LogValue, type RecallDbs } from './recall-dbs.ts';


/**
 * The dialogue log (the demo's `logs/llm_dialogue.jsonl`): one row per turn with the user
 * message, the reply, the exact memory context the agent was given and the tool calls; a
 * failed turn also records its error. Rows are keyed by session so deleting a session takes
 * its rows along; a per-user sequence keeps their order across sessions. Imported rows whose
 * `session_id` is not a valid id are kept under `''`.
 */
/** Inside a write transaction. */
export function putLogRow(dbs: RecallDbs, userId: string, bucket: string, row: Omit<LogValue, 'seq'>): number {
  const seq = nextCounter(dbs, 'log-seq', userId);
  dbs.log.put([userId, bucket, seq], { ...row, seq });
  return seq;
}

/** The user's log in turn order, or one session's. */
export function readLog(dbs: RecallDbs, userId: string, sessionId?: string): LogValue[] {
  const range =
    sessionId === undefined ? { start: [userId], end: [userId, HIGH] } : { start: [userId, sessionId], end: [userId, sessionId, HIGH] };
  const rows = [...dbs.log.getRange(range)].map((e) => e.value);
  return sessionId === undefined ? rows.sort((a, b) => a.seq - b.seq) : rows;
}

/** Inside a write transaction. */
export function removeSessionLog(dbs: RecallDbs, userId: string, sessionId: string): void {
  // Collect first: removing under a live cursor is not something to rely on.
  const keys = [...dbs.log.getKeys({ start: [userId, sessionId], end: [userId, sessionId, HIGH] })];
  for (const key of keys) dbs.log.remove(key);
}
