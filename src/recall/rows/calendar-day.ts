/**
 * A day filter is accepted only as `YYYY-MM-DD` naming a real calendar date (the reference's
 * recommendation; Python's `fromisoformat` also took `20260408` or `2026-W15`, which then
 * matched no file). Anything else is "no valid day", which the daily search treats as all days.
 */
export function isCalendarDay(value: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (y < 1 || mo < 1 || mo > 12 || d < 1) return false;
  const date = new Date(Date.UTC(2000, mo - 1, d));
  date.setUTCFullYear(y);
  return date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}
