import type { ErrorRecord } from '../../errors.ts';
import type { JsonObject } from '../../message.ts';

/**
 * The records of the layered memory as its domain sees them: camelCase, engine-neutral. Every
 * storage adapter maps them to its own format in one place (the LMDB adapter to the values
 * older versions wrote, so existing data opens as it is; the PostgreSQL adapter to columns), and
 * the HTTP layer maps them to the Agent Memory Demo's snake_case bodies.
 */

/** A tool call as the Demo shows it: `{name, input, output}`. */
export interface ToolCallView {
  /** The tool's name. */
  name: string;
  /** The call's arguments as Python's `json.dumps` would print them (strings pass through). */
  input: string;
  /** The tool's output string; `''` when no result was recorded. */
  output: string;
}

/** Why a turn failed, as stored with its error row: a stable code and Mnemo's own sentence. */
export type RowError = ErrorRecord;

/** One entry of a user's sessions index (the Demo's `conversations.json`). */
export interface SessionEntry {
  /** The session. */
  sessionId: string;
  /** `''` until the first turn ends (or when an imported entry had none). */
  title: string;
  /** Local wall time `YYYY-MM-DDTHH:MM:SS`, refreshed by every turn. */
  updatedAt: string;
  /** Creation order within the user: ties of `updatedAt` list in this order. */
  order: number;
  /**
   * Shown by `listSessions`. A session is registered unlisted by its first turn's user row, so
   * every session with rows can be found, exported and deleted, and it is listed when that
   * turn ends. Imported sessions that `conversations.json` did not name stay unlisted.
   */
  listed: boolean;
  /** A session branched from another (`forkSession`): its rows up to `messageId` are the source's. */
  fork?: {
    /** The source session. */
    sessionId: string;
    /** The last of the source's rows it shares. */
    messageId: number;
  };
  /**
   * An imported session whose Demo ids were not 1..n: its first `rows` records carry their Demo
   * id in `meta.message_id`, and every later record's anchor is its record id + `shift`.
   */
  demoIds?: {
    /** How many of its first records carry their Demo id. */
    rows: number;
    /** Added to a later record's id to make its anchor. */
    shift: number;
  };
  /** The imported `conversations.json` entry, for a faithful export. */
  imported?: JsonObject;
}

/** One row of the daily view: per user and local day, ids 1, 2, 3, ... within the day. */
export interface DailyRecord {
  /** The local day, `YYYY-MM-DD`. */
  day: string;
  /** The row's anchor in its day: 1, 2, 3, ... */
  id: number;
  /** Local wall time `YYYY-MM-DDTHH:MM:SS`. */
  ts: string;
  /** `user` or `assistant` (an imported row keeps its own). */
  role: string;
  /** The text. */
  content: string;
  /** The session that wrote it; `null` for an imported row that named none. */
  sessionId: string | null;
  /** The same row's id in its session, when it has one. */
  sessionMessageId: number | null;
  /** The tool calls of a reply. */
  toolCalls?: ToolCallView[];
  /** Set on a failed turn's reply row. */
  error?: RowError;
  /** An imported row as its file held it (content replaced by null), for a faithful export. */
  imported?: JsonObject;
}

/** A daily row to store: the store gives it the day's next id unless `id` is set (imports). */
export type NewDailyRecord = Omit<DailyRecord, 'id'> & {
  /** The anchor to keep (imports); absent: the day's next. */
  id?: number;
};

/** One turn of the dialogue log (the Demo's `logs/llm_dialogue.jsonl`). */
export interface LogRecord {
  /** Per-user order across sessions. */
  seq: number;
  /** Local wall time of the turn. */
  ts: string;
  /** As the turn (or the imported row) named it; may be any string for an imported row. */
  sessionId: string;
  /** What the user said. */
  userMessage: string;
  /** What was answered (`''` for a failed turn). */
  assistantReply: string;
  /** The exact memory context the model was given. */
  memoryContext: string;
  /** The turn's tool calls. */
  toolCalls: ToolCallView[];
  /** Set for a failed turn. */
  error?: RowError;
  /** An imported row as its file held it, for a faithful export. */
  imported?: JsonObject;
}

/** A dialogue-log row to store: the store numbers it. */
export type NewLogRecord = Omit<LogRecord, 'seq'>;

/** One version of the long-term document (the Demo's `memory.md`). */
export interface LongTermRecord {
  /** 1, 2, 3, ... per user. */
  version: number;
  /** Trimmed, as the Demo read it back. */
  content: string;
  /** Local wall time it was written. */
  ts: string;
  /** What wrote it: the `remember_note` tool, `setLongTerm`, or an import. */
  source: 'remember_note' | 'set' | 'import';
  /** The imported file's text, when this version came from one. */
  raw?: string;
}

/** A keyed chat turn's entry (chat/turn-keys.ts): its answer once answered, else its failed attempts. */
export type TurnKeyRecord =
  | {
      /** The answer a retry gets back. */
      result: TurnAnswer;
      /** When it was stored (epoch ms). */
      at: number;
    }
  | {
      /** Attempts that failed so far. */
      failedAttempts: number;
      /** When the last one failed (epoch ms). */
      at: number;
    };

/** A keyed turn's answer, as stored for its retries (a `ChatResult`). */
export interface TurnAnswer {
  /** The reply. */
  reply: string;
  /** 1 when the long-term section was non-empty, else 0. */
  memoryHits: number;
  /** The session's title. */
  title: string;
  /** The turn's tool calls. */
  toolCalls: ToolCallView[];
}
