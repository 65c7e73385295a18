import type { DailyRecord } from '../records/records.ts';
import type { DailyRow } from './row-types.ts';

/** A stored daily row as the API shows it. */
export function toDailyRow(record: DailyRecord): DailyRow {
  const row: DailyRow = {
    ts: record.ts,
    role: record.role,
    content: record.content,
    messageId: record.id,
    toolCalls: record.toolCalls ?? [],
    day: record.day,
    sessionId: record.sessionId,
  };
  if (record.error) row.error = record.error;
  return row;
}
