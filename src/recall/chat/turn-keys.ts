import { createHash } from 'node:crypto';
import { IDEMPOTENCY_WINDOW_MS } from '../../memory/contract/idempotency.ts';
import type { RecallDbs, TurnKeyValue } from '../store/recall-dbs.ts';
import { HIGH } from '../store/recall-dbs.ts';

/**
 * Exactly-once chat turns: `chat({..., idempotencyKey})`. The key guards the whole turn:
 *
 * - while a turn with the key runs in this process, a retry awaits the same result (no second
 *   model call): `RunningTurns`, by `[user, session, key]`;
 * - once it answered, its result is kept under the key (`recall.turn-keys`, written in the
 *   commit of the turn's daily and log rows) and a retry gets it back, with the session's
 *   current title, for `IDEMPOTENCY_WINDOW_MS` (24 h); deleting the session forgets its keys;
 * - the turn's two session rows are appended with idempotency keys derived from it, so a retry
 *   after a crash mid-turn stores neither twice (a reply row stored before the crash is
 *   answered from the store, though the model may be asked again).
 *
 * A failed turn keeps nothing under its key: a retry runs the turn again.
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

/** The stored answer of a turn under `key`, if still within the window. */
export function storedTurn(dbs: RecallDbs, userId: string, sessionId: string, key: string, now: number): TurnKeyValue['result'] | undefined {
  const stored = dbs.turnKeys.get([userId, sessionId, key]);
  return stored !== undefined && stored.at > now - IDEMPOTENCY_WINDOW_MS ? stored.result : undefined;
}

/** Inside a write transaction. */
export function putTurnKey(dbs: RecallDbs, userId: string, sessionId: string, key: string, value: TurnKeyValue): void {
  dbs.turnKeys.put([userId, sessionId, key], value);
}

/** Inside a write transaction: the session is deleted. */
export function removeSessionTurnKeys(dbs: RecallDbs, userId: string, sessionId: string): void {
  const keys = [...dbs.turnKeys.getKeys({ start: [userId, sessionId], end: [userId, sessionId, HIGH] })];
  for (const key of keys) dbs.turnKeys.remove(key);
}

/** The MessageLog keys of a turn's user and reply rows (bounded length, whatever the turn key). */
export function rowKeys(key: string): { user: string; reply: string } {
  const digest = createHash('sha256').update(key).digest('hex').slice(0, 40);
  return { user: `turn.user.${digest}`, reply: `turn.reply.${digest}` };
}
