import { IDEMPOTENCY_WINDOW_MS } from '../../memory/contract/idempotency.ts';
import type { TurnAnswer, TurnKeyRecord } from '../records/records.ts';

/** node:crypto loads on first use: it is ~25 ms of a cold import (docs/performance-history.md). */
const crypto = () => process.getBuiltinModule('node:crypto');

export type { TurnAnswer };

/**
 * Exactly-once chat turns: `chat({..., idempotencyKey})`. The key guards the whole turn:
 *
 * - while a turn with the key runs in this process, a retry awaits the same result (no second
 *   model call): `RunningTurns`, by `[user, session, key]`;
 * - once it answered, its result is kept under the key (the store's `turnKey`, written in the
 *   commit of the turn's reply) and a retry gets it back, with the session's
 *   current title, for `IDEMPOTENCY_WINDOW_MS` (24 h); deleting the session forgets its keys;
 * - the turn's two session rows are appended with idempotency keys derived from it, so a retry
 *   after a crash mid-turn stores neither twice (a reply row stored before the crash is
 *   answered from the store, though the model may be asked again).
 *
 * A failed attempt keeps no answer under its key: a retry runs the turn again, as a new attempt.
 * The failed attempt stays in the session as any failed turn does (its user row, then its error
 * row: later turns leave both out of their context) and the retry stores the user's message
 * again, then the reply, so a reply always follows the message it answers:
 * `[user, error, user, reply]`, never `[user, error, reply]`. The attempt number is kept under
 * the key (`failedAttempts`, in the commit of the error row) and each attempt's rows get keys of
 * their own (`rowKeys(key, attempt)`), so a crash during the retry still stores neither twice.
 */
export class RunningTurns<R> {
  private readonly running = new Map<string, Promise<R>>();

  /** `run()`, unless a turn under the same key is running: then its outcome. */
  once(userId: string, sessionId: string, key: string, run: () => Promise<R>): Promise<R> {
    const id = JSON.stringify([userId, sessionId, key]);
    const current = this.running.get(id);
    if (current !== undefined) return current;
    const turn = run().finally(() => this.running.delete(id));
    this.running.set(id, turn);
    return turn;
  }
}

/** What is kept under a key within the window: the turn's answer, or how many attempts failed (0: none kept). */
export function storedTurn(stored: TurnKeyRecord | undefined, now: number): { answer: TurnAnswer } | { failedAttempts: number } {
  if (stored === undefined || stored.at <= now - IDEMPOTENCY_WINDOW_MS) return { failedAttempts: 0 };
  return 'result' in stored ? { answer: stored.result } : { failedAttempts: stored.failedAttempts };
}

/** The MessageLog keys of the user and reply rows of a turn's attempt (bounded length, whatever the turn key). */
export function rowKeys(key: string, attempt = 0): { user: string; reply: string } {
  const digest = crypto().createHash('sha256').update(key).digest('hex').slice(0, 40);
  const suffix = attempt === 0 ? '' : `.${attempt}`;
  return { user: `turn.user.${digest}${suffix}`, reply: `turn.reply.${digest}${suffix}` };
}
