import { InvalidInputError } from '../../errors.ts';

/**
 * The demo keys its daily files and stamps its rows with the server's local wall time
 * (`YYYY-MM-DD`, `YYYY-MM-DDTHH:MM:SS`, no offset). Here the instant comes from an injectable
 * wall clock (epoch milliseconds) and the wall time from an IANA time zone (default: the system's),
 * so the daily view is deterministic under test.
 */
export interface LocalTime {
  /** `YYYY-MM-DDTHH:MM:SS` in the zone. */
  readonly ts: string;
  /** `YYYY-MM-DD` in the zone. */
  readonly day: string;
}

export function systemTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone;
}

/**
 * The system zone's wall time, resolved on first use: a process's first `Intl.DateTimeFormat`
 * costs ~20 ms, which should not sit on the runtime's start.
 */
export function systemLocalTime(): (epochMs: number) => LocalTime {
  let local: ((epochMs: number) => LocalTime) | undefined;
  return (epochMs) => (local ??= localTimeIn(systemTimeZone()))(epochMs);
}

/** Returns a function mapping an instant to its local wall time; refuses an unknown zone. */
export function localTimeIn(timeZone: string): (epochMs: number) => LocalTime {
  let format: Intl.DateTimeFormat;
  try {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
    });
  } catch (cause) {
    throw new InvalidInputError('invalid_option', `unknown time zone ${JSON.stringify(timeZone)}`, {
      field: 'timeZone',
      cause: String(cause),
    });
  }
  // The wall time has a resolution of a second, and many rows of a second share it:
  // `formatToParts` (~15 µs) runs once per second of the clock, not once per row.
  let second = Number.NaN;
  let last: LocalTime = { ts: '', day: '' };
  return (epochMs) => {
    const at = Math.floor(epochMs / 1000);
    if (at === second) return last;
    const parts: Record<string, string> = {};
    for (const p of format.formatToParts(new Date(epochMs))) parts[p.type] = p.value;
    const year = (parts['year'] ?? '').padStart(4, '0');
    const day = `${year}-${parts['month']}-${parts['day']}`;
    second = at;
    last = { day, ts: `${day}T${parts['hour']}:${parts['minute']}:${parts['second']}` };
    return last;
  };
}
