import { systemClock, type Clock } from './clock.ts';

/**
 * The calendar time records are stamped with (`StoredMessage.ts`): a `Clock` (src/clock.ts)
 * reading the Unix epoch in ms; tests inject a fixed or stepping one for reproducible `ts`.
 */
export type WallClock = Clock;

export const systemWallClock: WallClock = systemClock;

/** ISO 8601 in the process's local time with its numeric offset: `2026-04-08T19:09:28.123+08:00`.
 * Local, so a day boundary in the daily view is the user's day; the offset makes it absolute. */
export function isoWithOffset(epochMs: number): string {
  // Many records of one event turn share a millisecond: format it once.
  if (epochMs === lastFormatted.ms) return lastFormatted.text;
  const text = format(epochMs);
  lastFormatted = { ms: epochMs, text };
  return text;
}

let lastFormatted = { ms: Number.NaN, text: '' };

const p2 = (n: number): string => String(n).padStart(2, '0');

function format(epochMs: number): string {
  const d = new Date(epochMs);
  const offsetMin = -d.getTimezoneOffset();
  const sign = offsetMin >= 0 ? '+' : '-';
  const abs = Math.abs(offsetMin);
  return (
    `${String(d.getFullYear()).padStart(4, '0')}-${p2(d.getMonth() + 1)}-${p2(d.getDate())}` +
    `T${p2(d.getHours())}:${p2(d.getMinutes())}:${p2(d.getSeconds())}.${String(d.getMilliseconds()).padStart(3, '0')}` +
    `${sign}${p2(Math.floor(abs / 60))}:${p2(abs % 60)}`
  );
}
