/**
 * What the HTTP layer needs from the layers below, so the server takes plain service objects
 * (no globals) and tests hand it the real runtime's services:
 *
 * - the recall service's chat, session, search and window calls (src/recall);
 * - a live view of the supervision tree: `inspect()` returning a JSON-serialisable snapshot
 *   (the otp `TreeNode`: id, name, pid, type, status, state, restarts, mailboxDepth, children),
 *   and, for operators, its live conversation count, health and events (a `Runtime` has all).
 */
import type { EventStream, TreeEvent } from '../otp/index.ts';
import type { Recall } from '../recall/index.ts';
import type { RuntimeHealth } from '../runtime.ts';

/** The recall calls the API uses (a `Recall` has them all). */
export type RecallApi = Pick<
  Recall,
  | 'chat'
  | 'chatStream'
  | 'createSession'
  | 'listSessions'
  | 'sessionMessages'
  | 'listSessionsPage'
  | 'sessionMessagesPage'
  | 'deleteSession'
  | 'forkSession'
  | 'searchSession'
  | 'sessionWindow'
  | 'searchDaily'
  | 'dailyWindow'
  | 'search'
  | 'listFacts'
  | 'factHistory'
  | 'remember'
  | 'updateFact'
  | 'forgetFact'
  | 'eraseUser'
  | 'dailyMessages'
  | 'rankFacts'
  | 'recordTurn'
  | 'summaries'
> &
  /** For operators: `/fact-extraction` and `mnemo_fact_extraction_jobs` (absent: neither). */
  Partial<Pick<Recall, 'extractionStatus' | 'retryDeadExtractions'>> &
  /** The embedding queue's numbers for `/metrics` (absent: no `mnemo_embeddings_*` values). */
  Partial<Pick<Recall, 'embeddingsStatus'>>;

/** What the server reads of the runtime (a `Runtime` has it all). */
export interface RuntimeView {
  /** A JSON-serialisable snapshot of the tree, for `GET /api/runtime`. */
  inspect(): unknown;
  /** The runtime's name (to count conversation actors' restarts as one child). */
  readonly name?: string;
  /** Conversation actors alive now (`mnemo_live_conversations`). Absent: 0. */
  readonly liveConversations?: number;
  /** What `/readyz` reports. Absent: ready while the server runs. */
  health?(): Promise<RuntimeHealth>;
  /** The tree's events (`mnemo_restarts_total`). */
  readonly events?: EventStream<TreeEvent>;
}

export type { ChatResult, ToolCallView } from '../recall/index.ts';
