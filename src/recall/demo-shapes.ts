import type { FactEntry, FactWrite } from './records/fact-entry.ts';
import type { ExtractionStatus } from './jobs/extraction-worker.ts';
import type { SearchResult } from './queries/search-result.ts';
import type { DailyRow, SessionRow } from './rows/row-types.ts';
import type { SessionSummary } from './rows/session-list.ts';
import type { SummaryRecord } from '../provider/summary-record.ts';

/**
 * The one place where recall's camelCase records take the Agent Memory Demo's snake_case shapes
 * (its `/api` and its JSON files) for what leaves the process: the HTTP API's bodies, the MCP
 * tools' answers, the AI SDK tools' results. Exactly the Demo's fields, in its order, nothing
 * internal; everything new keeps the same casing, so a row, a hit or a fact reads the same over
 * HTTP, MCP and the AI SDK.
 */
export interface RowBody {
  /** Local wall time `YYYY-MM-DDTHH:MM:SS`. */
  ts: string;
  /** `user` or `assistant`. */
  role: string;
  /** The text. */
  content: string;
  /** The row's anchor (in its session, or in its day for a daily row). */
  message_id: number;
  /** The reply's tool calls. */
  tool_calls: {
    /** The tool's name. */
    name: string;
    /** Its arguments, as Python's `json.dumps` prints them. */
    input: string;
    /** Its output. */
    output: string;
  }[];
  /** Set on a failed turn's reply row. */
  error?: {
    /** The error's stable code. */
    code: string;
    /** Mnemo's own sentence. */
    message: string;
  };
}

/** A daily row as the API sends it: a `RowBody` with its day and session. */
export interface DailyRowBody extends RowBody {
  /** `YYYY-MM-DD`. */
  day: string;
  /** The session that wrote it; `null` for an imported row that named none. */
  session_id: string | null;
}

export function sessionBody(s: SessionSummary): { session_id: string; title: string; updated_at: string } {
  return { session_id: s.sessionId, title: s.title, updated_at: s.updatedAt };
}

/** Exactly the Demo's row fields (plus `error` on a failed turn's row). */
export function rowBody(row: SessionRow): RowBody {
  const body: RowBody = {
    ts: row.ts,
    role: row.role,
    content: row.content,
    message_id: row.messageId,
    tool_calls: row.toolCalls.map(({ name, input, output }) => ({ name, input, output })),
  };
  if (row.error) body.error = { code: row.error.code, message: row.error.message };
  return body;
}

/** A rolling summary: its fields are single words, the same in either casing. */
export function summaryBody(s: SummaryRecord): SummaryRecord {
  return { id: s.id, text: s.text, from: s.from, to: s.to, model: s.model, at: s.at, previous: s.previous, method: s.method };
}

export function dailyRowBody(row: DailyRow): DailyRowBody {
  return { ...rowBody(row), day: row.day, session_id: row.sessionId };
}

export function searchBody(result: SearchResult) {
  return {
    ranking: result.ranking,
    pending_embeddings: result.pendingEmbeddings,
    ...(result.embeddingsError === undefined ? {} : { embeddings_error: result.embeddingsError }),
    items: result.items.map((h) => ({
      session_id: h.sessionId,
      message_id: h.messageId,
      day: h.day,
      score: h.score,
      snippet: h.snippet,
      source: h.source,
      role: h.role,
      ts: h.ts,
      ...(h.dailyMessageId === undefined ? {} : { daily_message_id: h.dailyMessageId }),
    })),
  };
}

/** A fact, every field present (absent ones `null`). */
export function factBody(e: FactEntry) {
  return {
    id: e.id,
    text: e.text,
    key: e.key ?? null,
    tags: [...e.tags],
    source: { via: e.source.via, session_id: e.source.sessionId ?? null, message_ids: e.source.messageIds ?? [] },
    created_at: e.createdAt,
    valid_from: e.validFrom,
    valid_to: e.validTo ?? null,
    superseded_by: e.supersededBy ?? null,
    supersedes: e.supersedes ?? null,
    version: e.version,
    verdict: e.verdict ? { verdict: e.verdict.verdict, target: e.verdict.target ?? null, by: e.verdict.by, judge_error: e.verdict.judgeError ?? null } : null,
  };
}

/** A fact write's answer: `added`, `duplicate`, ... and the entry. */
export function factWriteBody(w: FactWrite) {
  return { status: w.status, item: factBody(w.entry) };
}

/** `/fact-extraction`: the counts, and the dead jobs (user and session ids) for the admin alone. */
export function extractionBody(status: ExtractionStatus, withJobs: boolean) {
  const counts = { pending: status.pending, retrying: status.retrying, dead: status.dead };
  if (!withJobs) return counts;
  return {
    ...counts,
    dead_jobs: status.deadJobs.map((j) => ({
      user_id: j.userId,
      session_id: j.sessionId,
      reply_id: j.replyId,
      message_ids: j.messageIds,
      attempts: j.attempts,
      last_error: j.lastError,
      queued_at: j.queuedAt,
      dead_at: j.deadAt,
    })),
  };
}
