/**
 * What the HTTP layer needs from the layers below, so the server takes plain service objects
 * (no globals) and tests hand it the real runtime's services:
 *
 * - the recall service's chat, session, search and window calls (src/recall);
 * - a live view of the supervision tree: `inspect()` returning a JSON-serialisable snapshot
 *   (the otp `TreeNode`: id, name, pid, type, status, state, restarts, mailboxDepth, children).
 */
import type { Recall } from '../recall/index.ts';

export type RecallApi = Pick<
  Recall,
  | 'chat'
  | 'createSession'
  | 'listSessions'
  | 'getSessionMessages'
  | 'deleteSession'
  | 'forkSession'
  | 'searchSession'
  | 'sessionWindow'
  | 'searchDaily'
  | 'dailyWindow'
>;

export interface RuntimeView {
  inspect(): unknown;
}

export type {
  ChatResult,
  SessionSummary as SessionView,
  DailyRow as DailyRowView,
  MemoryRow as RowView,
  ToolCallView,
} from '../recall/index.ts';
