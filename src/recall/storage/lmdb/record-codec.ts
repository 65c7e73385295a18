import type { FactEntry, FactSource } from '../../records/fact-entry.ts';
import type { Job } from '../job-queue.ts';
import type { DailyRecord, LogRecord, LongTermRecord, NewDailyRecord, NewLogRecord, SessionEntry } from '../../records/records.ts';
import type { DailyValue, LogValue, LongTermValue, StoredExtractionJob, StoredFact, StoredSession } from './recall-dbs.ts';

/**
 * The one place where the LMDB adapter maps the records of the port (camelCase, records.ts)
 * to the values earlier versions of Mnemo wrote (the Demo's snake_case field names), and back.
 * Keeping the stored shapes as they were is what lets existing data directories open as they
 * are. Optional fields are written only when present, as before.
 */
export function toDailyRecord(day: string, id: number, v: DailyValue): DailyRecord {
  return {
    day,
    id,
    ts: v.ts,
    role: v.role,
    content: v.content,
    sessionId: v.session_id,
    sessionMessageId: v.session_message_id,
    ...(v.tool_calls === undefined ? {} : { toolCalls: v.tool_calls }),
    ...(v.error === undefined ? {} : { error: v.error }),
    ...(v.import === undefined ? {} : { imported: v.import }),
  };
}

export function fromDailyRecord(r: NewDailyRecord): DailyValue {
  return {
    ts: r.ts,
    role: r.role,
    content: r.content,
    session_id: r.sessionId,
    session_message_id: r.sessionMessageId,
    ...(r.toolCalls === undefined || r.toolCalls.length === 0 ? {} : { tool_calls: r.toolCalls }),
    ...(r.error === undefined ? {} : { error: r.error }),
    ...(r.imported === undefined ? {} : { import: r.imported }),
  };
}

export function toSessionEntry(sessionId: string, v: StoredSession): SessionEntry {
  return {
    sessionId,
    title: v.title,
    updatedAt: v.updated_at,
    order: v.order,
    listed: v.listed,
    ...(v.fork === undefined ? {} : { fork: { sessionId: v.fork.session_id, messageId: v.fork.message_id } }),
    ...(v.demoIds === undefined ? {} : { demoIds: v.demoIds }),
    ...(v.import === undefined ? {} : { imported: v.import }),
  };
}

export function fromSessionEntry(e: SessionEntry): StoredSession {
  return {
    title: e.title,
    updated_at: e.updatedAt,
    order: e.order,
    listed: e.listed,
    ...(e.fork === undefined ? {} : { fork: { session_id: e.fork.sessionId, message_id: e.fork.messageId } }),
    ...(e.demoIds === undefined ? {} : { demoIds: e.demoIds }),
    ...(e.imported === undefined ? {} : { import: e.imported }),
  };
}

export function toLogRecord(v: LogValue): LogRecord {
  return {
    seq: v.seq,
    ts: v.ts,
    sessionId: v.session_id,
    userMessage: v.user_message,
    assistantReply: v.assistant_reply,
    memoryContext: v.memory_context,
    toolCalls: v.tool_calls,
    ...(v.error === undefined ? {} : { error: v.error }),
    ...(v.import === undefined ? {} : { imported: v.import }),
  };
}

export function fromLogRecord(r: NewLogRecord, seq: number): LogValue {
  return {
    ts: r.ts,
    session_id: r.sessionId,
    user_message: r.userMessage,
    assistant_reply: r.assistantReply,
    memory_context: r.memoryContext,
    tool_calls: r.toolCalls,
    ...(r.error === undefined ? {} : { error: r.error }),
    seq,
    ...(r.imported === undefined ? {} : { import: r.imported }),
  };
}

export function toLongTermRecord(version: number, v: LongTermValue): LongTermRecord {
  return { version, content: v.content, ts: v.ts, source: v.source, ...(v.raw === undefined ? {} : { raw: v.raw }) };
}

export function toFactEntry(v: StoredFact): FactEntry {
  const { source, ...rest } = v;
  const s: FactSource = {
    via: source.via,
    ...(source.session_id === undefined ? {} : { sessionId: source.session_id }),
    ...(source.message_ids === undefined ? {} : { messageIds: source.message_ids }),
  };
  return { ...rest, source: s };
}

export function fromFactEntry(e: FactEntry): StoredFact {
  const { source, ...rest } = e;
  return {
    ...rest,
    source: {
      via: source.via,
      ...(source.sessionId === undefined ? {} : { session_id: source.sessionId }),
      ...(source.messageIds === undefined ? {} : { message_ids: source.messageIds }),
    },
  };
}

export function toExtractJob(userId: string, sessionId: string, replyId: number, v: StoredExtractionJob): Job<'extract'> {
  return {
    kind: 'extract',
    userId,
    key: `${sessionId}/${replyId}`,
    payload: { sessionId, replyId, userMessage: v.user_message, assistantReply: v.assistant_reply, messageIds: v.message_ids },
    queuedAt: v.queued_at,
    attempts: v.attempts ?? 0,
    ...(v.last_error === undefined ? {} : { lastError: v.last_error }),
    ...(v.next_at === undefined ? {} : { nextAt: v.next_at }),
  };
}

export function fromExtractJob(job: Pick<Job<'extract'>, 'payload' | 'queuedAt' | 'attempts' | 'lastError' | 'nextAt'>): StoredExtractionJob {
  const p = job.payload;
  return {
    user_message: p.userMessage,
    assistant_reply: p.assistantReply,
    message_ids: p.messageIds,
    queued_at: job.queuedAt,
    ...(job.attempts > 0 ? { attempts: job.attempts } : {}),
    ...(job.lastError === undefined ? {} : { last_error: job.lastError }),
    ...(job.nextAt === undefined ? {} : { next_at: job.nextAt }),
  };
}
