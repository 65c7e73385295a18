import { randomBytes } from 'node:crypto';

/**
 * Channel versions as Python LangGraph's savers make them: `<counter>.<random>`, the counter
 * zero-padded so that string order is numeric order (LangGraph compares versions with `>`).
 * The random part makes a version name one value even across branches: two forks of one
 * checkpoint both step the counter to n+1, and without it they would write different values
 * under the same (channel, version), which a saver that stores each value once per version
 * (Mnemo, like PostgresSaver) could not tell apart.
 *
 * A numeric `current` (a thread written with LangGraph's default integer versions) counts on
 * from its value.
 */
const COUNTER_DIGITS = 16;

export function nextChannelVersion(current: string | number | undefined): string {
  const counter = current === undefined ? 0 : typeof current === 'number' ? current : Number.parseInt(current.split('.', 1)[0] ?? '0', 10);
  if (!Number.isSafeInteger(counter) || counter < 0) throw new RangeError(`unexpected channel version ${String(current)}`);
  return `${String(counter + 1).padStart(COUNTER_DIGITS, '0')}.${randomBytes(5).toString('hex')}`;
}
