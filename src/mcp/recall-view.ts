/**
 * The ONE place where the MCP server (src/mcp/) and the AI SDK entry (src/ai-sdk/) touch the
 * recall API: which methods they call and how they read what those return. Everything else in
 * both goes through the functions here, so a change of recall's names or shapes is adapted in
 * this file alone.
 *
 * What goes out is plain JSON in the HTTP API's own terms (snake_case, absent fields `null`:
 * server/api-routes.ts), so a row, a hit or a fact reads the same over HTTP, MCP and the AI SDK
 * tools. Nothing here validates: every argument is handed to recall as given, and recall's own
 * rules refuse it (`InvalidInputError` and its code).
 */
import type { Recall } from '../recall/recall-api.ts';
import { dailyRowBody, factBody, factWriteBody, rowBody, searchBody, sessionBody } from '../recall/demo-shapes.ts';
import type { SearchInput } from '../recall/queries/ranked-search.ts';
import type { RecordTurnInput, RecordTurnResult } from '../recall/chat/record-turn.ts';
import type { JsonObject } from '../message.ts';

/** The part of the recall API that MCP and the AI SDK entry use (a `runtime.recall` has it all). */
export type MemoryRecall = Pick<
  Recall,
  | 'search'
  | 'remember'
  | 'updateFact'
  | 'forgetFact'
  | 'listFacts'
  | 'rankFacts'
  | 'listSessionsPage'
  | 'sessionMessages'
  | 'sessionMessagesPage'
  | 'sessionWindow'
  | 'dailyWindow'
  | 'recordTurn'
>;

type Args = Readonly<Record<string, unknown>>;

// ---- calls -----------------------------------------------------------------------------------

/** Ranked recall (`recall.search`); the filters as the HTTP API's `/api/search` names them. */
export async function searchMemory(recall: MemoryRecall, userId: string, args: Args): Promise<JsonObject> {
  const input: Record<string, unknown> = { userId, query: args['query'] };
  for (const [from, to] of [['limit', 'limit'], ['session_id', 'sessionId'], ['day', 'day'], ['from', 'from'], ['to', 'to'], ['roles', 'roles'], ['tool', 'tool']] as const) {
    if (args[from] !== undefined) input[to] = args[from];
  }
  return searchBody(await recall.search(input as unknown as SearchInput)) as unknown as JsonObject;
}

export async function rememberFact(recall: MemoryRecall, userId: string, args: Args): Promise<JsonObject> {
  const fact = { text: args['text'], ...(args['key'] === undefined ? {} : { key: args['key'] }) } as { text: string; key?: string };
  return factWriteBody(await recall.remember(userId, fact)) as unknown as JsonObject;
}

/** Compare-and-set: `version` must be the entry's current one, else `memory_conflict`. */
export async function updateFact(recall: MemoryRecall, userId: string, args: Args): Promise<JsonObject> {
  return factWriteBody(await recall.updateFact(userId, args['id'] as string, { text: args['text'] as string, version: args['version'] as number })) as unknown as JsonObject;
}

export async function forgetFact(recall: MemoryRecall, userId: string, args: Args): Promise<JsonObject> {
  const options = args['version'] === undefined ? undefined : { version: args['version'] as number };
  return { item: factBody(await recall.forgetFact(userId, args['id'] as string, options)) as unknown as JsonObject };
}

export async function listSessions(recall: MemoryRecall, userId: string, args: Args): Promise<JsonObject> {
  const page: { limit?: number; cursor?: string } = {};
  if (args['limit'] !== undefined) page.limit = args['limit'] as number;
  if (args['cursor'] !== undefined) page.cursor = args['cursor'] as string;
  const { items, nextCursor } = await recall.listSessionsPage(userId, page);
  return { items: items.map(sessionBody), next_cursor: nextCursor };
}

export async function sessionWindow(recall: MemoryRecall, userId: string, args: Args): Promise<JsonObject> {
  const rows = await recall.sessionWindow({
    userId,
    sessionId: args['session_id'] as string,
    messageId: args['message_id'] as number,
    ...(args['before'] === undefined ? {} : { before: args['before'] as number }),
    ...(args['after'] === undefined ? {} : { after: args['after'] as number }),
  });
  return { items: rows.map(rowBody) as unknown as JsonObject[] };
}

export async function dailyWindow(recall: MemoryRecall, userId: string, args: Args): Promise<JsonObject> {
  const rows = await recall.dailyWindow({
    userId,
    messageId: args['message_id'] as number,
    ...(args['before'] === undefined ? {} : { before: args['before'] as number }),
    ...(args['after'] === undefined ? {} : { after: args['after'] as number }),
    ...(args['day'] === undefined ? {} : { day: args['day'] as string }),
  });
  return { items: rows.map(dailyRowBody) as unknown as JsonObject[] };
}

/** The user's current long-term facts. */
export async function currentFacts(recall: MemoryRecall, userId: string): Promise<JsonObject[]> {
  return (await recall.listFacts(userId)).map(factBody) as unknown as JsonObject[];
}

/** A session's whole transcript (`[]` when unknown). */
export async function sessionTranscript(recall: MemoryRecall, userId: string, sessionId: string): Promise<JsonObject[]> {
  return (await recall.sessionMessages(userId, sessionId)).map(rowBody) as unknown as JsonObject[];
}

/** The user's newest sessions, at most `limit`. */
export async function newestSessions(recall: MemoryRecall, userId: string, limit: number): Promise<{ sessionId: string; title: string }[]> {
  return (await recall.listSessionsPage(userId, { limit })).items.map((s) => ({ sessionId: s.sessionId, title: s.title }));
}

// ---- what a turn is given (the AI SDK middleware) --------------------------------------------

/** A row of the `[SESSION]` window, with whether it belongs to a failed turn. */
export interface WindowRow {
  role: string;
  content: string;
  failed: boolean;
}

/** The session's newest `rows` rows, chronological. */
export async function recentRows(recall: MemoryRecall, userId: string, sessionId: string, rows: number): Promise<WindowRow[]> {
  const page = await recall.sessionMessagesPage(userId, sessionId, { limit: rows });
  return page.rows.map((r) => ({ role: r.role, content: r.content, failed: r.error !== undefined }));
}

/** The texts of the current facts most relevant to `query`, within recall's token budget. */
export async function rankedFactTexts(recall: MemoryRecall, userId: string, query: string): Promise<string[]> {
  return (await recall.rankFacts(userId, query)).map((r) => r.entry.text);
}

/** Ranked recall for a turn's context: one line per hit, with its anchor. */
export async function recallLines(recall: MemoryRecall, userId: string, query: string, limit: number): Promise<string[]> {
  const { items } = await recall.search({ userId, query, limit });
  return items.map((h) => {
    const where = h.source === 'session' ? `session ${h.sessionId ?? ''} #${h.messageId}` : h.source === 'daily' ? `daily #${h.messageId}` : `long-term line ${h.messageId}`;
    return `[${h.day}] ${where} ${h.role}: ${h.snippet}`;
  });
}

export type { RecordTurnInput };

/** Stores a turn whose reply the caller's model produced. */
export async function recordTurn(recall: MemoryRecall, input: RecordTurnInput): Promise<Pick<RecordTurnResult, 'title'>> {
  return recall.recordTurn(input);
}
