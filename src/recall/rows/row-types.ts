import type { RowError, ToolCallView } from '../records/records.ts';

export type { RowError, ToolCallView };

/**
 * The Demo's row view, as the API gives it (`getSessionMessages`, windows, keyword recall, what
 * the memory tools print): one user message or one final assistant reply, with the tool calls
 * that reply made. The HTTP layer prints it with the Demo's snake_case names
 * (server/demo-shapes.ts).
 */
export interface SessionRow {
  /** Local wall time `YYYY-MM-DDTHH:MM:SS` (imported rows keep whatever their file held). */
  ts: string;
  /** `user` or `assistant` for rows Mnemo writes; imported rows keep their role. */
  role: string;
  /** The text (`''` for a failed turn's reply). */
  content: string;
  /** The anchor: per session, or per user and day for daily rows. */
  messageId: number;
  /** The tool calls the reply made, `{name, input, output}`; `[]` on user rows. */
  toolCalls: ToolCallView[];
  /** Set on the assistant row recorded for a turn whose agent failed (its content is `''`). */
  error?: RowError;
}

/** A row of the daily view: a session row as the day numbers it. */
export interface DailyRow extends SessionRow {
  /** The day whose anchors `messageId` belongs to. */
  day: string;
  /** The session the row was written by; `null` for imported rows that did not say. */
  sessionId: string | null;
}
