import type { DailyRow, SessionRow } from '../rows/row-types.ts';

/**
 * How the memory tools print rows: `#{message_id} {ts} | {role}: {content}`, one per line.
 * Daily hits that may come from several days also name their day (`#45 [2026-04-08] ...`),
 * since daily anchors restart every day and `get_daily_window` needs that day.
 */
export function formatRow(row: SessionRow): string {
  return `#${row.messageId} ${row.ts} | ${row.role}: ${row.content}`;
}

export function formatDailyRow(row: DailyRow): string {
  return `#${row.messageId} [${row.day}] ${row.ts} | ${row.role}: ${row.content}`;
}

export function formatRows(rows: readonly SessionRow[]): string {
  return rows.map(formatRow).join('\n');
}
