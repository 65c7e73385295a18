import type { ErrorRecord } from '../../../errors.ts';
import type { JsonObject } from '../../../message.ts';
import type { FactEntry, FactOrigin } from '../../records/fact-entry.ts';
import type { RowError, ToolCallView } from '../../records/records.ts';

/**
 * The values of the layered memory's LMDB databases as earlier versions of Mnemo wrote them
 * (the Demo's snake_case names): what existing data directories hold, so they open as they are.
 * record-codec.ts maps them to the port's records.
 */
export interface DailyValue {
  ts: string;
  role: string;
  content: string;
  /** The session that wrote it; `null` for an imported row that named none. */
  session_id: string | null;
  /** The same row's id in its session, when it has one. */
  session_message_id: number | null;
  tool_calls?: ToolCallView[];
  error?: RowError;
  /** An imported row as its file held it (content replaced by null), for a faithful export. */
  import?: JsonObject;
}

/** A sessions-index entry as stored. */
export interface StoredSession {
  /** `''` until the first turn ends (or when an imported entry had none). */
  title: string;
  /** `YYYY-MM-DDTHH:MM:SS` local, refreshed every turn. */
  updated_at: string;
  /** Creation order within the user: ties of `updated_at` list in this order. */
  order: number;
  /**
   * Shown by `listSessions`. A session is registered (unlisted) before its first row is
   * written, so every session with rows can be found, exported and deleted, and listed when its
   * first turn ends. Imported session files that `conversations.json` did not name stay unlisted.
   */
  listed: boolean;
  /** The imported `conversations.json` entry, for a faithful export. */
  import?: JsonObject;
  /**
   * Set when an imported session's demo ids were not 1..n: its first `rows` records carry their
   * demo id in `meta.message_id`, and every later record's id is its record id + `shift`
   * (highest demo id − rows), so new ids continue after the highest.
   */
  demoIds?: { rows: number; shift: number };
  /** Set on a session branched from another (`forkSession`): its rows up to `message_id`
   * are read through the source's transcript, so searches go through the MessageLog. */
  fork?: { session_id: string; message_id: number };
}

export interface LongTermValue {
  content: string;
  ts: string;
  source: 'remember_note' | 'set' | 'import';
  /** The imported file's text, when this version came from one. */
  raw?: string;
}

/** A dialogue-log row as stored (the Demo's `llm_dialogue.jsonl` fields). */
export interface LogValue {
  ts: string;
  session_id: string;
  user_message: string;
  assistant_reply: string;
  memory_context: string;
  tool_calls: ToolCallView[];
  error?: RowError;
  /** Per-user order of log rows across sessions. */
  seq: number;
  import?: JsonObject;
}

/** A fact entry as stored: the entry, its source with the Demo's snake_case names. */
export interface StoredFact extends Omit<FactEntry, 'source'> {
  source: { via: FactOrigin; session_id?: string; message_ids?: number[] };
}

/** A finished turn waiting for fact extraction (`recall.fact-queue`, key `[user, session, replyId]`). */
export interface StoredExtractionJob {
  user_message: string;
  assistant_reply: string;
  /** The session rows of the turn: the user row, the reply. */
  message_ids: number[];
  queued_at: string;
  /** Failed attempts so far (absent: none). */
  attempts?: number;
  /** Why the last attempt failed: the code and Mnemo's own sentence. */
  last_error?: ErrorRecord;
  /** Not retried before this instant (ISO; absent: due now). */
  next_at?: string;
}

/** A job that failed every attempt (`recall.fact-dead`, same key). */
export interface StoredDeadExtractionJob extends StoredExtractionJob {
  attempts: number;
  last_error: ErrorRecord;
  dead_at: string;
}
