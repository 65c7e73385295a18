/**
 * Chat turns running at once, per user (`/api/chat` and `/api/chat/stream` alike): one more than
 * `max` is refused at once with 429 `too_many_turns`, before any model call. A slot is held
 * until the turn has answered (a stream: until it ends), so a user cannot pile up model calls
 * by sending turns without waiting for their answers.
 */
import { HttpError } from './server-errors.ts';

export interface TurnSlots {
  /** Takes one of the user's slots; the function gives it back (once). */
  take(userId: string): () => void;
}

export function turnSlots(max: number): TurnSlots {
  const running = new Map<string, number>();
  return {
    take(userId) {
      const now = running.get(userId) ?? 0;
      if (now >= max) {
        throw new HttpError(429, `this user already has ${max} chat turns running, the most allowed at once; wait for one to answer`, 'too_many_turns');
      }
      running.set(userId, now + 1);
      let given = false;
      return () => {
        if (given) return;
        given = true;
        const left = (running.get(userId) ?? 1) - 1;
        if (left === 0) running.delete(userId);
        else running.set(userId, left);
      };
    },
  };
}
