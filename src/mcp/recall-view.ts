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
import type { Recall } from '../recall/recall.ts';
import type { DailyRow, MemoryRow } from '../recall/store/memory-row.ts';
import type { FactEntry, FactWrite } from '../recall/facts/fact-entry.ts';
import type { SearchInput } from '../recall/search/ranked-search.ts';
import type { RecordTurnInput, RecordTurnResult } from '../recall/chat/record-turn.ts';
import type { JsonObject } from '../message.ts';

/** The part of the recall API that MCP and the AI SDK entry use (a `runtime.recall` has it all). */
export type MemoryRecall = Pick<
  Recall,
  | 'search'
  | 'remember'
  | 'updateMemory'
  | 'forgetMemory'
  | 'listMemory'
  | 'rankMemory'
  | 'listSessionsPage'
  | 'getSessionMessages'
  | 'sessionRowsPage'
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
  const hits = await recall.search(input as unknown as SearchInput);
  return {
    ranking: hits.ranking,
    pending_embeddings: hits.pendingEmbeddings,
    ...(hits.embeddingsError === undefined ? {} : { embeddings_error: hits.embeddingsError }),
    items: hits.map((h) => ({
      source: h.source,
      session_id: h.sessionId,
      message_id: h.messageId,
      daily_message_id: h.dailyMessageId ?? null,
      day: h.day,
      role: h.role,
      ts: h.ts,
      score: h.score,
      snippet: h.snippet,
    })),
  };
}

export async function rememberFact(recall: MemoryRecall, userId: string, args: Args): Promise<JsonObject> {
  const fact = { text: args['text'], ...(args['key'] === undefined ? {} : { key: args['key'] }) } as { text: string; key?: string };
  return writeView(await recall.remember(userId, fact));
}

/** Compare-and-set: `version` must be the entry's current one, else `memory_conflict`. */
export async function updateFact(recall: MemoryRecall, userId: string, args: Args): Promise<JsonObject> {
  return writeView(await recall.updateMemory(userId, args['id'] as string, { text: args['text'] as string, version: args['version'] as number }));
}

export async function forgetFact(recall: MemoryRecall, userId: string, args: Args): Promise<JsonObject> {
  const options = args['version'] === undefined ? undefined : { version: args['version'] as number };
  return { item: factView(await recall.forgetMemory(userId, args['id'] as string, options)) };
}

export async function listSessions(recall: MemoryRecall, userId: string, args: Args): Promise<JsonObject> {
  const page: { limit?: number; cursor?: string } = {};
  if (args['limit'] !== undefined) page.limit = args['limit'] as number;
  if (args['cursor'] !== undefined) page.cursor = args['cursor'] as string;
  const { items, nextCursor } = await recall.listSessionsPage(userId, page);
  return { items: items.map((s) => ({ session_id: s.session_id, title: s.title, updated_at: s.updated_at })), next_cursor: nextCursor };
}

export async function sessionWindow(recall: MemoryRecall, userId: string, args: Args): Promise<JsonObject> {
  const rows = await recall.sessionWindow({
    userId,
    sessionId: args['session_id'] as string,
    messageId: args['message_id'] as number,
    ...(args['before'] === undefined ? {} : { before: args['before'] as number }),
    ...(args['after'] === undefined ? {} : { after: args['after'] as number }),
  });
  return { items: rows.map(rowView) };
}

export async function dailyWindow(recall: MemoryRecall, userId: string, args: Args): Promise<JsonObject> {
  const rows = await recall.dailyWindow({
    userId,
    messageId: args['message_id'] as number,
    ...(args['before'] === undefined ? {} : { before: args['before'] as number }),
    ...(args['after'] === undefined ? {} : { after: args['after'] as number }),
    ...(args['day'] === undefined ? {} : { day: args['day'] as string }),
  });
  return { items: rows.map(dailyRowView) };
}

/** The user's current long-term facts. */
export async function currentFacts(recall: MemoryRecall, userId: string): Promise<JsonObject[]> {
  return (await recall.listMemory(userId)).map(factView);
}

/** A session's whole transcript (`[]` when unknown). */
export async function sessionTranscript(recall: MemoryRecall, userId: string, sessionId: string): Promise<JsonObject[]> {
  return (await recall.getSessionMessages(userId, sessionId)).map(rowView);
}

/** The user's newest sessions, at most `limit`. */
export async function newestSessions(recall: MemoryRecall, userId: string, limit: number): Promise<{ sessionId: string; title: string }[]> {
  return (await recall.listSessionsPage(userId, { limit })).items.map((s) => ({ sessionId: s.session_id, title: s.title }));
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
  const page = await recall.sessionRowsPage(userId, sessionId, { limit: rows });
  return page.rows.map((r) => ({ role: r.role, content: r.content, failed: r.error !== undefined }));
}

/** The texts of the current facts most relevant to `query`, within recall's token budget. */
export async function rankedFactTexts(recall: MemoryRecall, userId: string, query: string): Promise<string[]> {
  return (await recall.rankMemory(userId, query)).map((r) => r.entry.text);
}

/** Ranked recall for a turn's context: one line per hit, with its anchor. */
export async function recallLines(recall: MemoryRecall, userId: string, query: string, limit: number): Promise<string[]> {
  const hits = await recall.search({ userId, query, limit });
  return hits.map((h) => {
    const where = h.source === 'session' ? `session ${h.sessionId ?? ''} #${h.messageId}` : h.source === 'daily' ? `daily #${h.messageId}` : `long-term line ${h.messageId}`;
    return `[${h.day}] ${where} ${h.role}: ${h.snippet}`;
  });
}

export type { RecordTurnInput };

/** Stores a turn whose reply the caller's model produced. */
export async function recordTurn(recall: MemoryRecall, input: RecordTurnInput): Promise<Pick<RecordTurnResult, 'title'>> {
  return recall.recordTurn(input);
}

// ---- views -----------------------------------------------------------------------------------

export function rowView(row: MemoryRow): JsonObject {
  return {
    message_id: row.message_id,
    ts: row.ts,
    role: row.role,
    content: row.content,
    tool_calls: row.tool_calls.map(({ name, input, output }) => ({ name, input, output })),
    ...(row.error === undefined ? {} : { error: { code: row.error.code, message: row.error.message } }),
  };
}

export function dailyRowView(row: DailyRow): JsonObject {
  return { ...rowView(row), day: row.day, session_id: row.session_id };
}

export function factView(e: FactEntry): JsonObject {
  return {
    id: e.id,
    text: e.text,
    key: e.key ?? null,
    tags: [...e.tags],
    source: { via: e.source.via, session_id: e.source.session_id ?? null, message_ids: e.source.message_ids ?? [] },
    created_at: e.createdAt,
    valid_from: e.validFrom,
    valid_to: e.validTo ?? null,
    superseded_by: e.supersededBy ?? null,
    supersedes: e.supersedes ?? null,
    version: e.version,
  };
}

function writeView(w: FactWrite): JsonObject {
  return { status: w.status, item: factView(w.entry) };
}
