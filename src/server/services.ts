/**
 * What the HTTP layer needs from the layers below, stated structurally so the server takes
 * plain service objects (no globals) and tests can hand it the real runtime's services.
 * The recall service is the demo's layered memory; the runtime view is the live supervision
 * tree. Ids reaching these methods have already passed `ID_PATTERN`.
 */

export interface ToolCallView {
  name: string;
  input: string;
  output: string;
}

/** One session (or daily) row as the API returns it. */
export interface RowView {
  ts: string;
  role: string;
  content: string;
  message_id: number;
  tool_calls: ToolCallView[];
  /** Present on the assistant row recorded for a failed turn. */
  error?: { code: string; message: string };
}

export interface DailyRowView extends RowView {
  day: string;
  session_id: string | null;
}

export interface ConversationView {
  session_id: string;
  title: string;
  updated_at: string;
}

export interface ChatResult {
  reply: string;
  memoryHits: number;
  title: string;
  toolCalls: ToolCallView[];
}

export interface RecallApi {
  chat(input: { userId: string; sessionId: string; message: string }): Promise<ChatResult>;
  createConversation(userId: string): Promise<string>;
  listConversations(userId: string): Promise<ConversationView[]>;
  getSessionMessages(userId: string, sessionId: string): Promise<RowView[]>;
  /** `true` when the session existed; its daily rows and index entry go with it. */
  deleteConversation(userId: string, sessionId: string): Promise<boolean>;
  searchSession(input: { userId: string; sessionId: string; keyword: string; limit: number }): Promise<RowView[]>;
  sessionWindow(input: {
    userId: string;
    sessionId: string;
    messageId: number;
    before: number;
    after: number;
  }): Promise<RowView[]>;
  searchDaily(input: { userId: string; keyword: string; day: string; limit: number }): Promise<DailyRowView[]>;
  dailyWindow(input: {
    userId: string;
    messageId: number;
    before: number;
    after: number;
    day: string;
  }): Promise<DailyRowView[]>;
}

/** The live supervision tree (ids, states, restart counts, mailbox depth), JSON-serialisable. */
export interface RuntimeView {
  inspect(): unknown;
}
