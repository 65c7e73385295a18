import type { JsonObject, JsonValue, Message, StoredMessage } from '../../message.ts';
import { demoToolCalls } from './demo-tool-calls.ts';
import type { NewDailyRecord } from '../records/records.ts';
import type { RowError, SessionRow } from './row-types.ts';
import { projectToolCalls } from './tool-call-projection.ts';

/**
 * How a session row is stored in the MessageLog, and read back as the demo's row view.
 *
 * One record per row, so a session's rows are its records and their ids are the row anchors,
 * contiguous from 1. A user row is `{role: 'user', content}`; an assistant row is the final
 * reply `{role: 'assistant', content}`, and the turn's tool transcript (the assistant messages
 * carrying `tool_calls`, then the `tool` results, each with its `tool_call_id`, in the order
 * they happened) rides in that record's `meta.transcript`, whence the `{name, input, output}`
 * view is projected (paired by `tool_call_id`). Keeping the transcript inside the row keeps the
 * anchors contiguous and free of tool messages, which the demo never numbered either.
 *
 * `meta.ts` is the demo's local wall time; `meta.message_id` is an imported row's demo id
 * when its session's ids were not 1..n (the anchors then are not the record ids); `meta.error` marks the row recorded for a failed
 * turn; `meta.import` is an imported row as its file held it (content replaced by `null`),
 * kept for a faithful export (its `role` and `meta.tool_calls` win over the stored message's).
 */
export interface SessionRecordMeta extends JsonObject {
  ts: string;
}

export function textContent(message: Message): string {
  if (typeof message.content === 'string') return message.content;
  if (message.content === null) return '';
  return message.content.map((p) => (p.type === 'text' && typeof p['text'] === 'string' ? p['text'] : '')).join('');
}

/** A transcript record: what both the MessageLog (`StoredMessage`) and a raw stored value share. */
export interface TranscriptRecord {
  message_id: number;
  ts: string;
  meta: JsonObject;
  message: Message;
}

/**
 * `shift` is the session's `idShift` (sessions-index.ts): an imported session whose demo ids
 * were not 1..n keeps them in `meta.message_id`, and its later rows are numbered after the
 * highest, `record id + shift`.
 */
export function toSessionRow(record: TranscriptRecord | StoredMessage, shift = 0): SessionRow {
  const meta = record.meta;
  const imported = isObject(meta['import']) ? meta['import'] : undefined;
  const role = imported && typeof imported['role'] === 'string' ? imported['role'] : record.message.role;
  const toolCalls = Array.isArray(meta['transcript'])
    ? projectToolCalls(meta['transcript'] as unknown as Message[])
    : imported && isObject(imported['meta'])
      ? demoToolCalls(imported['meta']['tool_calls'])
      : [];
  const row: SessionRow = {
    ts: typeof meta['ts'] === 'string' ? meta['ts'] : record.ts.slice(0, 19),
    role,
    content: textContent(record.message),
    messageId: typeof meta['message_id'] === 'number' ? meta['message_id'] : record.message_id + shift,
    toolCalls,
  };
  const error = meta['error'];
  if (isObject(error) && typeof error['code'] === 'string' && typeof error['message'] === 'string') {
    row.error = { code: error['code'], message: error['message'] } satisfies RowError;
  }
  return row;
}

/**
 * The daily row a turn writes for a session record: the same text, tool calls and error, on
 * the day of the record's own local `ts`, naming the session and the record's id. (What crash
 * repair writes for a row a killed turn left unmirrored, exactly as its turn would have.)
 */
export function dailyMirrorOf(record: TranscriptRecord | StoredMessage, sessionId: string): NewDailyRecord & { sessionMessageId: number } {
  const row = toSessionRow(record);
  return {
    day: row.ts.slice(0, 10),
    ts: row.ts,
    role: row.role,
    content: row.content,
    sessionId,
    sessionMessageId: record.message_id,
    ...(row.error !== undefined ? { error: row.error } : {}),
    ...(row.toolCalls.length > 0 ? { toolCalls: row.toolCalls } : {}),
  };
}

function isObject(v: JsonValue | undefined): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
