/**
 * The memory tools that Mnemo gives other agent hosts: one table, served over MCP
 * (mcp-server.ts) and as AI SDK tools (src/ai-sdk/tools.ts). Each tool acts for ONE user, bound
 * when the server or the tool set is made; no tool takes a user id, so no caller can reach
 * another user's memory.
 *
 * - `search_memory`: ranked recall over every session, day and long-term line of the user,
 *   each hit with its anchors (`session_id` + `message_id` for `get_session_window`,
 *   `day` + `daily_message_id` for `get_daily_window`);
 * - `remember`, `update_memory` (compare-and-set on `version`: `memory_conflict` when the fact
 *   changed meanwhile), `forget`: the long-term facts;
 * - `list_sessions`, `get_session_window`, `get_daily_window`: sessions and the rows around an
 *   anchor.
 *
 * Each answers a JSON object (the HTTP API's shapes, recall-view.ts). The input schemas tell a
 * model what to send; the checking is recall's own, so a bad argument fails with the same
 * `InvalidInputError` code as a library call would (`invalid_query`, `invalid_id`,
 * `invalid_day`, `invalid_filter`, `invalid_message`, ...).
 */
import type { JsonObject } from '../message.ts';
import * as view from './recall-view.ts';
import type { MemoryRecall } from './recall-view.ts';

/** One memory tool: what a model is told about it, and the call into recall. */
export interface MemoryToolDef {
  /** Its name, as the model calls it (`search_memory`, ...). */
  name: string;
  /** A short human title. */
  title: string;
  /** What it does, for the model. */
  description: string;
  /** JSON Schema (draft 7 subset) of the arguments object. */
  inputSchema: {
    /** Always `'object'`. */
    type: 'object';
    /** Each argument's schema, by name. */
    properties: Record<string, JsonObject>;
    /** The arguments it must have. */
    required: string[];
  };
  /** Reads only (MCP's `readOnlyHint`). */
  readOnly: boolean;
  /**
   * Calls recall for `userId` with `args` as sent (recall checks them) and resolves with the JSON
   * answer.
   *
   * @throws recall's `MnemoError`s (`InvalidInputError` and its code, `memory_conflict`, ...).
   */
  run(recall: MemoryRecall, userId: string, args: Readonly<Record<string, unknown>>): Promise<JsonObject>;
}

const str = (description: string): JsonObject => ({ type: 'string', description });
const int = (description: string): JsonObject => ({ type: 'integer', description });
const day = (description: string): JsonObject => ({ type: 'string', description: `${description} (YYYY-MM-DD)`, pattern: '^\\d{4}-\\d{2}-\\d{2}$' });
const object = (properties: Record<string, JsonObject>, required: string[] = []) => ({ type: 'object' as const, properties, required });

/** The memory tools, in the order they are listed (see above). */
export const MEMORY_TOOLS: readonly MemoryToolDef[] = [
  {
    name: 'search_memory',
    title: 'Search memory',
    description:
      'Ranked search over every past conversation, day and long-term fact of the user, best first. ' +
      'Each hit has anchors: use get_session_window (session_id, message_id) or get_daily_window (day, daily_message_id) to read around it.',
    inputSchema: object(
      {
        query: str('What to look for, in words'),
        limit: int('Hits at most, 1-100 (default 10)'),
        session_id: str('Only this session'),
        day: day('Only this day'),
        from: day('From this day on'),
        to: day('Up to this day'),
        roles: { type: 'array', items: { type: 'string' }, description: 'Only rows of these roles (user, assistant, memory)' },
        tool: str('Only rows whose reply called this tool'),
      },
      ['query'],
    ),
    readOnly: true,
    run: view.searchMemory,
  },
  {
    name: 'remember',
    title: 'Remember a fact',
    description:
      'Stores one long-term fact about the user. With a key (e.g. "home_city"), it replaces the fact stored under that key; a near-duplicate of a current fact is not stored twice.',
    inputSchema: object({ text: str('The fact, one short sentence'), key: str('A stable name for what the fact is about') }, ['text']),
    readOnly: false,
    run: view.rememberFact,
  },
  {
    name: 'update_memory',
    title: 'Update a fact',
    description:
      'Changes a current long-term fact. Give the version you read (from search or the facts resource): if the fact changed since, nothing is written and the error is memory_conflict.',
    inputSchema: object({ id: str('The fact id, e.g. m12'), text: str('The new text'), version: int('The version you read') }, ['id', 'text', 'version']),
    readOnly: false,
    run: view.updateFact,
  },
  {
    name: 'forget',
    title: 'Forget a fact',
    description: 'Ends a current long-term fact (it stays in the history). With version, only if it is still that version.',
    inputSchema: object({ id: str('The fact id, e.g. m12'), version: int('Only if the fact is still at this version') }, ['id']),
    readOnly: false,
    run: view.forgetFact,
  },
  {
    name: 'list_sessions',
    title: 'List sessions',
    description: 'The user\'s conversations, most recently active first, a page at a time.',
    inputSchema: object({ limit: int('Sessions per page, 1-500 (default 100)'), cursor: str('next_cursor of the previous page') }),
    readOnly: true,
    run: view.listSessions,
  },
  {
    name: 'get_session_window',
    title: 'Read a session around a message',
    description: 'The rows of a session around a message_id anchor (from search_memory), in order.',
    inputSchema: object(
      { session_id: str('The session'), message_id: int('The anchor'), before: int('Rows before it (default 0)'), after: int('Rows after it (default 0)') },
      ['session_id', 'message_id'],
    ),
    readOnly: true,
    run: view.sessionWindow,
  },
  {
    name: 'get_daily_window',
    title: 'Read a day around a message',
    description: 'The rows of one day, across sessions, around a daily_message_id anchor (from search_memory), in order.',
    inputSchema: object(
      { message_id: int('The daily anchor (daily_message_id)'), day: day('The day of the anchor (default today)'), before: int('Rows before it (default 0)'), after: int('Rows after it (default 0)') },
      ['message_id'],
    ),
    readOnly: true,
    run: view.dailyWindow,
  },
];
