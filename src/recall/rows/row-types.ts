/**
 * The demo's row view (its `/messages` items and what the memory tools print): one user
 * message or one final assistant reply, with the tool calls that reply made.
 */
export interface ToolCallView {
  name: string;
  /** The call's arguments as Python's `json.dumps` would print them (strings pass through). */
  input: string;
  /** The tool's output string; `''` when no result was recorded. */
  output: string;
}

export interface RowError {
  code: string;
  message: string;
}

export interface MemoryRow {
  /** Local wall time `YYYY-MM-DDTHH:MM:SS` (imported rows keep whatever their file held). */
  ts: string;
  /** `user` or `assistant` for rows Mnemo writes; imported rows keep their role. */
  role: string;
  content: string;
  /** The anchor: per session, or per user and day for daily rows. */
  message_id: number;
  tool_calls: ToolCallView[];
  /** Set on the assistant row recorded for a turn whose agent failed (its content is `''`). */
  error?: RowError;
}

export interface DailyRow extends MemoryRow {
  /** The day whose anchors `message_id` belongs to. */
  day: string;
  /** The session the row was written by; `null` for imported rows that did not say. */
  session_id: string | null;
}
